"""The canonical events table every detector reads, and the quarantine table.

One row per log line that passed validation.  `event_id` is unique inside a
database by construction (each file's ids start above the largest one, see
ingest.py), so no index checks it: keeping one costs more than the insert; `file`/`line` point back at the source line (1-based; for CSV the
physical line, the header being line 1; for Parquet the row number) so every finding can cite its evidence.
A task's order is `ts, seq, attempt, file, line` (see EVENT_ORDER).
"""

EVENTS_DDL = """
CREATE TABLE IF NOT EXISTS events (
    event_id        BIGINT NOT NULL,
    file            VARCHAR NOT NULL,
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

QUARANTINE_DDL = """
CREATE TABLE IF NOT EXISTS quarantine (
    file    VARCHAR NOT NULL,
    line    BIGINT NOT NULL,
    reason  VARCHAR NOT NULL,
    raw     VARCHAR
)
"""

EVENT_ORDER = "ts, seq NULLS LAST, attempt NULLS FIRST, file, line"
