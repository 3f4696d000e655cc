"""OpenTelemetry input (`--input-format otlp`): GenAI tool-execution spans as canonical call events.

The input is an OTLP/JSON trace export as JSON Lines, one `TracesData` object
(`{"resourceSpans": [...]}`) per line, as the Collector's file exporter
writes it.  Only tool-execution spans are read (`gen_ai.operation.name` is
`execute_tool`, or the span is named `execute_tool <tool>`); agent, chat and
other spans are context.

Each tool span becomes a `call` with two events: `phase=start` at its start
time (status `started`) and `phase=end` at its end time, with

- `status`: `ok` unless the span status is ERROR; then `timeout` when
  `error.type` (or the status message) names a timeout or deadline,
  `cancelled` when it names a cancellation, else `error`;
- `code`: `http.response.status_code`, else an `error.type` that is a status code ("503");
- `error`: `error.type`, else the status message;
- `tool`: `gen_ai.tool.name`, else the span name after `execute_tool `;
- `task_id`: the conversation (`gen_ai.conversation.id` of the span, or of
  any span of its trace, usually the agent's root span), else the trace id;
- `attempt`: `http.request.resend_count` + 1 when the span has it, else the
  span's order among its siblings (same parent span) that call the same tool
  with the same arguments (`gen_ai.tool.call.arguments`; without arguments,
  every call of the tool under that parent counts as an attempt of one call);
- `step`: those sibling groups numbered in order of their first start, per task;
- `target`, `idempotency_key`, `owner`: none (GenAI spans have no such attribute).

A mapping file overrides any of `task_id, step, attempt, op, tool, target,
idempotency_key, owner, code, error` with the span (or resource) attribute
to read it from, e.g. `fields: {task_id: session.id, target: app.order_id}`;
its `values` section maps values as for any log.  Times, phases and statuses
come from the span itself and cannot be remapped.

Accounting: a record is one event or one quarantined item.  Every non-blank
line is read: a line that is not a TracesData object is quarantined whole,
a tool span without usable times is quarantined with its line, and a line
without tool spans adds nothing.  So `lines` in the summary counts records
(events + quarantined) for OTLP input.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import duckdb

from nonatomic.replay.ingest import ledger
from nonatomic.replay.ingest.convert import Source
from nonatomic.replay.ingest.database import transaction
from nonatomic.replay.ingest.fields import FIELDS
from nonatomic.replay.ingest.inputs import InputError, LogFile
from nonatomic.replay.ingest.mapping import FieldMapping, MappingError
from nonatomic.replay.ingest.params import Params
from nonatomic.replay.ingest.readers import Reader
from nonatomic.replay.ingest.records import CONVERTED, converted_sql
from nonatomic.replay.ingest.schema import EVENT_ROWS

RECORDS = "nonatomic_otlp_records"
TOOL_OPERATION = "execute_tool"
OVERRIDABLE = ("task_id", "step", "attempt", "op", "tool", "target", "idempotency_key", "owner", "code", "error")
COLUMNS = ("ts", "task_id", "step", "attempt", "op", "phase", "status", "code", "tool", "target",
           "idempotency_key", "owner", "error")
"""Canonical fields an OTLP record carries (stored as `src_<field>`, all text, typed by convert.py)."""

_TIMEOUT = re.compile(r"timeout|timed.?out|deadline", re.IGNORECASE)
_CANCEL = re.compile(r"cancel", re.IGNORECASE)
_NANOS = re.compile(r"[0-9]{1,20}")


@dataclass
class _Span:
    line: int
    trace: str
    span_id: str
    parent: str
    name: str
    start: int
    end: int
    attributes: dict
    status_code: object
    status_message: str | None
    fields: dict = field(default_factory=dict)


class _Bad(Exception):
    """A line or span that cannot be read; the message is the quarantine reason."""


def ingest_file(con, log: LogFile, plan: ledger.Plan, mapping: FieldMapping, max_line_bytes: int) -> tuple[int, int, int]:
    """Ingest one OTLP file (the OTLP counterpart of ingest._ingest_file): (records, events, quarantined)."""
    unsupported = sorted(set(mapping.fields) - set(OVERRIDABLE))
    if unsupported:
        raise MappingError(f"fields {', '.join(unsupported)} cannot be mapped for OTLP input "
                           f"(only {', '.join(OVERRIDABLE)}; times and outcomes come from the span)")
    import pandas as pd  # only OTLP input needs it: the rest of replay streams through DuckDB

    rows = list(_records(log, mapping, max_line_bytes))
    frame = pd.DataFrame(rows, columns=["line", *(f"src_{c}" for c in COLUMNS), "extra", "broken", "raw"], dtype=object)
    try:
        con.register("nonatomic_otlp_frame", frame)
        text = ", ".join(f"CAST({c} AS VARCHAR) AS {c}" for c in frame.columns if c != "line")
        con.execute(f"CREATE OR REPLACE TEMP TABLE {RECORDS} AS "
                    f"SELECT CAST(line AS BIGINT) AS line, {text} FROM nonatomic_otlp_frame")
        params = Params()
        con.execute(converted_sql(_reader(), mapping, params), params.values)
        with transaction(con):
            counts = _load(con, log, plan)
    except duckdb.Error as exc:
        raise InputError(f"{log.path}: cannot read as otlp: {str(exc).splitlines()[0]}") from exc
    finally:
        con.unregister("nonatomic_otlp_frame")
        for table in (CONVERTED, RECORDS):
            con.execute(f"DROP TABLE IF EXISTS {table}")
    return counts


def _reader() -> Reader:
    return Reader(
        relation=RECORDS,
        sources={f: Source(f"src_{f}") if f in COLUMNS else None for f in FIELDS},
        extra="CAST(extra AS JSON)",
        raw="raw",
        blank="false",
        broken="broken",
        header_lines=0,
        has_rejects=False,
    )


def _load(con, log: LogFile, plan: ledger.Plan) -> tuple[int, int, int]:
    # Converted rows and records share their order (both tables are filled by one ordered scan).
    joined = f"{CONVERTED} s JOIN {RECORDS} r ON r.rowid = s.rowid WHERE r.line > $after"
    window = {"file": plan.file, "after": plan.after_line}
    stored = ledger.begin(con, log, plan)
    base = con.execute(f"SELECT coalesce(max(event_id), 0) FROM {EVENT_ROWS}").fetchone()[0]
    events = con.execute(
        f"INSERT INTO {EVENT_ROWS} SELECT $base + s.rowid + 1, $file_id, r.line, "
        f"{', '.join('s.' + f for f in FIELDS)}, s.extra FROM {joined} AND s.reason IS NULL",
        {"after": plan.after_line, "base": base, "file_id": stored},
    ).fetchone()[0]
    quarantined = con.execute(
        f"INSERT INTO quarantine SELECT $file, r.line, s.reason, s.raw FROM {joined} AND s.reason IS NOT NULL",
        window,
    ).fetchone()[0]
    last_line = con.execute(f"SELECT coalesce(max(line), 0) FROM {RECORDS}").fetchone()[0]
    records = events + quarantined
    if plan.replace_line is not None:
        records -= 1  # the cut-off line's record was counted by the previous ingest
    ledger.record(con, log, plan, records, last_line)
    return records, events, quarantined


def _records(log: LogFile, mapping: FieldMapping, max_line_bytes: int):
    """Rows of the records table, in file order: events of tool spans, and quarantined items."""
    spans: list[_Span | tuple[int, str, str]] = []
    conversations: dict[str, str] = {}
    override = mapping.fields.get("task_id")
    for number, raw in _lines(log):
        try:
            if len(raw) > max_line_bytes:
                raise _Bad(f"line longer than {int(max_line_bytes)} bytes")
            text = _decode(raw)
            found = list(_spans(number, text))  # the whole line first: a malformed one adds no span
        except (_Bad, RecursionError) as bad:
            # json parses (and renders) nested values recursively: a record nested past the
            # interpreter's limit is a bad record, not a crash.
            reason = str(bad) if isinstance(bad, _Bad) else "nested too deeply to read"
            if reason == "invalid JSON" and not raw.endswith(b"\n"):
                reason = "truncated last line: invalid JSON"
            spans.append((number, reason, raw.decode("utf-8", "replace").rstrip("\r\n")))
            continue
        spans.extend((number, str(s), text) if isinstance(s, _Bad) else s for s in found)
    for span in spans:
        if isinstance(span, _Span):
            conversation = span.attributes.get(override or "gen_ai.conversation.id")
            if conversation is not None:
                conversations.setdefault(span.trace, str(conversation))
    tool_spans = [s for s in spans if isinstance(s, _Span) and _is_tool(s)]
    _number(tool_spans, conversations, mapping)
    for span in spans:
        if isinstance(span, tuple):
            number, reason, text = span
            yield (number, *([None] * len(COLUMNS)), None, reason, text)
        elif _is_tool(span):
            yield from _events(span)


def _lines(log: LogFile):
    if log.compression == "zstd":
        raise InputError(f"{log.path}: zstd-compressed OTLP input is not supported; decompress it first")
    opener = gzip.open if log.compression == "gzip" else open
    try:
        with opener(log.location, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if raw.strip():
                    yield number, raw
    except OSError as exc:
        raise InputError(f"{log.path}: cannot read: {exc}") from exc


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise _Bad("bytes that are not UTF-8") from exc


def _spans(number: int, text: str):
    """Every span of one TracesData line; a tool span that cannot be used comes as a _Bad."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise _Bad("invalid JSON") from exc
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
        raise _Bad("not an OTLP TracesData object (no resourceSpans list)")
    for resource_spans in document["resourceSpans"]:
        resource = _attributes(_get(_get(resource_spans, "resource", {}), "attributes", []))
        for scope_spans in _get(resource_spans, "scopeSpans", []):
            for raw in _get(scope_spans, "spans", []):
                yield _span(number, raw, resource)


