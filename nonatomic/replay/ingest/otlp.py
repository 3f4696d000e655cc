"""Trace input: tool spans of OpenTelemetry trace files as canonical call events.

Files come in any shape spans.py reads (Collector file-exporter lines, plain,
gzip or zstd; protobuf-JSON dumps, pretty or on one line; the SDK console
exporter's span objects).  Which spans are tool calls, and what their
attributes say, is the `traces` pack (conventions.py): OTel GenAI,
OpenInference, OpenLLMetry and pydantic-ai's instrumentation.  Every other
span is counted as ignored, by its kind (the summary's `spans`).

Each tool span becomes a `call` with two events: `phase=start` at its start
time (status `started`) and `phase=end` at its end time, with the outcome of
conventions.read_call (`ok`, `timeout`, `cancelled`, `error`, or `unknown`
for an SDK's own tool timeout) and:

- `task_id`: the conversation (of the span, or of any span of its trace),
  else the trace id;
- `step`, `attempt`: calls of one tool with the same arguments in a task are
  attempts of one step wherever their parent spans are (see _number);
- `target`: from the arguments (default_target), or a mapped path;
- `idempotency_key`: an argument spelled as the tool registry's keys are
  (`idempotency_key`, `Idempotency-Key`, `dedupe_key`, ...);
- `tool`, `code`, `error`: from the span.

A mapping file overrides any of `task_id, step, attempt, op, tool, target,
idempotency_key, owner, code, error` with the attribute to read it from
(`key#path` reads inside an attribute's JSON text) or, for `args.<path>`, a
path into the call's arguments, e.g. `fields: {target: args.order_id}`; its
`values` section maps values as for any log.  Times, phases and statuses come
from the span itself and cannot be remapped.

Accounting: a record is one event or one quarantined item.  A line or
document that is not a trace document is quarantined whole, a tool span
without usable times is quarantined with its line, and a document without
tool spans adds no event.  So `lines` in the summary counts records (events
+ quarantined) for trace input; the spans that gave no record are counted as
ignored spans, and the documents that hold no span at all (an export of
nothing) as such, so that every line read is accounted for.
"""

from __future__ import annotations

import functools
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import duckdb

from nonatomic.replay.ingest import ledger, spans
from nonatomic.replay.ingest.conventions import ToolCall, lookup, pack, read_call
from nonatomic.replay.ingest.convert import Source
from nonatomic.replay.ingest.database import transaction
from nonatomic.replay.ingest.fields import FIELDS
from nonatomic.replay.ingest.inputs import InputError, LogFile
from nonatomic.replay.ingest.mapping import FieldMapping, MappingError
from nonatomic.replay.ingest.params import Params
from nonatomic.replay.ingest.readers import REJECT_SCANS, REJECTS, Reader, jsonl_lines
from nonatomic.replay.ingest.records import CONVERTED, RAW_KEPT, converted_sql
from nonatomic.replay.ingest.schema import EVENT_ROWS
from nonatomic.replay.ingest.spans import Bad, Empty, Span
from nonatomic.rules.lint.semantics.tool_config import normal_key, tool_pack

RECORDS = "nonatomic_otlp_records"
OVERRIDABLE = ("task_id", "step", "attempt", "op", "tool", "target", "idempotency_key", "owner", "code", "error")
COLUMNS = ("ts", "task_id", "step", "attempt", "op", "phase", "status", "code", "tool", "target",
           "idempotency_key", "owner", "error")
"""Canonical fields an OTLP record carries (stored as `src_<field>`, all text, typed by convert.py)."""


