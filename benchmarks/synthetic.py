"""A deterministic generator of realistic guard logs, for the benchmarks.

Written in DuckDB SQL so that ten million events take seconds.  Each task is
20 events: `task_start`, six steps of (call, verify, retried call), and
`task_end`.  About one call in five times out or fails with a 503 before its
retry; 19 tasks in 20 send idempotency keys; times are mostly RFC 3339 and
partly epoch milliseconds; every line has two extra fields; lines are
shuffled within blocks of 1000, as when many workers write one log.  The
pseudo-random choices are integer arithmetic on the row number, so a given
(n, seed) yields the same bytes on every machine.

Incident rate: a retry comes 80 ms plus up to 50 ms of jitter after the
first call, so about two steps in three retry under the 100 ms minimum
backoff (NR304), and in the tasks without keys a step whose two calls both
succeed applied its write twice (NR301): about 0.21 findings per event,
some 210k at 1M events.
"""

from __future__ import annotations

EVENTS_PER_TASK = 20
_TOOLS = ["refund_payment", "book_flight", "send_email", "update_crm", "deploy_service"]


def _events_sql(seed: int) -> str:
    # r(k): a value in [0, 1000) that looks random but depends only on the row and seed.
    def r(k: int) -> str:
        return f"((i * {2654435761 + 2 * k * 40503} + {k * 7919 + seed * 97}) % 4294967296 // 7 % 1000)"

    return f"""
    WITH base AS (
        SELECT i, i // {EVENTS_PER_TASK} AS task, i % {EVENTS_PER_TASK} AS j FROM range($n) t(i)
    ), shaped AS (
        SELECT i, task, j,
               CASE WHEN j = 0 THEN 'task_start' WHEN j = {EVENTS_PER_TASK - 1} THEN 'task_end'
                    WHEN (j - 1) % 3 = 1 THEN 'verify' ELSE 'call' END AS op,
               CASE WHEN j IN (0, {EVENTS_PER_TASK - 1}) THEN NULL ELSE (j - 1) // 3 + 1 END AS step,
               CASE WHEN (j - 1) % 3 = 2 THEN 2 WHEN j IN (0, {EVENTS_PER_TASK - 1}) THEN NULL ELSE 1 END AS attempt,
               TIMESTAMP '2024-05-01 00:00:00' + to_milliseconds(task * 1500 + j * 40 + {r(1)} // 20) AS moment
        FROM base
    )
    SELECT
        CASE WHEN {r(2)} < 900 THEN strftime(moment, '%Y-%m-%dT%H:%M:%S.%gZ')
             ELSE CAST(epoch_ms(moment) AS VARCHAR) END AS ts,
        'task-' || task AS task_id,
        step, attempt, op,
        CASE WHEN op = 'task_start' THEN 'started' WHEN op = 'task_end' THEN 'completed'
             WHEN op = 'call' AND attempt = 1 AND {r(3)} < 100 THEN 'timeout'
             WHEN op = 'call' AND attempt = 1 AND {r(3)} < 200 THEN 'error'
             ELSE 'ok' END AS status,
        CASE WHEN op = 'call' AND attempt = 1 AND {r(3)} BETWEEN 100 AND 199 THEN 503
             WHEN op = 'call' THEN 200 END AS code,
        CASE WHEN op IN ('call', 'verify') THEN list_extract({_TOOLS!r}, 1 + (task + step) % {len(_TOOLS)}) END AS tool,
        CASE WHEN op IN ('call', 'verify') THEN 'order:' || (task * 7 + step) END AS target,
        CASE WHEN op = 'call' AND task % 20 <> 0 THEN 'idem-' || task || '-' || step END AS idempotency_key,
        'worker-' || ({r(4)} % 8) AS host,
        {r(5)} AS latency_ms
    FROM shaped
    ORDER BY i // 1000, {r(6)}, i
    """


def write_jsonl(con, path: str, n: int, seed: int = 0) -> None:
    """Write n events as JSONL (epoch-millisecond times as JSON numbers)."""
    con.execute(
        f"COPY (SELECT * REPLACE (CASE WHEN ts LIKE '%Z' THEN to_json(ts) ELSE CAST(ts AS JSON) END AS ts) "
        f"FROM ({_events_sql(seed)})) TO $path (FORMAT json)",
        {"n": n, "path": path},
    )


def write_parquet(con, path: str, n: int, seed: int = 0) -> None:
    """Write n events as Parquet with a native UTC timestamp column."""
    con.execute(
        f"COPY (SELECT * REPLACE (coalesce(TRY_CAST(ts AS TIMESTAMPTZ), "
        f"make_timestamp(CAST(ts AS BIGINT) * 1000)::TIMESTAMPTZ) AS ts) "
        f"FROM ({_events_sql(seed)})) TO $path (FORMAT parquet)",
        {"n": n, "path": path},
    )