def _span(number: int, raw: object, resource: dict) -> _Span | _Bad:
    if not isinstance(raw, dict):
        return _Bad("a span is not a JSON object")
    attributes = {**resource, **_attributes(raw.get("attributes") or [])}
    status = raw.get("status") or {}
    span = _Span(line=number, trace=str(raw.get("traceId") or ""), span_id=str(raw.get("spanId") or ""),
                 parent=str(raw.get("parentSpanId") or ""), name=str(raw.get("name") or ""), start=0, end=0,
                 attributes=attributes, status_code=status.get("code") if isinstance(status, dict) else None,
                 status_message=status.get("message") if isinstance(status, dict) else None)
    if not _is_tool(span):
        return span
    for side in ("start", "end"):
        value = raw.get(f"{side}TimeUnixNano")
        if not (isinstance(value, int) or (isinstance(value, str) and _NANOS.fullmatch(value))) or int(value) <= 0:
            return _Bad(f"tool span {span.span_id or '?'}: {side}TimeUnixNano missing or not a time: {value!r:.40}")
        setattr(span, side, int(value))
    if span.end < span.start:
        return _Bad(f"tool span {span.span_id or '?'}: ends before it starts")
    return span


def _get(container: object, key: str, default):
    value = container.get(key, default) if isinstance(container, dict) else None
    if value is None or not isinstance(value, type(default)):
        raise _Bad(f"malformed TracesData: {key} is not a {type(default).__name__}")
    return value