def ingest_file(con, log: LogFile, plan: ledger.Plan, mapping: FieldMapping, max_line_bytes: int) -> tuple[int, int, int]:
    """Ingest one OTLP file (the OTLP counterpart of ingest._ingest_file): (records, events, quarantined)."""
    if mapping.presence:
        raise MappingError(f"fields {', '.join(sorted(mapping.presence))} cannot be derived for trace input "
                           f"(outcomes come from the span)")
    unsupported = sorted((set(mapping.fields) | set(mapping.constants)) - set(OVERRIDABLE))
    if unsupported:
        raise MappingError(f"fields {', '.join(unsupported)} cannot be mapped for OTLP input "
                           f"(only {', '.join(OVERRIDABLE)}; times and outcomes come from the span)")
    import pandas as pd  # only OTLP input needs it: the rest of replay streams through DuckDB

    tally = Tally()
    rows = list(_records(con, log, mapping, max_line_bytes, tally, plan.after_line))
    frame = pd.DataFrame(rows, columns=["line", *(f"src_{c}" for c in COLUMNS), "extra", "broken", "raw"], dtype=object)
    try:
        con.register("nonatomic_otlp_frame", frame)
        text = ", ".join(f"CAST({c} AS VARCHAR) AS {c}" for c in frame.columns if c != "line")
        con.execute(f"CREATE OR REPLACE TEMP TABLE {RECORDS} AS "
                    f"SELECT CAST(line AS BIGINT) AS line, {text} FROM nonatomic_otlp_frame")
        params = Params()
        con.execute(converted_sql(_reader(), mapping, params), params.values)
        with transaction(con):
            counts = _load(con, log, plan, tally.last_line)
            _store_tally(con, plan, tally)
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


def _load(con, log: LogFile, plan: ledger.Plan, last_read: int) -> tuple[int, int, int]:
    # Staged rows and records share their order (both tables are filled by one ordered scan).
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
    # The last line read, not the last with a record: a later ingest of the grown file starts after it.
    last_line = max(last_read, con.execute(f"SELECT coalesce(max(line), 0) FROM {RECORDS}").fetchone()[0])
    records = events + quarantined
    if plan.replace_line is not None:
        records -= 1  # the cut-off line's record was counted by the previous ingest
    ledger.record(con, log, plan, records, last_line)
    return records, events, quarantined


def _store_tally(con, plan: ledger.Plan, tally: Tally) -> None:
    rows = [(plan.file, kind, True, n) for kind, n in tally.tool.items()]
    rows += [(plan.file, kind, False, n) for kind, n in tally.ignored.items()]
    if rows:
        con.executemany("INSERT INTO trace_spans VALUES (?, ?, ?, ?)", rows)
    if tally.spanless:
        con.execute("INSERT INTO spanless_documents VALUES ($file, $n)", {"file": plan.file, "n": tally.spanless})


def _records(con, log: LogFile, mapping: FieldMapping, max_line_bytes: int, tally: Tally, after_line: int = 0):
    """Rows of the records table, in file order: events of tool spans, and quarantined items.
    `tally` counts the spans after `after_line` (the lines an earlier ingest did not read)."""
    conventions = pack()
    items = list(spans.read(_counted(_lines(con, log, max_line_bytes), tally)))
    if items and isinstance(items[-1], Bad) and items[-1].reason == "invalid JSON" and not ledger.ends_with_newline(log):
        items[-1] = Bad(items[-1].line, "truncated last line: invalid JSON", items[-1].raw)
    conversations: dict[str, str] = {}
    override = mapping.fields.get("task_id")
    calls: list[_Call] = []
    for item in items:
        if isinstance(item, Empty):
            tally.spanless += item.line > after_line
        if not isinstance(item, Span):
            continue
        conversation = lookup(item.attributes, override) if override else conventions.conversation_of(item)
        if conversation not in (None, ""):
            conversations.setdefault(item.trace, str(conversation))
        convention = conventions.convention_of(item)
        if item.line > after_line:
            if convention is None:
                tally.ignored[conventions.kind_of(item)] += 1
            else:
                tally.tool[convention.name] += 1
        if convention is not None and item.problem is None:
            calls.append(_Call(item, read_call(item, convention, conventions)))
    _number(calls, conversations, mapping)
    numbered = {id(c.span): c for c in calls}
    for item in items:
        if isinstance(item, Empty):
            continue
        if isinstance(item, Bad):
            yield (item.line, *([None] * len(COLUMNS)), None, item.reason, item.raw)
        elif item.problem is not None and conventions.convention_of(item) is not None:
            yield (item.line, *([None] * len(COLUMNS)), None, f"tool span {item.span_id or '?'}: {item.problem}",
                   _raw(item))
        elif id(item) in numbered:
            yield from _events(numbered[id(item)])


