"""An OpenTelemetry span processor that writes a guard log of the tool calls in the spans it sees.

    from nonatomic.integrations.otel import GuardLogSpanProcessor

    tracer_provider.add_span_processor(GuardLogSpanProcessor("guard.jsonl"))

Any instrumentation the trace reader knows works (the traces pack:
OpenInference, OpenLLMetry, OTel GenAI, pydantic-ai); the task is the
span's conversation, else that of a span of its trace seen before, else the
trace.  Replay the log with `nonatomic replay guard.jsonl`.
"""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

from nonatomic.integrations.calls import ToolCallLog
from nonatomic.replay.ingest.conventions import pack, read_call
from nonatomic.replay.ingest.spans import Span as TraceSpan

_STATUS = {"UNSET": "unset", "OK": "ok", "ERROR": "error"}
CONVERSATIONS_KEPT = 10_000


class GuardLogSpanProcessor(SpanProcessor):
    def __init__(self, sink) -> None:
        """`sink`: what `nonatomic.guard.GuardLog` writes to (a path, a logger, a stream, a callable)."""
        self.log = ToolCallLog(sink)
        self._conversations: dict[str, str] = {}

    def on_start(self, span, parent_context=None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is None or span.start_time is None or span.end_time is None:
            return
        trace_id = format(span.context.trace_id, "032x")
        trace_span = TraceSpan(
            line=0, trace=trace_id, span_id=format(span.context.span_id, "016x"),
            parent=format(span.parent.span_id, "016x") if span.parent else "", name=span.name,
            kind=span.kind.name.lower(), start=span.start_time, end=span.end_time,
            attributes={**(span.resource.attributes if span.resource else {}), **dict(span.attributes or {})},
            status=_STATUS.get(span.status.status_code.name, "unset"), status_message=span.status.description or "",
            events=[(event.name, dict(event.attributes or {})) for event in span.events])
        conventions = pack()
        conversation = conventions.conversation_of(trace_span)
        if conversation is not None and len(self._conversations) < CONVERSATIONS_KEPT:
            self._conversations.setdefault(trace_id, conversation)
        convention = conventions.convention_of(trace_span)
        if convention is None:
            return
        task = conversation or self._conversations.get(trace_id, trace_id)
        self.log.record(task, read_call(trace_span, convention, conventions), span.start_time / 1e9,
                        span.end_time / 1e9, trace_id=trace_id, span_id=trace_span.span_id)

    def shutdown(self) -> None:
        self.log.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
