"""
## What it finds
A `call` attempt and a `rollback` of the same (task, step) in flight at the
same time, where the attempt started first: the rollback started while the
attempt was still running (its end comes at or after the rollback's start,
or it never ended), or while the attempt's outcome was unknown (`timeout` or
`unknown`) and no completed `verify` of the step came in between, so its
write could still land at any moment.  One finding per attempt.

## Why is this bad?
Two writers race on one object and the last to finish wins.  A
`book_room` attempt hangs at the hotel API; after 30 s the agent gives up and
the rollback cancels the reservation, but the slow attempt completes a
second later and re-creates it.  The guest is billed for a room the agent
reported as released.  Settle the attempt first (cancel it, or verify its
outcome), then roll back.

## Evidence
The attempt's start (and end, if any) and the start of the rollback.
An attempt that starts after the rollback started is NR101 instead.
"""

from nonatomic.rules.replay.base import Detector, call, case, ev
from nonatomic.rules.replay.views import VERIFIED_BETWEEN, WRITE

SQL = f"""
WITH hits AS (
    SELECT c.task_id, c.step, c.attempt, c.tool, c.status,
           c.start_id AS call_id, c.end_id AS call_end_id, r.start_id AS anchor_id,
           r.start_ms - c.start_ms AS gap_ms,
           CASE WHEN c.end_id IS NULL OR c.end_pos >= r.start_pos THEN 'running' ELSE 'unknown' END
               AS variant,
           ROW_NUMBER() OVER (PARTITION BY c.start_id ORDER BY r.start_pos) AS nth
    FROM nr_ops c
    JOIN nr_ops r ON r.task_id = c.task_id AND r.step = c.step AND r.op = 'rollback'
    WHERE c.op = 'call' AND {WRITE.format(op="c")}
      AND c.start_pos < r.start_pos
      AND (c.end_id IS NULL OR c.end_pos >= r.start_pos
           OR (c.outcome = 'unknown'
               AND NOT {VERIFIED_BETWEEN.format(op="c", after="c.end_pos", before="r.start_pos")}))
)
SELECT task_id, step, anchor_id, [call_id, call_end_id, anchor_id] AS witness_ids,
       variant, attempt, tool, status, gap_ms
FROM hits
WHERE nth = 1
"""

CASES = (
    case(
        "rollback-while-attempt-running",
        [
            call(0.0, 2, 2, phase="start", tool="book_room", target="room:412"),
            ev(0.5, "rollback", step=2, phase="start", tool="cancel_room", target="room:412"),
            ev(0.9, "rollback", step=2, phase="end", status="ok", tool="cancel_room"),
            call(1.2, 2, 2, "ok", phase="end", tool="book_room", target="room:412"),
        ],
        expect={("t1", 2)},
    ),
    case(
        "rollback-after-unverified-timeout",
        [
            call(0.0, 3, 1, "timeout", tool="refund_payment", target="payment:77"),
            ev(1.0, "rollback", step=3, status="ok"),
        ],
        expect={("t1", 3)},
    ),
    case(
        "attempt-that-never-ended",
        [
            call(0.0, 1, 1, phase="start"),
            ev(5.0, "rollback", step=1, status="ok"),
        ],
        expect={("t1", 1)},
    ),
    case(
        "near-miss: timeout verified before the rollback",
        [
            call(0.0, 3, 1, "timeout", tool="refund_payment", target="payment:77"),
            ev(0.4, "verify", step=3, status="ok", tool="get_refund"),
            ev(1.0, "rollback", step=3, status="ok"),
        ],
    ),
    case(
        "near-miss: attempt ended (failed) before the rollback",
        [
            call(0.0, 2, 1, phase="start"),
            call(0.3, 2, 1, "error", code=503, phase="end"),
            ev(0.5, "rollback", step=2, status="ok"),
        ],
    ),
    case(
        "near-miss: retry began after the rollback (NR101)",
        [
            ev(0.0, "rollback", step=2, phase="start"),
            call(0.2, 2, 2, "ok"),
            ev(0.5, "rollback", step=2, phase="end", status="ok"),
        ],
    ),
    case(
        "near-miss: rollback of another step",
        [
            call(0.0, 1, 1, phase="start"),
            ev(0.5, "rollback", step=2, status="ok"),
            call(1.0, 1, 1, "ok", phase="end"),
        ],
    ),
)

DETECTOR = Detector(
    code="NR102",
    name="rollback-retry-overlap",
    severity="error",
    doc=__doc__,
    sql=SQL,
    message={
        "running": (
            "the rollback of step {step} started {gap_ms:dur} after attempt {attempt} `{tool}`"
            " began, while that attempt was still in flight: the final state depends on which"
            " finished last"
        ),
        "unknown": (
            "the rollback of step {step} started while the outcome of attempt {attempt} `{tool}`"
            " was unknown ({status}, never verified): its write may land after the rollback"
        ),
    },
    witnesses=(
        ("attempt_id", "attempt {attempt} `{tool}` of step {step} started first"),
        ("attempt_end_id", "that attempt ended ({status})"),
        ("rollback_id", "the rollback of step {step} started {gap_ms:dur} after the attempt"),
    ),
    requires=("nr_ops",),
    cases=CASES,
    needs_steps=True,
)