@dataclass
class Tally:
    """Spans read, by what they were: tool spans by convention, the others by kind; and the
    documents that held none."""

    tool: Counter = field(default_factory=Counter)
    ignored: Counter = field(default_factory=Counter)
    spanless: int = 0
    """Documents that hold no span."""
    last_line: int = 0
    """The file's last non-blank line."""


@dataclass
class _Call:
    span: Span
    call: ToolCall
    fields: dict = field(default_factory=dict)


def _raw(span: Span) -> str:
    return json.dumps({"traceId": span.trace, "spanId": span.span_id, "name": span.name})


def _lines(con, log: LogFile, max_line_bytes: int):
    """(line number, text or None when blank, reject reason) of every line, through DuckDB's reader
    (which decompresses gzip and zstd alike); lines it rejects keep their numbers."""
    params = Params()
    for table in (REJECTS, REJECT_SCANS):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    try:
        cursor = con.execute(f"SELECT line FROM {jsonl_lines(log, params, max_line_bytes)}", params.values)
        rows = cursor.fetchall()
        rejected = dict(con.execute(
            f"SELECT line, string_agg(DISTINCT error_type, '; ') FROM {REJECTS} GROUP BY line").fetchall())
        raws = dict(con.execute(f"SELECT line, any_value(csv_line) FROM {REJECTS} GROUP BY line").fetchall())
    except duckdb.Error as exc:
        raise InputError(f"{log.path}: cannot read as otlp: {str(exc).splitlines()[0]}") from exc
    finally:
        for table in (REJECTS, REJECT_SCANS):
            con.execute(f"DROP TABLE IF EXISTS {table}")
    number = 1
    for (text,) in rows:
        while number in rejected:
            yield number, (raws.get(number) or "")[:RAW_KEPT], _reject_reason(rejected.pop(number), max_line_bytes)
            number += 1
        yield number, text, None
        number += 1
    for line in sorted(rejected):
        yield line, (raws.get(line) or "")[:RAW_KEPT], _reject_reason(rejected[line], max_line_bytes)


def _counted(lines, tally: Tally):
    for item in lines:
        if item[1] is not None and item[1].strip():
            tally.last_line = max(tally.last_line, item[0])
        yield item


def _reject_reason(kinds: str, max_line_bytes: int) -> str:
    reasons = {"INVALID ENCODING": "bytes that are not UTF-8",
               "LINE SIZE OVER MAXIMUM": f"line longer than {int(max_line_bytes)} bytes"}
    return "; ".join(reasons.get(k, k.lower()) for k in kinds.split("; "))


def _number(calls: list[_Call], conversations: dict[str, str], mapping: FieldMapping) -> None:
    """Each tool call's task, step and attempt.

    The task is the conversation, else the trace.  Calls of one tool with the
    same arguments in a task are attempts of one step, wherever their parent
    spans are (a framework's retry runs under a new parent), and so are calls
    that reuse a tool-call id; without arguments or id, calls of the tool
    under one parent are.  Attempts count in start order (from the
    request's resend count when the span has one); steps are numbered by their first start.
    """
    explicit = mapping.fields
    parents: dict[object, object] = {}

    def root(key):
        while parents.setdefault(key, key) != key:
            key = parents[key]
        return key

    for index, call in enumerate(calls):
        span, fields = call.span, call.fields
        for canonical, source in explicit.items():
            fields[canonical] = _mapped(call, source)
        fields.update(mapping.constants)
        if fields.get("task_id") is None:
            fields["task_id"] = conversations.get(span.trace) or span.trace or None
        if fields.get("tool") is None:
            fields["tool"] = call.call.tool
        if "target" not in explicit and "target" not in mapping.constants:
            fields["target"] = default_target(call.call.arguments)
        if "idempotency_key" not in explicit and "idempotency_key" not in mapping.constants:
            fields["idempotency_key"] = default_key(call.call.arguments)
        task, tool, arguments = fields["task_id"], fields["tool"], call.call.arguments
        keys = []
        if arguments is not None:
            keys.append(("arguments", task, tool, json.dumps(arguments, sort_keys=True, default=str)))
        if call.call.call_id:
            keys.append(("call", task, call.call.call_id))
        if not keys:
            keys.append(("parent", task, tool, span.parent))
        for key in keys:
            parents[root(key)] = root(keys[0])
        fields["_group"] = keys[0]
    groups: dict[object, list[_Call]] = defaultdict(list)
    for call in calls:
        groups[root(call.fields.pop("_group"))].append(call)
    first_starts: dict[object, list[tuple]] = defaultdict(list)
    for key, members in groups.items():
        members.sort(key=lambda c: (c.span.start, c.span.line))
        attempt = 0
        for call in members:
            resends = call.call.resends
            attempt = resends + 1 if resends is not None else attempt + 1
            call.fields.setdefault("attempt", attempt)
        first = members[0]
        first_starts[first.fields["task_id"]].append((first.span.start, first.span.line, key))
    for starts in first_starts.values():
        for step, (_, _, key) in enumerate(sorted(starts, key=lambda s: s[:2]), start=1):
            for call in groups[key]:
                call.fields.setdefault("step", step)


