"""An OpenAI Agents SDK tracing processor that writes a guard log of the run's tool calls.

    from agents import add_trace_processor
    from nonatomic.integrations.openai_agents import GuardLogProcessor

    add_trace_processor(GuardLogProcessor("guard.jsonl"))

A function span is a tool call (the `openai-agents` row of the traces pack
says how its fields read, an SDK tool timeout included); the task is the
trace's `group_id` (the conversation), else the trace.  Replay the log with
`nonatomic replay guard.jsonl`.
"""

from __future__ import annotations

from datetime import datetime

from agents.tracing import Span, Trace, TracingProcessor

from nonatomic.integrations.calls import ToolCallLog
from nonatomic.replay.ingest.conventions import pack, read_call
from nonatomic.replay.ingest.spans import Span as TraceSpan


class GuardLogProcessor(TracingProcessor):
    def __init__(self, sink) -> None:
        """`sink`: what `nonatomic.guard.GuardLog` writes to (a path, a logger, a stream, a callable)."""
        self.log = ToolCallLog(sink)
        self._groups: dict[str, str] = {}

    def on_trace_start(self, trace: Trace) -> None:
        exported = trace.export() or {}
        if exported.get("group_id"):
            self._groups[trace.trace_id] = str(exported["group_id"])

    def on_trace_end(self, trace: Trace) -> None:
        self._groups.pop(trace.trace_id, None)

    def on_span_start(self, span: Span) -> None:
        pass

    def on_span_end(self, span: Span) -> None:
        exported = span.export() or {}
        attributes = {f"span_data.{k}": v for k, v in (exported.get("span_data") or {}).items()}
        conventions = pack()
        error = exported.get("error") or {}
        start, end = _seconds(exported.get("started_at")), _seconds(exported.get("ended_at"))
        if start is None or end is None:
            return
        trace_span = TraceSpan(line=0, trace=span.trace_id, span_id=span.span_id, parent=span.parent_id or "",
                               name=str(attributes.get("span_data.name") or ""), kind="", start=None, end=None,
                               attributes=attributes, status="error" if error else "unset",
                               status_message=" ".join(str(v) for v in (error.get("message"), error.get("data")) if v))
        convention = conventions.convention_of(trace_span)
        if convention is None:
            return
        task = self._groups.get(span.trace_id, span.trace_id)
        self.log.record(task, read_call(trace_span, convention, conventions), start, end,
                        trace_id=span.trace_id, span_id=span.span_id)

    def shutdown(self) -> None:
        self.log.close()

    def force_flush(self) -> None:
        pass


def _seconds(text: object) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