def _attributes(pairs: object) -> dict:
    """OTLP KeyValue list -> {key: python value} (arrays and maps as JSON text)."""
    if not isinstance(pairs, list):
        raise _Bad("malformed TracesData: attributes is not a list")
    out = {}
    for pair in pairs:
        if isinstance(pair, dict) and isinstance(pair.get("key"), str):
            out[pair["key"]] = _value(pair.get("value"))
    return out


def _value(any_value: object):
    if not isinstance(any_value, dict) or not any_value:
        return None
    kind, value = next(iter(any_value.items()))
    if kind == "intValue":
        return int(value) if _NANOS.fullmatch(str(value).lstrip("-")) else value
    if kind in ("arrayValue", "kvlistValue"):
        return json.dumps(value, sort_keys=True)
    return value


def _is_tool(span: _Span) -> bool:
    return span.attributes.get("gen_ai.operation.name") == TOOL_OPERATION or span.name.startswith(TOOL_OPERATION + " ")


def _number(spans: list[_Span], conversations: dict[str, str], mapping: FieldMapping) -> None:
    """Fill in each tool span's canonical fields: task, tool, and the step/attempt rules."""
    explicit = mapping.fields
    groups: dict[tuple, list[_Span]] = defaultdict(list)
    for span in spans:
        attrs = span.attributes
        fields = span.fields
        for canonical, key in explicit.items():
            fields[canonical] = attrs.get(key)
        if "task_id" not in explicit or fields["task_id"] is None:
            fields["task_id"] = conversations.get(span.trace) or span.trace or None
        fields.setdefault("tool", attrs.get("gen_ai.tool.name") or span.name.removeprefix(TOOL_OPERATION + " "))
        arguments = attrs.get("gen_ai.tool.call.arguments")
        groups[(fields["task_id"], span.parent, fields["tool"], arguments)].append(span)
    first_starts: dict[object, list[tuple]] = defaultdict(list)
    for key, members in groups.items():
        members.sort(key=lambda s: (s.start, s.line))
        for order, span in enumerate(members, start=1):
            resends = span.attributes.get("http.request.resend_count")
            span.fields.setdefault("attempt", resends + 1 if isinstance(resends, int) else order)
        first_starts[key[0]].append((members[0].start, members[0].line, key))
    for starts in first_starts.values():
        for step, (_, _, key) in enumerate(sorted(starts, key=lambda s: s[:2]), start=1):
            for span in groups[key]:
                span.fields.setdefault("step", step)


