"""The staging query: every record of one file, converted, with the reason it is unusable.

One parallel scan produces both the events and the quarantine of a file.
Its rows keep file order (DuckDB preserves insertion order), so a row's
position in the staging table is its record number.
"""

from __future__ import annotations

from nonatomic.replay.convert import Source, column, problem
from nonatomic.replay.fields import FIELDS
from nonatomic.replay.mapping import Mapping
from nonatomic.replay.params import Params
from nonatomic.replay.readers import Reader

STAGE = "nonatomic_stage"
RAW_KEPT = 1000
"""Characters of a quarantined line kept in the quarantine table."""


def stage_sql(reader: Reader, mapping: Mapping, params: Params) -> str:
    """CREATE the staging table: the event columns, `extra`, `blank`, `reason`, `raw`."""
    converted, sources, problems = [], [], []
    for field, source in reader.sources.items():
        converted.append(f"{column(field, source, mapping.values.get(field), params)} AS {field}")
        staged = None
        if source is not None:
            sources.append(f"{source.sql} AS source_{field}")
            staged = Source(f"source_{field}", source.type)
        check = problem(field, staged, field, _missing(field, mapping), params)
        if check is not None:
            problems.append(check)
    reason = f"coalesce(broken, NULLIF(concat_ws('; ', {', '.join(problems)}), ''))"
    return f"""
        CREATE OR REPLACE TEMP TABLE {STAGE} AS
        SELECT {', '.join(FIELDS)}, extra, blank, reason,
               CASE WHEN reason IS NOT NULL THEN left(raw, {RAW_KEPT}) END AS raw
        FROM (
            SELECT *, {reason} AS reason
            FROM (
                SELECT {', '.join(converted + sources)},
                       {reader.extra} AS extra, {reader.blank} AS blank,
                       {reader.broken} AS broken, {reader.raw} AS raw
                FROM {reader.relation}
            )
        )
    """


def _missing(field: str, mapping: Mapping) -> str:
    if field in mapping.fields:
        return f"missing {field} (field {mapping.fields[field]!r})"
    return f"missing {field}"
