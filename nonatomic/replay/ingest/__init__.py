"""Ingest log files into the events and quarantine tables, accounting for every line.

Per file, in one transaction: number the records (converting them into a table in file
order unless the reader numbers them, records.py), then copy good ones to
`events`, bad ones and the lines the reader rejected to `quarantine`, and
note the file in the ledger.  Each file's
`lines` (non-blank records read) is counted independently of the two tables,
so `lines = events + quarantined` is a check, not a definition.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

import duckdb

from nonatomic.replay.ingest import ledger, ndjson, otlp
from nonatomic.replay.ingest.compression import check_whole
from nonatomic.replay.ingest.database import transaction, unordered
from nonatomic.replay.ingest.fields import FIELDS
from nonatomic.replay.ingest.inputs import InputError, LogFile
from nonatomic.replay.ingest.lines import (
    BLANK_LINES,
    EXACT_LINES,
    LineEnds,
    lf_copy,
    line_ends,
    load_blank_lines,
    load_exact_lines,
)
from nonatomic.replay.ingest.mapping import FieldMapping
from nonatomic.replay.ingest.params import Params
from nonatomic.replay.ingest.readers import REJECT_SCANS, REJECTS, reader_for
from nonatomic.replay.ingest.records import RAW_KEPT, CONVERTED, records_sql, converted_sql
from nonatomic.replay.ingest.schema import EVENT_ROWS

DEFAULT_MAX_LINE_BYTES = 1 << 20

_REJECT_REASONS = {
    "INVALID ENCODING": "bytes that are not UTF-8",
    "LINE SIZE OVER MAXIMUM": "line longer than {max_line_bytes} bytes",
    "MISSING COLUMNS": "CSV row has too few columns",
    "TOO MANY COLUMNS": "CSV row has too many columns",
    "UNQUOTED VALUE": "CSV value with a stray quote",
}


@dataclass
class IngestResult:
    """What one ingest run added (the database may hold more from earlier runs)."""

    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Files the database already held in full."""
    changes: dict[str, str] = field(default_factory=dict)
    """Into a kept database: each file -> new, grown, replaced or unchanged (see ledger.py)."""
    unscanned: list[str] = field(default_factory=list)
    """Files whose line ends could not be checked (zstd, and the interpreter has no decoder)."""
    lines: int = 0
    events: int = 0
    quarantined: int = 0


def ingest(con, logs: list[LogFile], mapping: FieldMapping | None = None, *, persistent: bool = False,
           max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
           on_file: Callable[[LogFile, int], None] | None = None) -> IngestResult:
    """Ingest each file; `on_file(log, total)` is called after each (for progress)."""
    mapping = mapping or FieldMapping()
    result = IngestResult()
    for log in logs:
        plan = ledger.plan(con, log, persistent)
        if persistent:
            result.changes[log.path] = plan.change
        if plan.change == "unchanged":
            result.skipped.append(log.path)
        elif not plan.loads:
            with transaction(con):
                ledger.forget(con, log, plan)
        else:
            ends = LineEnds() if log.compression == "gzip" else None  # the integrity check reads gzip anyway
            check_whole(log, ends.feed if ends else None)
            if log.format == "otlp":
                lines, events, quarantined = otlp.ingest_file(con, log, plan, mapping, max_line_bytes)
            else:
                if ends is None and log.format != "parquet":
                    ends = line_ends(log)
                    if ends is None:
                        result.unscanned.append(log.path)
                lines, events, quarantined = _ingest_file(con, log, plan, mapping, max_line_bytes, ends)
            result.files.append(log.path)
            result.lines += lines
            result.events += events
            result.quarantined += quarantined
            if not persistent:
                con.execute("CHECKPOINT")  # compresses what the file added to the in-memory store (database.connect)
        if on_file is not None:
            on_file(log, len(logs))
    return result


