"""
## What it finds
A `call` attempt of a (task, step) that starts after a `rollback` of that same
step started.  One finding per such attempt; the witness rollback is the
latest one that started before it.

## Why is this bad?
Retry and rollback are two repair paths for one failure, and here both ran.
A `charge_card` step answers 503; the orchestrator starts the compensating
rollback (void the charge, release the seat) and, from a separate retry
policy, charges again 0.9 s later.  The rollback finishes first, the retry
succeeds after it: the order is cancelled and the customer is charged.

## Evidence
The start of the rollback and the start of the attempt that followed it.
A retry that started *before* the rollback and overlapped it is NR102.
"""

from nonatomic.rules.replay.base import Detector, call, case, ev
from nonatomic.rules.replay.views import WRITE

SQL = f"""
WITH hits AS (
    SELECT c.task_id, c.step, c.attempt, c.tool, c.start_id AS anchor_id,
           r.start_id AS rollback_id, c.start_ms - r.start_ms AS gap_ms,
           ROW_NUMBER() OVER (PARTITION BY c.start_id ORDER BY r.start_pos DESC) AS nth
    FROM nr_ops c
    JOIN nr_ops r ON r.task_id = c.task_id AND r.step = c.step AND r.op = 'rollback'
    WHERE c.op = 'call' AND {WRITE.format(op="c")}
      AND r.start_pos < c.start_pos
)
SELECT task_id, step, anchor_id, [rollback_id, anchor_id] AS witness_ids, attempt, tool, gap_ms
FROM hits
WHERE nth = 1
"""

CASES = (
    case(
        "retry-after-rollback-began",
        [
            call(0.0, 2, 1, "error", code=503),
            ev(1.0, "rollback", step=2, phase="start", tool="void_charge", target="order:1"),
            call(1.9, 2, 2, "ok"),
            ev(2.5, "rollback", step=2, phase="end", status="ok", tool="void_charge"),
        ],
        expect={("t1", 2)},
    ),
    case(
        "retry-after-rollback-finished",
        [
            call(0.0, 1, 1, "timeout"),
            ev(0.5, "rollback", step=1, status="ok"),
            call(2.0, 1, 2, "ok", phase="start"),
        ],
        expect={("t1", 1)},
    ),
    case(
        "near-miss: retry started before the rollback (NR102)",
        [
            call(0.0, 2, 1, "error", code=503),
            call(0.5, 2, 2, phase="start"),
            ev(1.0, "rollback", step=2, status="ok"),
            call(1.5, 2, 2, "ok", phase="end"),
        ],
    ),
    case(
        "near-miss: call after the rollback of another step",
        [
            ev(0.0, "rollback", step=1, status="ok"),
            call(1.0, 2, 1, "ok"),
        ],
    ),
    case(
        "near-miss: rollback in another task",
        [
            ev(0.0, "rollback", task="t2", step=2, status="ok"),
            call(1.0, 2, 2, "ok"),
        ],
    ),
    case(
        "near-miss: a read after the rollback",
        [
            ev(0.0, "rollback", step=2, status="ok"),
            call(1.0, 2, 2, "ok", tool="get_order"),
        ],
    ),
)

DETECTOR = Detector(
    code="NR101",
    name="retry-after-rollback",
    severity="error",
    doc=__doc__,
    sql=SQL,
    message=(
        "attempt {attempt} of step {step} `{tool}` started {gap_ms:dur} after the rollback"
        " of step {step} began: the retry re-applied what the rollback removed"
    ),
    witnesses=(
        ("rollback_id", "the rollback of step {step} started first"),
        ("retry_id", "attempt {attempt} `{tool}` started {gap_ms:dur} later"),
    ),
    requires=("nr_ops",),
    cases=CASES,
    needs_steps=True,
)
