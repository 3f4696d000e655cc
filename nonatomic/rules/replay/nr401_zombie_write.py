"""
## What it finds
A `call` of a write tool or a `rollback` that starts after its task's first
`task_end` (whatever its status: timeout, cancelled, failed, completed), or
one in flight when the task ended that completes (`ok`) after it: the caller
gave up on it, and it took effect anyway.  "After" is task order, so a write
and the end in the same millisecond are told apart by `seq`.  `verify` calls
and reads after the end are fine (reconciliation).  One finding per step, at
its first write after the end (or the one in flight).

## Why is this bad?
The caller was told the task is over, so nobody owns what it does next.  A
web handler wraps the agent in a 60 s timeout and answers 504, but never
cancels the agent task; the user clicks again and a second run starts, while
the first keeps going and updates the same order 20 s later.  Two runs now
write one order, and the first one's writes appear in no report.  Cancel the
work on timeout and check a cancellation flag before each write.

## Evidence
The task's end and the first write of the step after it (for a write in
flight, its start and its end after the task's end).
"""

from nonatomic.rules.replay.base import Detector, call, case, ev
from nonatomic.rules.replay.views import WRITE

SQL = f"""
WITH zombies AS (
    SELECT o.*, t.end_id AS task_end_id, t.end_status, t.end_ms AS task_end_ms,
           o.start_pos < t.end_pos AS in_flight,
           CASE WHEN o.start_pos < t.end_pos THEN o.end_ms ELSE o.start_ms END - t.end_ms AS after_ms,
           ROW_NUMBER() OVER (PARTITION BY o.task_id, o.step ORDER BY o.start_pos) AS nth,
           COUNT(*) OVER (PARTITION BY o.task_id, o.step) AS n_writes
    FROM nr_ops o
    JOIN nr_task_ends t ON t.task_id = o.task_id
    WHERE (o.start_pos > t.end_pos
           -- in flight at the end, and it took effect after it
           OR (o.start_pos < t.end_pos AND o.end_pos > t.end_pos AND o.status IN ('ok', 'completed')))
      AND (o.op = 'rollback' OR (o.op = 'call' AND {WRITE.format(op="o")}))
)
SELECT task_id, step, start_id AS anchor_id,
       [task_end_id, start_id, CASE WHEN in_flight THEN end_id END] AS witness_ids,
       CASE WHEN in_flight THEN 'in_flight' ELSE 'after_end' END AS variant,
       abs(start_ms - task_end_ms) AS start_offset_ms, CASE WHEN in_flight THEN 'before' ELSE 'after' END AS side,
       op, tool, end_status, after_ms, n_writes
FROM zombies
WHERE nth = 1
"""

END = ev(60.0, "task_end", status="timeout", code=504)

CASES = (
    case(
        "write-after-a-504",
        [call(1.0, 4, 1, phase="start", tool="update_order"), END, call(80.0, 5, 1, "ok", tool="update_order")],
        expect={("t1", 5)},
    ),
    case(
        "rollback-after-cancel",
        [ev(0.0, "task_end", status="cancelled"), ev(0.3, "rollback", step=2, status="ok", tool="release_hold")],
        expect={("t1", 2)},
    ),
    case(
        "same-millisecond-ordered-by-seq",
        [call(60.0, 5, 1, "ok", seq=9, tool="update_order"), ev(60.0, "task_end", status="completed", seq=8)],
        expect={("t1", 5)},
    ),
    case(
        "near-miss: same millisecond, the write first by seq",
        [ev(60.0, "task_end", status="completed", seq=9), call(60.0, 5, 1, "ok", seq=8)],
    ),
    case(
        "near-miss: verify and reads after the end",
        [
            call(0.0, 1, 1, "timeout"),
            END,
            ev(70.0, "verify", step=1, status="ok"),
            call(71.0, 1, 2, "ok", tool="get_order"),
        ],
    ),
    case(
        "in-flight-write-completes-after-the-end",
        [call(1.0, 4, 1, phase="start", tool="update_order"), END, call(80.0, 4, 1, "ok", phase="end",
                                                                        tool="update_order")],
        expect={("t1", 4)},
    ),
    case(
        "near-miss: in flight at the end, and it failed",
        [call(1.0, 4, 1, phase="start", tool="update_order"), END, call(80.0, 4, 1, "error", phase="end",
                                                                        tool="update_order")],
    ),
    case(
        "near-miss: a write that completed before the end",
        [call(1.0, 4, 1, phase="start", tool="update_order"), call(2.0, 4, 1, "ok", phase="end",
                                                                   tool="update_order"), END],
    ),
    case(
        "near-miss: another task's end",
        [ev(0.0, "task_end", task="t2", status="timeout"), call(1.0, 1, 1, "ok")],
    ),
)

DETECTOR = Detector(
    code="NR401",
    name="zombie-write",
    severity="error",
    doc=__doc__,
    sql=SQL,
    message={
        "after_end": (
            "{op} `{tool}` of step {step} started {after_ms:dur} after the task ended ({end_status}),"
            " the first of {n_writes} write(s) of this step after the end: nobody is waiting for"
            " this work any more"
        ),
        "in_flight": (
            "{op} `{tool}` of step {step} was in flight when the task ended ({end_status}) and"
            " completed {after_ms:dur} later: the caller gave up on it, and it took effect anyway"
        ),
    },
    witnesses=(
        ("task_end_id", "the task ended ({end_status})"),
        ("write_id", "{op} `{tool}` of step {step} started {start_offset_ms:dur} {side} the end"),
        ("write_end_id", "it completed {after_ms:dur} after the end"),
    ),
    requires=("nr_ops", "nr_task_ends"),
    cases=CASES,
)
