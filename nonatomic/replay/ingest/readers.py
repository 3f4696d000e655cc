"""How each input format is read: one SQL row per log line (or CSV record, or Parquet row).

Rows come out in file order, which the ingest relies on to number lines.
JSONL is read by DuckDB's CSV reader as one VARCHAR column per line (no
quoting, a delimiter that cannot occur in valid JSON) and parsed in SQL: the
JSON reader would abort on the first bad line, or with `ignore_errors` turn it
into NULLs, and its line numbers can be off.  The CSV reader's reject table
keeps the lines it cannot read at all (bytes that are not UTF-8, lines over
the size limit, CSV rows with the wrong number of columns) with their numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from nonatomic.replay.ingest.convert import Source, json_type_problem
from nonatomic.replay.ingest.fields import FIELDS
from nonatomic.replay.ingest.inputs import LogFile
from nonatomic.replay.ingest.lines import EXACT_LINES
from nonatomic.replay.ingest.mapping import FieldMapping
from nonatomic.replay.ingest.params import Params

REJECTS = "nonatomic_rejects"
REJECT_SCANS = "nonatomic_reject_scans"
_UNIT_SEPARATOR = "\x1f"  # a raw control character is never valid inside a JSON line


@dataclass(frozen=True)
class Reader:
    relation: str
    """FROM-clause SQL yielding one row per record, in file order."""
    sources: dict[str, Source | None]
    extra: str
    """SQL of the JSON object holding the fields that feed no canonical field."""
    raw: str
    """SQL of the record as text, kept for quarantined lines."""
    blank: str
    """SQL true for a record that is an empty line (not counted, not an event)."""
    broken: str
    """SQL of a reason that makes the whole record unusable, else NULL."""
    header_lines: int
    has_rejects: bool
    line: str | None = None
    """SQL of the record's line number when the reader knows it (Parquet row
    numbers); otherwise records are numbered by their position in file order."""
    breaks: str = "0"
    """SQL of the line breaks inside the record (a quoted CSV value spanning lines):
    the records after it start that many lines further down."""


def reader_for(con, log: LogFile, mapping: FieldMapping, params: Params, max_line_bytes: int,
               exact_lines: bool = False) -> Reader:
    """`exact_lines`: read a JSONL file's lines from EXACT_LINES (lines.py), not DuckDB's scanner."""
    if log.format == "jsonl":
        reader = _jsonl(log, mapping, params, max_line_bytes, exact_lines)
    elif log.format == "csv":
        reader = _csv(con, log, mapping, params, max_line_bytes)
    else:
        reader = _parquet(con, log, mapping, params)
    return derived(reader, mapping, params)


def derived(reader: Reader, mapping: FieldMapping, params: Params) -> Reader:
    """The mapping's constants and presence-derived values in place of what the reader reads."""
    if not mapping.constants and not mapping.presence:
        return reader
    sources = dict(reader.sources)
    for field, value in mapping.constants.items():
        sources[field] = Source(params(value))
    for field, rule in mapping.presence.items():
        read = sources.get(field)
        absent = params(rule.absent) if rule.absent is not None else "NULL"
        sources[field] = Source(f"CASE WHEN {read.sql} IS NOT NULL THEN {params(rule.present)} ELSE {absent} END"
                                if read is not None else absent)
    return replace(reader, sources=sources)


def _line_reader_options(log: LogFile, max_line_bytes: int) -> str:
    return (f"compression='{log.compression}', max_line_size={int(max_line_bytes)}, "
            f"store_rejects=true, ignore_errors=true, rejects_table='{REJECTS}', rejects_scan='{REJECT_SCANS}'")


def jsonl_lines(log: LogFile, params: Params, max_line_bytes: int) -> str:
    """The scan of a JSONL file as one VARCHAR `line` per line (rejected lines go to REJECTS)."""
    # new_line: else DuckDB takes the first line's ending for the file's, and reads each later
    # CRLF of a LF file as two line ends (an empty line more, every later number off by one).
    return (f"read_csv({params(log.location)}, columns={{'line': 'VARCHAR'}}, delim='{_UNIT_SEPARATOR}', "
            f"quote='', escape='', header=false, auto_detect=false, strict_mode=false, new_line='\\r\\n', "
            f"{_line_reader_options(log, max_line_bytes)})")