def _ingest_file(con, log: LogFile, plan: ledger.Plan, mapping: FieldMapping, max_line_bytes: int,
                 ends: LineEnds | None):
    """`ends`: the file's line ends (None when unscanned, or Parquet).  A JSONL file with a
    lone CR has its lines split here.  A CSV file mixing LF and CRLF that the CSV reader
    refuses is read again from an LF copy (lines.py); one it reads (a CRLF inside a quoted
    value of an LF file) keeps its values as they are.  The ledger keeps the file itself:
    its size and content are what later runs compare."""
    exact = log.format == "jsonl" and ends is not None and ends.lone_cr
    with ExitStack() as scratch:
        source = log
        while True:
            try:
                records = _records(con, source, mapping, max_line_bytes, exact)
                with transaction(con):
                    return _load(con, log, plan, records)
            except duckdb.Error as exc:
                if source is log and log.format == "csv" and ends is not None and ends.mixed:
                    source = lf_copy(log, scratch.enter_context(tempfile.TemporaryDirectory(prefix="nonatomic-")))
                    continue
                hint = ""
                if log.format == "csv" and ends is None:
                    hint = (" (if its lines mix LF and CRLF ends, which the CSV reader cannot read: this Python "
                            "has no zstd decoder to make them one, Python 3.14 has; decompress the file first)")
                raise InputError(f"{log.path}: cannot read as {log.format}: {str(exc).splitlines()[0]}{hint}") from exc
            finally:
                for table in (CONVERTED, REJECTS, REJECT_SCANS, EXACT_LINES, BLANK_LINES):
                    con.execute(f"DROP TABLE IF EXISTS {table}")


@dataclass(frozen=True)
class _Records:
    """A subquery of the file's numbered records (`line`, the event columns, `extra`,
    `blank`, `reason`, `raw`) and the parameters it binds."""

    sql: str
    params: dict


def _records(con, log: LogFile, mapping: FieldMapping, max_line_bytes: int, exact: bool) -> _Records:
    if exact:
        load_exact_lines(con, log, max_line_bytes)
    elif log.format == "jsonl" and ndjson.convert_file(con, log, mapping, max_line_bytes):
        return _Records(f"({_numbered_sql(0, False, max_line_bytes)})", {})
    params = Params()
    reader = reader_for(con, log, mapping, params, max_line_bytes, exact_lines=exact)
    if reader.line is not None:
        # The reader numbers its records: no converted table, the loads scan the file itself.
        return _Records(f"({records_sql(reader, mapping, params)})", params.values)
    # Converted outside the transaction: rows written inside one get row ids
    # from a far-off range, and the converted table's row ids are its record numbers.
    for table in (REJECTS, REJECT_SCANS):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(converted_sql(reader, mapping, params), params.values)
    rejected = reader.has_rejects and con.execute(f"SELECT count(*) FROM {REJECTS}").fetchone()[0] > 0
    spanning = reader.breaks != "0" and con.execute(f"SELECT coalesce(max(breaks), 0) FROM {CONVERTED}").fetchone()[0] > 0
    # DuckDB's CSV reader skips empty lines without counting them.  (Inside a quoted value
    # spanning lines an empty line is no blank record, which a scan of lines cannot tell:
    # files with such values keep the reader's numbering.)
    blanks = log.format == "csv" and not spanning and load_blank_lines(con, log)
    return _Records(f"({_numbered_sql(reader.header_lines, rejected, max_line_bytes, spanning, blanks)})", {})


def _load(con, log: LogFile, plan: ledger.Plan, records: _Records) -> tuple[int, int, int]:
    stored = ledger.begin(con, log, plan)
    base = con.execute(f"SELECT coalesce(max(event_id), 0) FROM {EVENT_ROWS}").fetchone()[0]
    window = {**records.params, "after": plan.after_line}
    lines, last_line = con.execute(
        f"SELECT count(*) FILTER (WHERE NOT blank AND line > $after), coalesce(max(line), 0) FROM {records.sql}",
        window,
    ).fetchone()
    # Event ids and line numbers are columns: the order rows are written in does not matter.
    with unordered(con):
        events = con.execute(
            f"INSERT INTO {EVENT_ROWS} SELECT $base + line, $file_id, line, {', '.join(FIELDS)}, extra "
            f"FROM {records.sql} WHERE NOT blank AND reason IS NULL AND line > $after",
            {**window, "base": base, "file_id": stored},
        ).fetchone()[0]
        quarantined = 0
        if events < lines:  # a counted line that is not an event is a bad one: skip the scan for clean files
            quarantined = con.execute(
                f"INSERT INTO quarantine SELECT $file, line, reason, raw "
                f"FROM {records.sql} WHERE NOT blank AND reason IS NOT NULL AND line > $after",
                {**window, "file": plan.file},
            ).fetchone()[0]
    if log.format == "jsonl" and not ledger.ends_with_newline(log):
        con.execute("UPDATE quarantine SET reason = 'truncated last line: ' || reason "
                    "WHERE file = $file AND line = $line AND reason = 'invalid JSON'",
                    {"file": plan.file, "line": last_line})
    if plan.replace_line is not None:
        lines -= 1  # the replaced line was counted by the previous ingest
    ledger.record(con, log, plan, lines, last_line)
    return lines, events, quarantined


