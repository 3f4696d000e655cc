"""Trace conventions: which spans are tool calls, and what their attributes say, from the `traces` pack.

The pack (`nonatomic/rules/traces.yaml`) holds one row per convention (OTel
GenAI, OpenInference, OpenLLMetry, pydantic-ai's instrumentation); this module
only applies it, so a new convention is a new row.  A tool span reads as a
`ToolCall`: the tool, its arguments, the framework's call id, the outcome
(from the span status, `error.type` and the standard `exception` events), and
the conversation it belongs to when the span names one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from nonatomic.replay.ingest.spans import Span
from nonatomic.rules.lint.semantics.packs import load_pack

ERROR_SHOWN = 300
"""Characters of an error message kept (a status message may hold a whole traceback)."""


@dataclass(frozen=True)
class Convention:
    name: str
    match: tuple[dict, ...]
    tool: tuple[str, ...]
    tool_name_prefix: str | None
    arguments: tuple[str, ...]
    call_id: tuple[str, ...]
    result: tuple[str, ...]
    resends: tuple[str, ...]
    unknown_result: re.Pattern | None

    def matches(self, span: Span) -> bool:
        for condition in self.match:
            if "name_prefix" in condition:
                if span.name.startswith(condition["name_prefix"]):
                    return True
                continue
            value = span.attributes.get(condition["attribute"])
            if "equals" in condition and value == condition["equals"]:
                return True
            if "prefix" in condition and isinstance(value, str) and value.startswith(condition["prefix"]):
                return True
        return False


@dataclass(frozen=True)
class Pack:
    conventions: tuple[Convention, ...]
    conversation: tuple[str, ...]
    timeout: re.Pattern
    cancelled: re.Pattern
    kinds: tuple[str, ...]

    def convention_of(self, span: Span) -> Convention | None:
        return next((c for c in self.conventions if c.matches(span)), None)

    def kind_of(self, span: Span) -> str:
        """What an ignored span is counted as: its convention's kind attribute, else its span kind."""
        for key in self.kinds:
            value = span.attributes.get(key)
            if isinstance(value, (str, int)) and str(value):
                return str(value)
        return span.kind.removeprefix("SPAN_KIND_").lower() or "span"

    def conversation_of(self, span: Span) -> str | None:
        value = first(span.attributes, self.conversation)
        return None if value is None or value == "" else str(value)


@dataclass(frozen=True)
class ToolCall:
    convention: str
    tool: str
    arguments: object
    """The arguments as parsed: a dict for named arguments, a scalar for a bare value, None when absent."""
    call_id: str | None
    status: str
    """ok, timeout, cancelled, error or unknown."""
    error: str | None
    code: int | None
    resends: int | None


@lru_cache(maxsize=1)
def pack() -> Pack:
    document = load_pack("traces")
    conventions = tuple(
        Convention(name=row["name"], match=tuple(row["match"]), tool=tuple(row.get("tool", ())),
                   tool_name_prefix=row.get("tool_name_prefix"), arguments=tuple(row.get("arguments", ())),
                   call_id=tuple(row.get("call_id", ())), result=tuple(row.get("result", ())),
                   resends=tuple(row.get("resends", ())),
                   unknown_result=re.compile(row["unknown_result"]) if row.get("unknown_result") else None)
        for row in document["conventions"])
    outcome = document["outcome"]
    return Pack(conventions=conventions, conversation=tuple(document["conversation"]),
                timeout=re.compile(outcome["timeout"], re.IGNORECASE),
                cancelled=re.compile(outcome["cancelled"], re.IGNORECASE), kinds=tuple(document["kinds"]))


def lookup(attributes: dict, source: str):
    """The value a source names: an attribute, or (`key#a.b`) a path inside an attribute's JSON text."""
    key, _, path = source.partition("#")
    value = attributes.get(key)
    if not path or value is None:
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def first(attributes: dict, sources) -> object:
    for source in sources:
        value = lookup(attributes, source)
        if value is not None:
            return value
    return None


def parse_arguments(value: object) -> object:
    """Arguments as a value: JSON text of an object or list is parsed, any other text is a bare argument."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed
    return value


def read_call(span: Span, convention: Convention, conventions: Pack) -> ToolCall:
    attributes = span.attributes
    tool = first(attributes, convention.tool)
    if tool is None and convention.tool_name_prefix and span.name.startswith(convention.tool_name_prefix):
        tool = span.name[len(convention.tool_name_prefix):]
    call_id = first(attributes, convention.call_id)
    resends = first(attributes, convention.resends)
    status, error = _outcome(span, convention, conventions)
    code = attributes.get("http.response.status_code")
    error_type = attributes.get("error.type")
    if code is None and error_type is not None and str(error_type).isdigit():
        code = error_type
    return ToolCall(convention=convention.name, tool=str(tool or span.name), arguments=parse_arguments(
        first(attributes, convention.arguments)), call_id=None if call_id is None else str(call_id),
        status=status, error=error, code=_int(code), resends=resends if isinstance(resends, int) else None)


def _outcome(span: Span, convention: Convention, conventions: Pack) -> tuple[str, str | None]:
    exceptions = [attrs for name, attrs in span.events if name == "exception"]
    failed = span.status == "error" or (span.status == "unset" and bool(exceptions))
    if not failed:
        result = first(span.attributes, convention.result)
        if convention.unknown_result and isinstance(result, str) and convention.unknown_result.search(result):
            return "unknown", result[:ERROR_SHOWN]
        return "ok", None
    error_type = span.attributes.get("error.type")
    message = span.status_message.strip().splitlines()[0] if span.status_message.strip() else ""
    described = [f"{e.get('exception.type') or 'exception'}: {e.get('exception.message') or ''}".rstrip(": ")
                 for e in exceptions]
    reasons = " ".join(str(r) for r in (error_type, message, *described) if r)
    status = ("timeout" if conventions.timeout.search(reasons)
              else "cancelled" if conventions.cancelled.search(reasons) else "error")
    error = described[0] if described else str(error_type or message) or None
    return status, error[:ERROR_SHOWN] if error else None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None