def _mapped(call: _Call, source: str):
    """A mapped field's value: `args.<path>` reads the call's arguments, anything else an attribute."""
    if source.startswith("args."):
        value = call.call.arguments
        for part in source[len("args."):].split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value
    return lookup(call.span.attributes, source)


def default_target(arguments: object) -> str | None:
    """What a call acts on, from its arguments: the first argument named `id` or `*_id`, else the first
    scalar (an idempotency key is never the target)."""
    if isinstance(arguments, dict):
        scalars = [(k, v) for k, v in arguments.items() if isinstance(v, (str, int, float))
                   and not isinstance(v, bool) and normal_key(str(k)) not in _key_names()]
        named = [(k, v) for k, v in scalars if k == "id" or str(k).endswith("_id")]
        chosen = (named or scalars)[:1]
        return f"{chosen[0][0]}={chosen[0][1]}" if chosen else None
    if isinstance(arguments, (str, int, float)) and not isinstance(arguments, bool) and str(arguments):
        return str(arguments)
    return None


def default_key(arguments: object) -> str | None:
    """The idempotency key a call passes: an argument spelled as the tool registry's keys are."""
    if not isinstance(arguments, dict):
        return None
    names = _key_names()
    return next((str(v) for k, v in arguments.items() if normal_key(str(k)) in names and v not in (None, "")), None)


@functools.lru_cache(maxsize=1)
def _key_names() -> frozenset[str]:
    return frozenset(normal_key(k) for k in tool_pack()["idempotency_keys"])


def _events(call: _Call):
    span, outcome, fields = call.span, call.call, call.fields
    common = {"task_id": fields["task_id"], "step": fields["step"], "attempt": fields["attempt"],
              "op": fields.get("op") or "call", "tool": fields["tool"], "target": fields.get("target"),
              "idempotency_key": fields.get("idempotency_key"), "owner": fields.get("owner")}
    end = {"code": fields.get("code", outcome.code), "error": fields.get("error", outcome.error)}
    extra = json.dumps({k: v for k, v in (("trace_id", span.trace), ("span_id", span.span_id),
                                          ("parent_span_id", span.parent), ("tool_call_id", outcome.call_id),
                                          ("convention", outcome.convention)) if v})
    for phase, nanos, status in (("start", span.start, {"status": "started"}),
                                 ("end", span.end, {"status": outcome.status, **end})):
        values = {**common, **status, "ts": _rfc3339(nanos), "phase": phase}
        yield (span.line, *(_text(values.get(c)) for c in COLUMNS), extra, None, None)


def _text(value) -> str | None:
    return None if value is None else str(value)


def _rfc3339(nanos: int) -> str:
    seconds, rest = divmod(nanos, 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc) + timedelta(microseconds=rest // 1000)
    return moment.isoformat().replace("+00:00", "Z")