def _numbered_sql(header_lines: int, rejected: bool, max_line_bytes: int, spanning: bool = False,
                  blanks: bool = False) -> str:
    """The converted records with their line numbers, plus the rejected lines.

    Records are numbered first (the CSV reader numbers its rejects that way
    too), then, when some record spans lines (`spanning`), each moves down by
    the line breaks inside the records before it.  `blanks`: BLANK_LINES holds
    empty lines the reader skipped, which move the records after them down.
    """
    numbered = _record_numbers_sql(header_lines, rejected, max_line_bytes, blanks)
    if not spanning:
        return numbered
    return (f"SELECT line + coalesce(sum(breaks) OVER (ORDER BY line ROWS BETWEEN UNBOUNDED PRECEDING "
            f"AND 1 PRECEDING), 0) AS line, * EXCLUDE (line) FROM ({numbered})")


def _record_numbers_sql(header_lines: int, rejected: bool, max_line_bytes: int, blanks: bool = False) -> str:
    """The converted records and the rejected ones, each numbered as if every record were a line.

    Converted rows are numbered by position.  Lines the reader rejected or
    skipped (empty ones, `blanks`) never reached the converted table, so each
    converted row moves down by the number of such lines before it: the i-th of them
    (line r) comes after r - header - i converted rows, which an ASOF join
    looks up.  Rejected lines are rows too (quarantined); skipped ones are not.
    """
    first = 1 + header_lines
    if not rejected and not blanks:
        return f"SELECT rowid + {first} AS line, * FROM {CONVERTED}"
    reasons = " ".join(
        f"WHEN '{kind}' THEN '{text.format(max_line_bytes=int(max_line_bytes))}'"
        for kind, text in _REJECT_REASONS.items()
    )
    rejects = (f"""
            SELECT line,
                   string_agg(DISTINCT CASE error_type {reasons} ELSE lower(error_type) END, '; ') AS reason,
                   left(trim(any_value(csv_line), chr(10) || chr(13)), {RAW_KEPT}) AS raw
            FROM {REJECTS} GROUP BY line""" if rejected else
               "SELECT CAST(NULL AS BIGINT) AS line, CAST(NULL AS VARCHAR) AS reason, "
               "CAST(NULL AS VARCHAR) AS raw WHERE false")
    skipped = f"SELECT line FROM rejected UNION ALL SELECT line FROM {BLANK_LINES}" if blanks else (
        "SELECT line FROM rejected")
    return f"""
        WITH rejected AS ({rejects}),
        skipped AS ({skipped}),
        shifts AS (
            SELECT line - {header_lines} - row_number() OVER (ORDER BY line) AS before,
                   row_number() OVER (ORDER BY line) AS shift
            FROM skipped
        ),
        steps AS (SELECT before, max(shift) AS shift FROM shifts GROUP BY before),
        converted AS (SELECT rowid + 1 AS position, * FROM {CONVERTED})
        SELECT position + {header_lines} + coalesce(steps.shift, 0) AS line, converted.* EXCLUDE (position)
        FROM converted ASOF LEFT JOIN steps ON converted.position > steps.before
        UNION ALL BY NAME
        SELECT line, false AS blank, reason, raw FROM rejected
    """
