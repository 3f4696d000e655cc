"""The fast JSONL path: DuckDB's JSON reader, for files it reads exactly as the line reader does.

The line reader (readers.py) parses every line in SQL, so that a bad line is
quarantined with its number instead of aborting the scan; that is one JSON
parse for the fields and one more for the names of the extra fields.  DuckDB's
JSON reader parses each line once, but it stops at the first bad line and
skips blank ones, so its rows are the file's lines only when every line is a
JSON object.  `convert_file` converts a file with it when that is proven, and else
returns False (the caller then uses the line reader):

- a scan of the raw lines (the line reader's own CSV scan, which rejects
  bytes that are not UTF-8 and over-long lines) rejects nothing, and every
  line starts with `{` and ends with `}`: no blank lines, arrays or scalars;
- the JSON reader reads the whole file without an error (it has one for
  invalid JSON, two values on a line, duplicate keys, and a key its sample
  of the file did not see) and yields one row per line;
- when rows get a quarantine reason (objects with bad values), every line
  lists its extra fields in the order they are rebuilt in (below), and a
  second scan of the raw lines gives those rows their text, which the JSON
  reader does not keep.

Values are read as JSON and turned into text by the function the line reader
uses, so both paths give the same values and quarantine reasons.  Extra fields
are rebuilt from their columns, in the order the file first used them, and the
columns cannot tell a null from an absent field: a file where an extra field
is null takes the line reader, which keeps explicit nulls.
"""

from __future__ import annotations

import re

import duckdb

from nonatomic.replay.ingest.convert import Source, json_type_problem
from nonatomic.replay.ingest.fields import FIELDS, TEXT
from nonatomic.replay.ingest.inputs import LogFile
from nonatomic.replay.ingest.mapping import FieldMapping
from nonatomic.replay.ingest.params import Params
from nonatomic.replay.ingest.readers import REJECT_SCANS, REJECTS, Reader, jsonl_lines
from nonatomic.replay.ingest.records import CONVERTED, RAW_KEPT, converted_sql

_LINES = "nonatomic_lines"
_JSON_READER_OBJECT_LIMIT = 16 << 20
"""DuckDB's default `maximum_object_size`; raised for longer allowed lines."""
_JSON_COMPRESSION = {"none": "uncompressed"}
"""read_json's name for a plain file: DuckDB before 2.0 refuses `none` there (read_csv takes it)."""


def convert_file(con, log: LogFile, mapping: FieldMapping, max_line_bytes: int) -> bool:
    """Convert the file's records with the JSON reader; False (and nothing converted) when it cannot be exact."""
    if not mapping.plain():
        return False  # the JSON reader sees top-level keys only; the line reader derives the rest
    params = Params()
    scan = (f"read_json({params(log.location)}, format='newline_delimited', records=true, maximum_depth=1, "
            f"compression='{_JSON_COMPRESSION.get(log.compression, log.compression)}', "
            f"maximum_object_size={max(int(max_line_bytes) + 2, _JSON_READER_OBJECT_LIMIT)})")
    try:
        rows = con.execute(f"DESCRIBE SELECT * FROM {scan}", params.values).fetchall()
    except duckdb.Error:
        return False
    columns = [name for name, type_, *_ in rows if type_ == "JSON"]
    if len(columns) < len(rows) or len({c.lower() for c in columns}) < len(columns):
        return False  # a column DuckDB typed itself, or keys only case tells apart
    consumed = mapping.consumed()
    extras = [name for name in columns if name not in consumed]
    reader = _reader(f"{scan} AS r", columns, extras, mapping, params)
    try:
        lines = _plain_lines(con, log, max_line_bytes, extras)
        if lines is None:
            return False
        con.execute(converted_sql(reader, mapping, params), params.values)
        converted, bad = con.execute(f"SELECT count(*), count(reason) FROM {CONVERTED}").fetchone()
        return converted == lines and (bad == 0 or _quote_bad_lines(con, log, max_line_bytes, extras))
    except duckdb.Error:
        return False