def _jsonl(log: LogFile, mapping: FieldMapping, params: Params, max_line_bytes: int, exact_lines: bool) -> Reader:
    paths: list[tuple[str, str]] = []
    positions: dict[str, list[int]] = {}
    for field in FIELDS:
        for name in mapping.sources(field):
            for path in _paths(name):
                paths.append(path)
                positions.setdefault(field, []).append(len(paths))
    pointers = params([f"/{_escape(key)}{inner}" for key, inner in paths])
    # A key given twice in a line: the last one counts, as in Python, JavaScript and jq
    # (DuckDB's lookups find the first).  Only such lines pay for the second parse; a
    # nested path reads on in the last value of its top-level key.
    keys, inners = params([key for key, _ in paths]), params([inner or "$" for _, inner in paths])
    last = (f"list_transform(range(1, {len(paths) + 1}), lambda i: json_extract("
            f"list_reverse(json_extract(line, '$.*'))[list_position(list_reverse(json_keys(line)), ({keys})[i])], "
            f"({inners})[i]))")
    twice = "len(json_keys(line)) > len(list_distinct(json_keys(line)))"
    scan = f"{EXACT_LINES}" if exact_lines else f"(SELECT line, NULL AS bad FROM {jsonl_lines(log, params, max_line_bytes)})"
    relation = (
        f"(SELECT line, bad, CASE WHEN twice THEN list_transform(chosen, lambda v: json_extract_string(v, '$')) "
        f"ELSE try(json_extract_string(line, {pointers})) END AS parsed, "
        f"CASE WHEN twice THEN list_transform(chosen, lambda v: json_type(v)) "
        f"ELSE try(json_type(line, {pointers})) END AS types "
        f"FROM (SELECT *, CASE WHEN twice THEN try({last}) END AS chosen "
        f"FROM (SELECT *, coalesce(try({twice}), false) AS twice FROM {scan})))"
    )
    # A field derived from another's presence (derived below) takes any type of value.
    wrong_types = [check for field in FIELDS if field not in mapping.presence for i in positions.get(field, ())
                   if (check := json_type_problem(field, f"types[{i}]")) is not None]
    sources = {
        field: Source(_first(f"parsed[{i}]" for i in positions[field])) if field in positions else None
        for field in FIELDS
    }
    # Most lines start with '{': CASE trims (copies) only the others.
    is_object = ("(parsed IS NOT NULL AND CASE WHEN starts_with(line, '{') THEN true "
                 "ELSE starts_with(ltrim(line, ' \t'), '{') END)")
    consumed = sorted(mapping.consumed())
    # json_keys is far cheaper than json_merge_patch: patch only lines that have extras.
    extra = (
        f"CASE WHEN {is_object} AND len(list_filter(json_keys(line), "
        f"lambda k: NOT list_contains({params(consumed)}, k))) > 0 "
        f"THEN NULLIF(json_merge_patch(line, {params(json.dumps(dict.fromkeys(consumed)))}), '{{}}') END"
    )
    return Reader(
        relation=relation,
        sources=sources,
        extra=extra,
        raw="line",
        blank="CASE WHEN starts_with(line, '{') THEN false ELSE line IS NULL OR trim(line) = '' END",
        broken="CASE WHEN bad IS NOT NULL THEN bad WHEN parsed IS NULL THEN 'invalid JSON' "
               f"WHEN NOT {is_object} THEN 'not a JSON object' "
               f"ELSE {_first(wrong_types) if wrong_types else 'NULL'} END",
        header_lines=0,
        has_rejects=not exact_lines,
    )


def _csv(con, log: LogFile, mapping: FieldMapping, params: Params, max_line_bytes: int) -> Reader:
    options = f"header=true, all_varchar=true, strict_mode=true, {_line_reader_options(log, max_line_bytes)}"
    columns = _describe(con, "read_csv", log.location, options)
    relation = f"read_csv({params(log.location)}, {options}) AS r"
    reader = _columnar(relation, columns, mapping, params, header_lines=1, has_rejects=True)
    values = ", ".join(f"struct_extract(r, {params(name)})" for name in columns)  # all VARCHAR
    return replace(reader, breaks=f"CASE WHEN contains(concat({values}), chr(10)) "
                                  f"THEN len(string_split(concat({values}), chr(10))) - 1 ELSE 0 END")


def _parquet(con, log: LogFile, mapping: FieldMapping, params: Params) -> Reader:
    columns = _describe(con, "read_parquet", log.location, "")
    relation = f"read_parquet({params(log.location)}) AS r"
    reader = _columnar(relation, columns, mapping, params, header_lines=0, has_rejects=False)
    return replace(reader, line="file_row_number + 1")


def _describe(con, function: str, path: str, options: str) -> dict[str, str]:
    separator = ", " if options else ""
    rows = con.execute(f"DESCRIBE SELECT * FROM {function}($path{separator}{options})", {"path": path}).fetchall()
    return {name: type_ for name, type_, *_ in rows}


def _columnar(relation: str, columns: dict[str, str], mapping: FieldMapping, params: Params,
              header_lines: int, has_rejects: bool) -> Reader:
    def value(name: str) -> str:
        return f"struct_extract(r, {params(name)})"

    sources: dict[str, Source | None] = {}
    for field in FIELDS:
        present = [name for name in mapping.sources(field) if name in columns]
        if len(present) == 1:
            sources[field] = Source(value(present[0]), columns[present[0]])
        elif present:
            # Aliases of one field can differ in type; text is what they share.
            sources[field] = Source(_first(f"CAST({value(name)} AS VARCHAR)" for name in present))
        else:
            sources[field] = None
    consumed = mapping.consumed()
    extras = [name for name in columns if name not in consumed]
    extra = (f"json_object({', '.join(f'{params(name)}, {value(name)}' for name in extras)})"
             if extras else "NULL")
    return Reader(
        relation=relation,
        sources=sources,
        extra=extra,
        raw="CAST(to_json(r) AS VARCHAR)",
        blank="false",
        broken="NULL",
        header_lines=header_lines,
        has_rejects=has_rejects,
    )


def _paths(name: str) -> list[tuple[str, str]]:
    """What a field name reads, as (top-level key, JSON pointer inside its value): the key
    itself, then (for `a.b`) the nested path."""
    flat = (name, "")
    if "." not in name:
        return [flat]
    top, *inner = name.split(".")
    return [flat, (top, "".join("/" + _escape(part) for part in inner))]


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _first(expressions) -> str:
    expressions = list(expressions)
    return expressions[0] if len(expressions) == 1 else f"coalesce({', '.join(expressions)})"
