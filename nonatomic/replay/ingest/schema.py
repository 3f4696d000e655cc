"""The canonical events every detector reads, and the quarantine table.

One row per log line that passed validation, stored in `event_rows` and read
through the `events` view, which adds each row's file name.  A row keeps a
small file number instead of the name: a name written ten million times is
most of a column's memory.  `event_id` is unique inside a database by
construction (each file's ids start above the largest one, see ingest.py), so
no index checks it: keeping one costs more than the insert; `file`/`line`
point back at the source line (1-based; for CSV the physical line, the header
being line 1; for Parquet the row number) so every finding can cite its
evidence.  A task's order is `ts, seq, attempt, file, line` (see EVENT_ORDER).
"""

from nonatomic.rules.replay.views import EVENT_ROWS

FILES_DDL = """
CREATE TABLE IF NOT EXISTS log_files (
    file_id INTEGER NOT NULL,
    file    VARCHAR NOT NULL
)
"""

EVENT_ROWS_DDL = f"""
CREATE TABLE IF NOT EXISTS {EVENT_ROWS} (
    event_id        BIGINT NOT NULL,
    file_id         INTEGER NOT NULL,
    line            BIGINT NOT NULL,
    ts              TIMESTAMPTZ NOT NULL,
    seq             BIGINT,
    task_id         VARCHAR NOT NULL,
    step            BIGINT,
    attempt         BIGINT,
    op              VARCHAR,
    phase           VARCHAR,
    status          VARCHAR,
    code            INTEGER,
    tool            VARCHAR,
    target          VARCHAR,
    idempotency_key VARCHAR,
    owner           VARCHAR,
    ttl_ms          BIGINT,
    error           VARCHAR,
    extra           JSON
)
"""

EVENTS_DDL = f"""
CREATE VIEW IF NOT EXISTS events AS
SELECT r.event_id, f.file, r.* EXCLUDE (event_id, file_id)
FROM {EVENT_ROWS} r JOIN log_files f USING (file_id)
"""

QUARANTINE_DDL = """
CREATE TABLE IF NOT EXISTS quarantine (
    file    VARCHAR NOT NULL,
    line    BIGINT NOT NULL,
    reason  VARCHAR NOT NULL,
    raw     VARCHAR
)
"""

TRACE_SPANS_DDL = """
CREATE TABLE IF NOT EXISTS trace_spans (
    file    VARCHAR NOT NULL,
    kind    VARCHAR NOT NULL,
    tool    BOOLEAN NOT NULL,
    spans   BIGINT NOT NULL
)
"""
"""Spans read from trace files: tool spans by convention, the others (ignored) by kind."""

SPANLESS_DOCUMENTS_DDL = """
CREATE TABLE IF NOT EXISTS spanless_documents (
    file      VARCHAR NOT NULL,
    documents BIGINT NOT NULL
)
"""
"""Trace documents (lines of a Collector file) that hold no span: read, though nothing came of them."""

EVENT_ORDER = "ts, seq NULLS LAST, attempt NULLS FIRST, file, line"