def _quote_bad_lines(con, log: LogFile, max_line_bytes: int, extras: list[str]) -> bool:
    """Give the converted rows that will be quarantined the text of their line, which the JSON reader does not keep.

    Far cheaper than reading the whole file again with the line reader for a
    few bad lines.  Both scans hold every line in file order (checked by the
    caller), so a line has the same row id in the converted table and in the table of
    lines.  False when a line could list its extra fields in another order
    than the rebuilt ones: the line reader keeps each line's own order, and
    taking this path must not change the result.
    """
    for table in (REJECT_SCANS, REJECTS):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    try:
        scan = Params()
        con.execute(f"CREATE TEMP TABLE {_LINES} AS SELECT line FROM {jsonl_lines(log, scan, max_line_bytes)}",
                    scan.values)
        if len(extras) > 1:
            params = Params()
            # Without escapes, a quoted name before a colon is a key (maybe of a nested object, which
            # only makes a line look out of order): the names found must be the extras, in order.
            # A line with escapes (found is NULL) counts as out of order.
            found = (f"CASE WHEN NOT contains(line, chr(92)) "
                     f"THEN regexp_extract_all(line, {params(_keys_pattern(extras))}, 1) END")
            ordered = con.execute(
                f"SELECT bool_and(found IS NOT NULL AND found = list_filter({params(extras)}, "
                f"lambda name: list_contains(found, name))) FROM (SELECT {found} AS found FROM {_LINES})",
                params.values,
            ).fetchone()[0]
            if not ordered:
                return False
        con.execute(f"UPDATE {CONVERTED} SET raw = left({_LINES}.line, {RAW_KEPT}) FROM {_LINES} "
                    f"WHERE {CONVERTED}.reason IS NOT NULL AND {_LINES}.rowid = {CONVERTED}.rowid")
    finally:
        con.execute(f"DROP TABLE IF EXISTS {_LINES}")
    return True


def _keys_pattern(names: list[str]) -> str:
    """A regex matching `"name":` for any of the names (which must be written without escapes)."""
    return '"(' + "|".join(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", name) for name in names) + r')"\s*:'


def _plain_lines(con, log: LogFile, max_line_bytes: int, extras: list[str]) -> int | None:
    """The number of lines when every line is `{...}`, none is rejected and no extra field is null."""
    params = Params()
    for table in (REJECT_SCANS, REJECTS):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    null_extra = "false"
    if extras:
        # A key written with escapes would not match the pattern: such lines count as suspect too.
        pattern = params(_keys_pattern(extras) + r"\s*null")
        null_extra = (f"CASE WHEN contains(line, 'null') "
                      f"THEN contains(line, chr(92)) OR regexp_matches(line, {pattern}) ELSE false END")
    # fetchall: the reject tables are written when the scan finishes.
    [(count, plain, nulls)] = con.execute(
        "SELECT count(*), bool_and(starts_with(line, '{') AND ends_with(line, '}')), "
        f"bool_or({null_extra}) FROM {jsonl_lines(log, params, max_line_bytes)}",
        params.values,
    ).fetchall()
    rejected = con.execute(f"SELECT count(*) FROM {REJECTS}").fetchone()[0]
    return count if plain and not nulls and not rejected else None


def _reader(relation: str, columns: list[str], extras: list[str], mapping: FieldMapping, params: Params) -> Reader:
    def text(name: str) -> str:
        # The line reader's json_extract_string: strings unquoted, numbers as DuckDB renders them.
        return f"json_extract_string(struct_extract(r, {params(name)}), '$')"

    sources: dict[str, Source | None] = {}
    for field in FIELDS:
        present = [text(name) for name in mapping.sources(field) if name in columns]
        sources[field] = Source(f"coalesce({', '.join(present)})") if present else None
    # Only the present ones, each value as the JSON reader wrote it (nested nulls included).
    members = [f"CASE WHEN struct_extract(r, {params(name)}) IS NOT NULL THEN to_json({params(name)}) || ':' "
               f"|| struct_extract(r, {params(name)}) END" for name in extras]
    extra = f"CAST(NULLIF('{{' || concat_ws(',', {', '.join(members)}) || '}}', '{{}}') AS JSON)" if extras else "NULL"
    # The line reader's type checks, on the JSON reader's values.
    wrong_types = [json_type_problem(field, f"json_type(struct_extract(r, {params(name)}))")
                   for field, kind in FIELDS.items() if kind == TEXT for name in mapping.sources(field) if name in columns]
    broken = f"coalesce({', '.join(wrong_types)})" if len(wrong_types) > 1 else (wrong_types or ["NULL"])[0]
    return Reader(relation=relation, sources=sources, extra=extra, raw="NULL", blank="false", broken=broken,
                  header_lines=0, has_rejects=False)
