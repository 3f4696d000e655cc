"""SQL that turns source values into typed event columns, and says why a line is bad.

A reader (readers.py) exposes each canonical field as a source expression with
a DuckDB type: VARCHAR for JSONL and CSV, the column's own type for Parquet.
This module turns it into the column of the events table and, in parallel, a
problem text when the value is present but unusable (or required and absent).
Conversions are lenient where logs commonly differ (integers written as
strings, epoch numbers as text) and strict where a guess would corrupt the
timeline (fractional attempts, unparseable times).
"""

from __future__ import annotations

from dataclasses import dataclass

from nonatomic.replay.ingest.fields import FIELDS, INT, NARROW_INT, REQUIRED, TEXT, TIME
from nonatomic.replay.ingest.params import Params

EPOCH_MS_FROM = 1e11
"""Epoch numbers at or above this magnitude are milliseconds (1e11 s is the year 5138)."""
EPOCH_LIMIT = 1e14
"""...and at or above this one they are not a time at all (1e14 ms is the year 5138 too)."""

_INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
                  "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"}
_FLOAT_TYPES = {"FLOAT", "DOUBLE"}
_TIMESTAMP_TYPES = {"TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "DATE"}
_TIMESTAMPTZ = "TIMESTAMP WITH TIME ZONE"
SHOWN_CHARS = 60
"""How many characters of a bad value a quarantine reason quotes."""


@dataclass(frozen=True)
class Source:
    """Where a canonical field's value comes from in one reader's row."""

    sql: str
    type: str = "VARCHAR"


def column(field: str, source: Source | None, values: dict[str, str] | None, params: Params) -> str:
    """The SQL of the typed events column for one field (NULL when the log lacks it)."""
    if source is None:
        return "NULL"
    kind = FIELDS[field]
    if kind == TIME:
        return _time(source)
    if kind == INT:
        value = _integer(source)
        return f"TRY_CAST({value} AS {NARROW_INT[field]})" if field in NARROW_INT else value
    text = f"NULLIF(CAST({source.sql} AS VARCHAR), '')"
    if field in REQUIRED:
        text = f"CASE WHEN trim({text}) <> '' THEN {text} END"
    if values:
        lookup = params({"key": list(values), "value": list(values.values())})
        text = f"coalesce(map_extract_value(CAST({lookup} AS MAP(VARCHAR, VARCHAR)), {text}), {text})"
    return text


def problem(field: str, source: Source | None, converted: str, missing: str, params: Params) -> str | None:
    """SQL for why this field makes the line unusable, or None when it never can.

    `converted` names the column that `column()` produced, so the check reads
    the conversion's result instead of repeating it; `missing` is the reason
    given when a required field is absent.
    """
    missing_reason = params(missing) if field in REQUIRED else None
    if source is None:
        return missing_reason
    shown = f"left(CAST({source.sql} AS VARCHAR), {SHOWN_CHARS})"
    checks = []
    if field in REQUIRED:
        checks.append(f"WHEN {source.sql} IS NULL OR trim(CAST({source.sql} AS VARCHAR)) = '' THEN {missing_reason}")
    if FIELDS[field] == TIME:
        checks.append(f"WHEN {converted} IS NULL THEN 'ts does not parse: ' || {shown}")
    elif FIELDS[field] == INT:
        checks.append(f"WHEN {source.sql} IS NOT NULL AND {converted} IS NULL "
                      f"THEN '{field} is not an integer: ' || {shown}")
        if field == "attempt":
            checks.append(f"WHEN {converted} < 1 THEN 'attempt must be >= 1: ' || {converted}")
        if field == "ttl_ms":  # a lease of negative length is no lease: the log is wrong
            checks.append(f"WHEN {converted} < 0 THEN 'ttl_ms must be >= 0: ' || {converted}")
    if not checks:
        return None
    if FIELDS[field] != INT:
        # A time or text that converted is fine: skip rendering (and trimming) every good value.
        checks.insert(0, f"WHEN {converted} IS NOT NULL THEN NULL")
    return f"CASE {' '.join(checks)} END"


def json_type_problem(field: str, json_type: str) -> str | None:
    """SQL of why a JSON value whose `json_type()` is `json_type` cannot be this text field,
    else NULL (None when any type will do).  An object or array is no text; the task's
    identity must be a JSON string (42 and "42" would be one task), while other text
    fields take numbers and booleans as their text."""
    if FIELDS[field] != TEXT:
        return None
    allowed = "'VARCHAR', 'NULL'" if field in REQUIRED else "'VARCHAR', 'NULL', 'BIGINT', 'UBIGINT', 'DOUBLE', 'BOOLEAN'"
    kind = (f"CASE {json_type} WHEN 'OBJECT' THEN 'an object' WHEN 'ARRAY' THEN 'an array' "
            f"WHEN 'BOOLEAN' THEN 'a boolean' ELSE 'a number' END")
    return f"CASE WHEN {json_type} NOT IN ({allowed}) THEN '{field} is not a string: it is ' || {kind} END"


def _time(source: Source) -> str:
    if source.type == _TIMESTAMPTZ:
        return _finite(source.sql)
    if source.type in _TIMESTAMP_TYPES:
        return _finite(f"timezone('UTC', CAST({source.sql} AS TIMESTAMP))")
    if source.type in _INTEGER_TYPES | _FLOAT_TYPES or source.type.startswith("DECIMAL"):
        return _epoch(f"CAST({source.sql} AS DOUBLE)")
    text = f"CAST({source.sql} AS VARCHAR)"
    stamp = _finite(f"TRY_CAST({text} AS TIMESTAMPTZ)")
    # DuckDB computes a repeated expression once for every row, whatever CASE or COALESCE
    # around it would skip: only texts that are no timestamp reach the (slow, failing) DOUBLE cast.
    return f"coalesce({stamp}, {_epoch(f'TRY_CAST(CASE WHEN {stamp} IS NULL THEN {text} END AS DOUBLE)')})"


def _finite(timestamp: str) -> str:
    # DuckDB parses 'infinity' as a timestamp; no event happened then.
    return f"CASE WHEN isfinite({timestamp}) THEN {timestamp} END"


def _epoch(number: str) -> str:
    return (f"CASE WHEN abs({number}) < {EPOCH_MS_FROM:.0f} "
            f"THEN timezone('UTC', make_timestamp(CAST(round({number} * 1000000) AS BIGINT))) "
            f"WHEN abs({number}) < {EPOCH_LIMIT:.0f} "
            f"THEN timezone('UTC', make_timestamp(CAST(round({number} * 1000) AS BIGINT))) END")


def _integer(source: Source) -> str:
    if source.type in _INTEGER_TYPES:
        return f"TRY_CAST({source.sql} AS BIGINT)"
    if source.type in _FLOAT_TYPES or source.type.startswith("DECIMAL"):
        return f"CASE WHEN {source.sql} = trunc({source.sql}) THEN TRY_CAST({source.sql} AS BIGINT) END"
    text = f"CAST({source.sql} AS VARCHAR)"
    number = f"TRY_CAST({text} AS BIGINT)"
    # TRY_CAST alone would round '2.5' to 3 and read '1e3' or '0x10': only plain digits count,
    # with a zero fraction at most ('2.0': pandas writes an integer column with gaps as floats).
    # A text that is the number's own rendering is plain digits; the regex checks the others.
    return (f"CASE WHEN CAST({number} AS VARCHAR) = {text} THEN {number} "
            f"WHEN regexp_full_match({text}, '\\s*[+-]?[0-9]+(\\.0+)?\\s*') "
            f"THEN TRY_CAST(regexp_replace(trim({text}), '\\.0+$', '') AS BIGINT) END")
