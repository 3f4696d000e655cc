"""Spans out of trace files, in every shape OpenTelemetry tooling writes them.

- OTLP/JSON, one `TracesData`/`ExportTraceServiceRequest` per line, as the
  Collector's file exporter writes it (ids in hex);
- protobuf-JSON dumps of the same messages (`MessageToJson`), pretty-printed
  or on one line, one after the other, ids in base64 or hex, field names in
  lowerCamelCase or as in the .proto (`resource_spans`);
- the SDK's `ConsoleSpanExporter` output: indented span objects
  (`{"name": ..., "context": {"trace_id": "0x..."}, ...}`) one after the other.

The shape is told from the text: a first record that is JSON on its own line
means one document per line; otherwise documents span lines and are read one
after the other.  A span's `line` is where it starts in the file (for a
document on one line, that line), so evidence cites where to look; its id
tells apart the spans of one line.

Nothing is lost: a record that is not JSON, or JSON that is not a trace
document, comes out as a `Bad` with its line and the reason.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

_DECODER = json.JSONDecoder()
# json parses nested values recursively: a record nested past the interpreter's limit is a
# bad record, not a crash.
TOO_DEEP = "nested too deeply to read"
_HEX = re.compile(r"[0-9a-fA-F]+")
_NANOS = re.compile(r"[0-9]{1,20}")
_WHITESPACE = re.compile(r"\s*")
_STATUS = {0: "unset", 1: "ok", 2: "error", "STATUS_CODE_UNSET": "unset", "STATUS_CODE_OK": "ok",
           "STATUS_CODE_ERROR": "error", "UNSET": "unset", "OK": "ok", "ERROR": "error"}


@dataclass
class Span:
    line: int
    trace: str
    span_id: str
    parent: str
    name: str
    kind: str
    start: int | None
    """Nanoseconds since the epoch; None when the record has no usable time (then `problem` says why)."""
    end: int | None
    attributes: dict
    status: str
    """'unset', 'ok' or 'error'."""
    status_message: str
    events: list[tuple[str, dict]] = field(default_factory=list)
    problem: str | None = None


@dataclass(frozen=True)
class Bad:
    line: int
    reason: str
    raw: str


@dataclass(frozen=True)
class Empty:
    """A trace document that holds no span (an export of nothing): read, and counted."""
    line: int


def looks_like_traces(head: str) -> bool:
    """Does this text (a file's first bytes, decompressed) start a trace document of a shape read here?"""
    text = head.lstrip("\ufeff \t\r\n")
    return bool(re.match(r'\{\s*"(resourceSpans|resource_spans)"\s*:', text)) or _console_head(text)


def _console_head(text: str) -> bool:
    return bool(re.match(r'\{\s*"name"\s*:', text)) and bool(re.search(r'"context"\s*:\s*\{\s*"trace_id"', text[:4096]))


def read(lines: Iterable[tuple[int, str | None, str | None]]) -> Iterator[Span | Bad | Empty]:
    """Spans, bad records and documents without spans from (line number, text or None if blank,
    reject reason) in file order."""
    lines = iter(lines)
    pending: list[tuple[int, str | None, str | None]] = []
    for item in lines:
        pending.append(item)
        number, text, rejected = item
        if rejected is None and text is not None and text.strip():
            break
    else:
        yield from _by_line(pending)
        return
    first = pending[-1][1].strip()
    try:
        json.loads(first)
        one_per_line = True
    except RecursionError:  # a whole line too deep to read, not the start of a longer document
        one_per_line = True
    except ValueError:
        one_per_line = False
    everything = _chain(pending, lines)
    yield from _by_line(everything) if one_per_line else _by_document(everything)


def _chain(head: list, rest: Iterator) -> Iterator:
    yield from head
    yield from rest


def _by_line(lines: Iterable[tuple[int, str | None, str | None]]) -> Iterator[Span | Bad | Empty]:
    for number, text, rejected in lines:
        if rejected is not None:
            yield Bad(number, rejected, text or "")
            continue
        if text is None or not text.strip():
            continue
        try:
            document = json.loads(text)
        except ValueError:
            yield Bad(number, "invalid JSON", text)
            continue
        except RecursionError:
            yield Bad(number, TOO_DEEP, text)
            continue
        yield from _document(document, number, text, None)


def _by_document(lines: Iterable[tuple[int, str | None, str | None]]) -> Iterator[Span | Bad | Empty]:
    """Documents spanning lines, one after the other; a broken one is quarantined from its first line
    to the next line that opens a document at its first column."""
    block: list[tuple[int, str]] = []
    for number, text, rejected in lines:
        if rejected is not None:
            yield from _documents(block)
            block = []
            yield Bad(number, rejected, text or "")
            continue
        block.append((number, text or ""))
    yield from _documents(block)


def _documents(block: list[tuple[int, str]]) -> Iterator[Span | Bad | Empty]:
    if not block:
        return
    text = "\n".join(t for _, t in block)
    starts = [0]
    for _, t in block[:-1]:
        starts.append(starts[-1] + len(t) + 1)
    numbers = [n for n, _ in block]

    def line_at(offset: int) -> int:
        return numbers[bisect.bisect_right(starts, offset) - 1]

    position = _WHITESPACE.match(text, 0).end()
    while position < len(text):
        try:
            document, end = _DECODER.raw_decode(text, position)
        except (ValueError, RecursionError) as exc:
            resume = _next_opening(text, position + 1)
            broken = text[position:resume].rstrip()
            reason = TOO_DEEP if isinstance(exc, RecursionError) else \
                "invalid JSON" if resume < len(text) else "truncated document: invalid JSON"
            yield Bad(line_at(position), reason, broken)
            position = _WHITESPACE.match(text, resume).end()
            continue
        yield from _document(document, line_at(position), text[position:end], lambda offset, p=position: line_at(p + offset))
        position = _WHITESPACE.match(text, end).end()


def _next_opening(text: str, start: int) -> int:
    found = text.find("\n{", start)
    return len(text) if found < 0 else found + 1


def _document(document: object, line: int, text: str, line_of) -> Iterator[Span | Bad | Empty]:
    """The spans of one parsed document: a TracesData/ExportTraceServiceRequest, or one console span."""
    if isinstance(document, dict) and _has(document, "resourceSpans"):
        yield from _traces_data(document, line, text, line_of)
    elif isinstance(document, dict) and isinstance(document.get("context"), dict) and "span_id" in document["context"]:
        yield _console_span(document, line)
    else:
        yield Bad(line, "not an OTLP TracesData object (no resourceSpans list)", text)


def _has(container: dict, camel: str) -> bool:
    return camel in container or _snake(camel) in container


def _snake(camel: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)


class _Malformed(Exception):
    pass


def _get(container: object, camel: str, default):
    """A field by its JSON (lowerCamelCase) or .proto name, of the default's type."""
    if not isinstance(container, dict):
        raise _Malformed(f"malformed TracesData: {camel} is inside a {type(container).__name__}")
    value = container.get(camel, container.get(_snake(camel), default))
    if value is None:
        return default
    if not isinstance(value, type(default)):
        raise _Malformed(f"malformed TracesData: {camel} is not a {type(default).__name__}")
    return value


def _traces_data(document: dict, line: int, text: str, line_of) -> Iterator[Span | Bad | Empty]:
    try:
        resource_spans = _get(document, "resourceSpans", [])
        found = []
        for entry in resource_spans:
            resource = _attributes(_get(_get(entry, "resource", {}), "attributes", []))
            scopes = _get(entry, "scopeSpans", []) or _get(entry, "instrumentationLibrarySpans", [])
            for scope in scopes:
                for raw in _get(scope, "spans", []):
                    found.append((raw, resource))
    except _Malformed as exc:
        yield Bad(line, str(exc), text)
        return
    if not found:
        yield Empty(line)
        return
    searched = 0
    for raw, resource in found:
        span = _otlp_span(raw, resource, line)
        if isinstance(span, Bad):
            yield span
            continue
        if line_of is not None and span.span_id:
            # Where this span's own id is written: spans come in document order.
            at = _find_id(text, raw, searched)
            if at >= 0:
                searched = at + 1
                span.line = line_of(at)
        yield span


def _find_id(text: str, raw: dict, start: int) -> int:
    value = raw.get("spanId", raw.get("span_id")) if isinstance(raw, dict) else None
    if not isinstance(value, str):
        return -1
    match = re.compile(r'"(spanId|span_id)"\s*:\s*"' + re.escape(value) + '"').search(text, start)
    return match.start() if match else -1


def _otlp_span(raw: object, resource: dict, line: int) -> Span | Bad:
    if not isinstance(raw, dict):
        return Bad(line, "malformed TracesData: a span is not a JSON object", json.dumps(raw)[:200])
    try:
        attributes = {**resource, **_attributes(_get(raw, "attributes", []))}
        status = _get(raw, "status", {})
        events = [(str(_get(e, "name", "")), _attributes(_get(e, "attributes", []))) for e in _get(raw, "events", [])]
    except _Malformed as exc:
        return Bad(line, f"span {raw.get('spanId') or raw.get('span_id') or '?'}: {exc}", json.dumps(raw)[:200])
    span = Span(line=line, trace=_id(raw.get("traceId", raw.get("trace_id")), 16),
                span_id=_id(raw.get("spanId", raw.get("span_id")), 8),
                parent=_id(raw.get("parentSpanId", raw.get("parent_span_id")), 8), name=str(raw.get("name") or ""),
                kind=str(raw.get("kind") or ""), start=None, end=None, attributes=attributes,
                status=_STATUS.get(status.get("code"), "unset"), status_message=str(status.get("message") or ""),
                events=events)
    for side in ("start", "end"):
        value = raw.get(f"{side}TimeUnixNano", raw.get(f"{side}_time_unix_nano"))
        if not (isinstance(value, int) or (isinstance(value, str) and _NANOS.fullmatch(value))) or int(value) <= 0:
            span.problem = f"{side}TimeUnixNano missing or not a time: {value!r:.40}"
            return span
        setattr(span, side, int(value))
    return span


def _console_span(raw: dict, line: int) -> Span:
    """A span as `ReadableSpan.to_json()` prints it (the console exporter)."""
    context = raw.get("context") or {}
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    resource = raw.get("resource") if isinstance(raw.get("resource"), dict) else {}
    resource_attributes = resource.get("attributes") if isinstance(resource.get("attributes"), dict) else {}
    attributes = raw.get("attributes") if isinstance(raw.get("attributes"), dict) else {}
    events = [(str(e.get("name") or ""), e.get("attributes") if isinstance(e.get("attributes"), dict) else {})
              for e in raw.get("events") or [] if isinstance(e, dict)]
    span = Span(line=line, trace=_id(context.get("trace_id"), 16), span_id=_id(context.get("span_id"), 8),
                parent=_id(raw.get("parent_id"), 8), name=str(raw.get("name") or ""), kind=str(raw.get("kind") or ""),
                start=None, end=None, attributes={**resource_attributes, **attributes},
                status=_STATUS.get(status.get("status_code"), "unset"),
                status_message=str(status.get("description") or ""), events=events)
    for side in ("start", "end"):
        value = raw.get(f"{side}_time")
        nanos = _iso_nanos(value) if isinstance(value, str) else None
        if nanos is None:
            span.problem = f"{side}_time missing or not a time: {value!r:.40}"
            return span
        setattr(span, side, nanos)
    return span


def _iso_nanos(text: str) -> int | None:
    match = re.fullmatch(r"(.+?T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)?", text.strip())
    if not match:
        return None
    try:
        moment = datetime.fromisoformat(match.group(1) + ("+00:00" if match.group(3) in (None, "Z") else match.group(3)))
    except ValueError:
        return None
    return int(moment.timestamp()) * 1_000_000_000 + int((match.group(2) or "0").ljust(9, "0"))


def _id(value: object, size: int) -> str:
    """A trace or span id as lower-case hex, from hex (OTLP/JSON, `0x...`) or base64 (protobuf's JSON)."""
    if not isinstance(value, str) or not value:
        return ""
    text = value[2:] if value.startswith("0x") else value
    if len(text) == size * 2 and _HEX.fullmatch(text):
        return text.lower()
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return decoded.hex() if len(decoded) == size else value


def _attributes(pairs: object) -> dict:
    """OTLP KeyValue list -> {key: python value}."""
    if not isinstance(pairs, list):
        raise _Malformed("malformed TracesData: attributes is not a list")
    return {pair["key"]: _value(pair.get("value")) for pair in pairs
            if isinstance(pair, dict) and isinstance(pair.get("key"), str)}


def _value(any_value: object):
    if not isinstance(any_value, dict) or not any_value:
        return None
    kind, value = next(iter(any_value.items()))
    if kind in ("intValue", "int_value"):
        return int(value) if _NANOS.fullmatch(str(value).lstrip("-")) else value
    if kind in ("arrayValue", "array_value"):
        return [_value(v) for v in (value or {}).get("values", [])] if isinstance(value, dict) else value
    if kind in ("kvlistValue", "kvlist_value"):
        return _attributes((value or {}).get("values", [])) if isinstance(value, dict) else value
    return value