def _events(span: _Span):
    fields = span.fields
    error_type = span.attributes.get("error.type")
    failed = span.status_code in (2, "STATUS_CODE_ERROR")
    reason = str(error_type or span.status_message or "")
    status = ("timeout" if _TIMEOUT.search(reason) else "cancelled" if _CANCEL.search(reason) else "error") \
        if failed else "ok"
    code = span.attributes.get("http.response.status_code")
    if code is None and error_type is not None and str(error_type).isdigit():
        code = error_type
    common = {"task_id": fields["task_id"], "step": fields["step"], "attempt": fields["attempt"],
              "op": fields.get("op") or "call", "tool": fields["tool"], "target": fields.get("target"),
              "idempotency_key": fields.get("idempotency_key"), "owner": fields.get("owner")}
    end = {"code": fields.get("code", code), "error": fields.get("error", error_type or span.status_message)}
    extra = json.dumps({k: v for k, v in (("trace_id", span.trace), ("span_id", span.span_id),
                                          ("tool_call_id", span.attributes.get("gen_ai.tool.call.id"))) if v})
    for phase, nanos, outcome in (("start", span.start, {"status": "started"}),
                                  ("end", span.end, {"status": status, **end})):
        values = {**common, **outcome, "ts": _rfc3339(nanos), "phase": phase}
        yield (span.line, *(_text(values.get(c)) for c in COLUMNS), extra, None, None)


def _text(value) -> str | None:
    return None if value is None else str(value)


def _rfc3339(nanos: int) -> str:
    seconds, rest = divmod(nanos, 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc) + timedelta(microseconds=rest // 1000)
    return moment.isoformat().replace("+00:00", "Z")
