"""The shared stages every detector reads: ordered events, op intervals, task ends, lock leases.

Each stage is a named query the engine materialises once per run (as a
temporary table) before the detectors that need it, so twelve detectors do
not pair the same ten million events twelve times; a stage that is only a
filter of the stored events stays a view (`Stage.materialized`).  Stages take no
parameters; detectors apply their settings.

Model (the detectors' documentation refers to these terms):

- **order**: `pos` ranks a task's events in the engine's event order
  (ts, then seq, then attempt, then file position); "before"/"after" inside a
  task compare `pos`, so equal timestamps are ordered by the emitter's seq.
  Only comparisons of `pos` mean anything (it is not always 1, 2, 3...).
- **interval**: an op logged as `phase=start`/`phase=end`: a start pairs
  with the next start/end event of its (task, step, attempt, op) when that
  is an end.  An event without phase is an instant (start = end).  A start
  without an end is an *open* interval: still in flight when the log ends.
  An end without a start is an instant (it still tells the outcome).
- **outcome** of an interval (from its end event's status): `ok` (ok,
  completed), `unknown` (timeout, unknown), `failed` (error, failed,
  cancelled), `open` (no end), `other` (no status).  Like Jepsen's `:info`
  operations, an `unknown` or `open` write may have taken effect, at any
  later time, until a `verify` of its step completes (outcome `ok`).
- **attempts** of a step: its calls with the same tool and target, in
  start order (a step that fans out over targets is several sequences).
- **lease**: a successful `lock_acquire` (status ok/completed or none) of a
  lock (`target`) by an owner (`owner`, or the task id when the log has no
  owner token).  It ends at the owner's next lock event on that lock: a
  release (`released`) or another acquire (`renewed`), unless its
  `ttl_ms` ran out first (`expired`); with neither it stays `open`.  A lease
  is half-open, [acquire, end): a release and an acquire at the same
  millisecond are a clean hand-over.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    name: str
    sql: str
    requires: tuple[str, ...] = ()
    materialized: bool = True
    """False: a view its readers inline (a filter and projection they each push into their own scan)."""


OUTCOME = {"ok": "ok", "completed": "ok", "timeout": "unknown", "unknown": "unknown",
           "error": "failed", "failed": "failed", "cancelled": "failed"}
"""A status as an outcome class (any other status is `other`): the one table that nr_ops'
SQL is generated from and the timelines read."""


def _statuses(outcome: str) -> str:
    return ", ".join(f"'{status}'" for status, to in OUTCOME.items() if to == outcome)


_OUTCOME_CASE = "\n".join(f"               WHEN status IN ({_statuses(outcome)}) THEN '{outcome}'"
                          for outcome in dict.fromkeys(OUTCOME.values()))

EVENT_ROWS = "event_rows"
"""The stored events (the `events` view adds file names, which only the event order needs)."""

KEPT_OPS = "op IN ('call', 'rollback', 'verify', 'task_end', 'lock_acquire', 'lock_release')"
"""The events detectors read; other ops are dropped before numbering (positions
only ever compare events of the same task, so numbering the kept ones keeps their order)."""

LOCK_OP_NAMES = ("lock_acquire", "lock_release")
LOCK_OPS = "(" + ", ".join(f"'{op}'" for op in LOCK_OP_NAMES) + ")"
"""The ops of lock events, and the same as an SQL list."""

SAME_TIME_IN_A_TASK = f"""
SELECT count(DISTINCT hash(task_id, ts)) < count(*) FROM {EVENT_ROWS} WHERE {KEPT_OPS}
"""
"""Might two kept events of one task share a timestamp?  Then only numbering orders them.
(One integer key counts faster than text and a time, and a distinct count than a
grouping; a hash collision can only answer yes, which costs the numbering, never correctness.)"""


def events_stage(event_order: str, same_time: bool = True, join_back: bool = True) -> Stage:
    """`nr_events`: the events detectors read, with per-task position and epoch milliseconds.

    A position only ever stands for its event's place in the task's order.
    When no two events of a task share a time (`same_time` false, see
    SAME_TIME_IN_A_TASK), time alone is that order and the time in
    microseconds serves as the position, without sorting anything: the stage
    is then a view, which each stage reading it folds into its own scan of
    the events (they read disjoint ops, so nothing is computed twice).  The
    view keeps every op: each stage selects its own ops, all of them kept
    ones, and a second list of ops would cost each scan a join.
    Otherwise events are numbered in the event order, once, into a table:
    DuckDB numbers a narrow projection and joins it back (`join_back`); an
    engine whose events are already partitioned by task (Spark) numbers them
    in place, as a join on the event id would shuffle every event twice and
    lose that partitioning for every later stage.

    The engine owns the event order (it is part of the table's contract), so it
    passes its ORDER BY list in; every other stage builds on this one.
    """
    columns = ("event_id, task_id, step, attempt, op, phase, status, code, tool, target, "
               "idempotency_key, owner, ttl_ms, epoch_ms(ts) AS ts_ms")
    if not same_time:
        return Stage("nr_events", f"SELECT {columns}, epoch_us(ts) AS pos FROM {EVENT_ROWS}", materialized=False)
    numbering = f"ROW_NUMBER() OVER (PARTITION BY task_id ORDER BY {event_order}) AS pos"
    if not join_back:
        return Stage("nr_events", f"SELECT {columns}, {numbering} FROM events WHERE {KEPT_OPS}")
    # Numbering a narrow projection and joining it back sorts far fewer bytes
    # (and holds less memory) than carrying every column through the window.
    # Only the numbering reads `events`, the view with file names, which the order ends on.
    return Stage(
        "nr_events",
        f"""
        WITH numbered AS (
            SELECT event_id, {numbering}
            FROM events
            WHERE {KEPT_OPS}
        )
        SELECT {columns}, numbered.pos
        FROM {EVENT_ROWS}
        JOIN numbered USING (event_id)
        """,
    )


OPS = Stage(
    "nr_ops",
    f"""
    WITH phased AS (
        SELECT event_id, task_id, step, attempt, op, phase, status, code, tool, target,
               idempotency_key, pos, ts_ms,
               LAG(phase) OVER w AS prev_phase, LEAD(phase) OVER w AS next_phase,
               LEAD(event_id) OVER w AS next_id, LEAD(pos) OVER w AS next_pos,
               LEAD(ts_ms) OVER w AS next_ms, LEAD(status) OVER w AS next_status,
               LEAD(code) OVER w AS next_code, LEAD(tool) OVER w AS next_tool,
               LEAD(target) OVER w AS next_target, LEAD(idempotency_key) OVER w AS next_key
        FROM nr_events
        WHERE op IN ('call', 'rollback', 'verify') AND phase IN ('start', 'end')
        WINDOW w AS (PARTITION BY task_id, step, attempt, op ORDER BY pos)
    ),
    starts AS (
        -- a start pairs with the next phased event of its attempt when that is an end; an end
        -- whose start is missing is an interval of its own (the end still tells the outcome).
        -- One read of `phased` gives both: Spark would compute its windows once per read.
        SELECT p.*, phase = 'start' AND next_phase = 'end' AS paired, phase = 'end' AS orphan
        FROM phased p
        WHERE phase = 'start' OR prev_phase IS DISTINCT FROM 'start'
    ),
    intervals AS (
        SELECT task_id, step, attempt, op,
               COALESCE(tool, CASE WHEN paired THEN next_tool END) AS tool,
               COALESCE(target, CASE WHEN paired THEN next_target END) AS target,
               COALESCE(idempotency_key, CASE WHEN paired THEN next_key END) AS idempotency_key,
               CASE WHEN paired THEN next_status WHEN orphan THEN status END AS status,
               CASE WHEN paired THEN next_code WHEN orphan THEN code END AS code,
               event_id AS start_id, pos AS start_pos, ts_ms AS start_ms,
               CASE WHEN paired THEN next_id WHEN orphan THEN event_id END AS end_id,
               CASE WHEN paired THEN next_pos WHEN orphan THEN pos END AS end_pos,
               CASE WHEN paired THEN next_ms WHEN orphan THEN ts_ms END AS end_ms
        FROM starts
        UNION ALL
        -- instants
        SELECT task_id, step, attempt, op, tool, target, idempotency_key, status, code,
               event_id, pos, ts_ms, event_id, pos, ts_ms
        FROM nr_events
        WHERE op IN ('call', 'rollback', 'verify') AND (phase IS NULL OR phase NOT IN ('start', 'end'))
    )
    SELECT i.*,
           CASE
               WHEN end_id IS NULL THEN 'open'
{_OUTCOME_CASE}
               ELSE 'other'
           END AS outcome
    FROM intervals i
    """,
    requires=("nr_events",),
)

TASK_ENDS = Stage(
    "nr_task_ends",
    """
    -- the first task_end of each task (positions are unique in a task)
    SELECT task_id, arg_min(event_id, pos) AS end_id, min(pos) AS end_pos, arg_min(ts_ms, pos) AS end_ms,
           arg_min(COALESCE(status, 'ended'), pos) AS end_status
    FROM nr_events
    WHERE op = 'task_end'
    GROUP BY task_id
    """,
    requires=("nr_events",),
)

LOCK_EVENTS = Stage(
    "nr_lock_events",
    f"""
    SELECT l.*,
           LAG(op) OVER w AS prev_op, LAG(ts_ms) OVER w AS prev_ms, LAG(ttl_ms) OVER w AS prev_ttl_ms,
           LEAD(op) OVER w AS next_op, LEAD(ts_ms) OVER w AS next_ms, LEAD(event_id) OVER w AS next_id
    FROM (
        SELECT event_id, task_id, step, pos, ts_ms, op, ttl_ms,
               target AS lock_name, COALESCE(owner, task_id) AS owner
        FROM nr_events
        WHERE op IN {LOCK_OPS}
          AND target IS NOT NULL
          AND (status IS NULL OR status IN ({_statuses('ok')}))
    ) l
    WINDOW w AS (PARTITION BY lock_name, owner ORDER BY ts_ms, task_id, pos)
    """,
    requires=("nr_events",),
)

LEASES = Stage(
    "nr_leases",
    """
    WITH acquires AS (
        SELECT event_id AS acquire_id, task_id, step, lock_name, owner, ttl_ms,
               ts_ms AS start_ms, ts_ms + ttl_ms AS expiry_ms, next_op, next_ms, next_id,
               prev_op = 'lock_acquire' AND (prev_ttl_ms IS NULL OR ts_ms <= prev_ms + prev_ttl_ms)
                   AS is_renewal
        FROM nr_lock_events
        WHERE op = 'lock_acquire'
    ),
    ended AS (
        SELECT a.*,
               CASE
                   WHEN next_op IS NOT NULL AND (expiry_ms IS NULL OR next_ms <= expiry_ms)
                       THEN CASE WHEN next_op = 'lock_release' THEN 'released' ELSE 'renewed' END
                   WHEN expiry_ms IS NOT NULL THEN 'expired'
                   ELSE 'open'
               END AS end_kind
        FROM acquires a
    )
    SELECT acquire_id, task_id, step, lock_name, owner, ttl_ms, start_ms, is_renewal, end_kind,
           CASE WHEN end_kind IN ('released', 'renewed') THEN next_ms ELSE expiry_ms END AS end_ms,
           CASE WHEN end_kind = 'released' THEN next_id END AS release_id
    FROM ended
    """,
    requires=("nr_lock_events",),
)

ATTEMPTS = Stage(
    "nr_attempts",
    """
    SELECT task_id, step, attempt, tool, status, code, outcome,
           start_id, start_pos, start_ms, end_id, end_pos, end_ms,
           LAG(start_id) OVER w AS prev_id, LAG(end_id) OVER w AS prev_end_id,
           LAG(attempt) OVER w AS prev_attempt, LAG(end_ms) OVER w AS prev_end_ms,
           LEAD(start_id) OVER w AS next_id, LEAD(start_pos) OVER w AS next_pos,
           LEAD(start_ms) OVER w AS next_ms, LEAD(attempt) OVER w AS next_attempt
    FROM nr_ops
    WHERE op = 'call' AND step IS NOT NULL
    WINDOW w AS (PARTITION BY task_id, step, tool, target ORDER BY start_pos)
    """,
    requires=("nr_ops",),
)
"""Attempts: the calls of a step to one tool and target in start order, each with the
previous and next attempt.  Keyed by tool and target too, because a step that
fans out (`for user in users: send_email(user)`) logs attempt 1 per target.
It carries only the op columns its readers use: the window sorts every column it carries."""

STAGES: dict[str, Stage] = {s.name: s for s in (OPS, ATTEMPTS, TASK_ENDS, LOCK_EVENTS, LEASES)}
"""Every stage but `nr_events` (see events_stage), by name."""

FOREVER_MS = "9223372036854775807"
"""An open interval's end in comparisons (BIGINT max): it may still act at any later time."""

WRITE = "({op}.tool IS NULL OR NOT regexp_matches({op}.tool, $read_tools))"
"""Is {op}'s tool a write?  Tools named like reads (see base.SHARED_PARAMS) are not."""

VERIFIED_BETWEEN = """EXISTS (
        SELECT 1 FROM nr_ops v
        WHERE v.op = 'verify' AND v.outcome = 'ok'
          AND v.task_id = {op}.task_id AND v.step = {op}.step
          AND v.end_pos > {after} AND v.end_pos < {before}
    )"""
"""A completed verify of {op}'s step between two task positions (a template over aliases)."""
