"""The records query: every record of one file, converted, with the reason it is unusable.

One parallel scan produces both the events and the quarantine of a file.
Readers that know each record's line (Parquet row numbers) are loaded from
this query directly.  The others are converted into a table first, which keeps
file order (DuckDB preserves insertion order), so a row's position in it is
its record number.
"""

from __future__ import annotations

from nonatomic.replay.ingest.convert import Source, column, problem
from nonatomic.replay.ingest.fields import FIELDS
from nonatomic.replay.ingest.mapping import FieldMapping
from nonatomic.replay.ingest.params import Params
from nonatomic.replay.ingest.readers import Reader

CONVERTED = "nonatomic_converted"
"""The table of one file's converted records (ingest reads it twice: events and quarantine)."""
RAW_KEPT = 1000
"""Characters of a quarantined line kept in the quarantine table."""


def converted_sql(reader: Reader, mapping: FieldMapping, params: Params) -> str:
    """CREATE the converted table from records_sql()."""
    return f"CREATE OR REPLACE TEMP TABLE {CONVERTED} AS {records_sql(reader, mapping, params)}"


def records_sql(reader: Reader, mapping: FieldMapping, params: Params) -> str:
    """SELECT the event columns, `extra`, `blank`, `reason`, `breaks`, `raw` (and `line` when the
    reader has it)."""
    converted, sources, problems = [], [], []
    for field, source in reader.sources.items():
        converted.append(f"{column(field, source, mapping.values.get(field), params)} AS {field}")
        selected = None
        if source is not None:
            sources.append(f"{source.sql} AS source_{field}")
            selected = Source(f"source_{field}", source.type)
        check = problem(field, selected, field, missing_reason(field, mapping), params)
        if check is not None:
            problems.append(check)
    # Joining the texts costs a string per record; most records have no problem at all.
    reason = (f"coalesce(broken, CASE WHEN coalesce({', '.join(problems)}) IS NOT NULL "
              f"THEN concat_ws('; ', {', '.join(problems)}) END)")
    line, line_sql = ("line, ", f"{reader.line} AS line, ") if reader.line is not None else ("", "")
    return f"""
        SELECT {line}{', '.join(FIELDS)}, extra, blank, reason, breaks,
               CASE WHEN reason IS NOT NULL THEN left(raw, {RAW_KEPT}) END AS raw
        FROM (
            SELECT *, {reason} AS reason
            FROM (
                SELECT {line_sql}{', '.join(converted + sources)},
                       {reader.extra} AS extra, {reader.blank} AS blank, {reader.breaks} AS breaks,
                       {reader.broken} AS broken, {reader.raw} AS raw
                FROM {reader.relation}
            )
        )
    """


def missing_reason(field: str, mapping: FieldMapping) -> str:
    """The quarantine reason of a missing required field (both engines word it alike)."""
    if field in mapping.fields:
        return f"missing {field} (field {mapping.fields[field]!r})"
    return f"missing {field}"
