"""
## What it finds
The same write (same task, tool and target) that succeeded more than once
without protection.  Successes are counted as effects: each success without
an idempotency key is one effect, and all successes under one key are one
effect (the service deduplicated the replay).  Two effects or more is a
finding: no key, a new key per attempt, or a mix.  Calls without a target or
tool are not judged (the log cannot say they touched the same object), nor
are tools named like reads.  One finding per write, at the second effect.

## Why is this bad?
A `refund_payment` for order 8821 times out on the agent's side after the
payment provider has already refunded; the retry, with no idempotency key,
refunds again.  Both calls answered `ok`, and the merchant is out twice the
amount.  A key built from `uuid4()` per attempt fails the same way: the
provider sees two different requests.  Send one stable key per logical write.

## Evidence
The end event of every effect (the `ok` answers).
"""

from nonatomic.rules.replay.base import Detector, call, case
from nonatomic.rules.replay.views import WRITE

SQL = f"""
WITH ok_writes AS (
    SELECT c.*
    FROM nr_ops c
    WHERE c.op = 'call' AND c.outcome = 'ok'
      AND c.tool IS NOT NULL AND c.target IS NOT NULL AND {WRITE.format(op="c")}
),
written_twice AS (
    -- most writes succeed once: a plain count drops them before the numbering
    SELECT task_id, tool, target
    FROM ok_writes
    GROUP BY task_id, tool, target
    HAVING COUNT(*) > 1
),
successes AS (
    SELECT o.*,
           ROW_NUMBER() OVER (
               PARTITION BY o.task_id, o.tool, o.target, o.idempotency_key ORDER BY o.start_pos
           ) AS nth_with_key
    FROM ok_writes o
    JOIN written_twice w ON w.task_id = o.task_id AND w.tool = o.tool AND w.target = o.target
),
effects AS (
    -- effects = unkeyed successes + the first success under each key
    SELECT s.*, ROW_NUMBER() OVER (PARTITION BY task_id, tool, target ORDER BY start_pos) AS nth
    FROM successes s
    WHERE idempotency_key IS NULL OR nth_with_key = 1
)
-- one finding per write with two effects or more, at the second
SELECT task_id, tool, target,
       max(CASE WHEN nth = 2 THEN step END) AS step,
       max(CASE WHEN nth = 2 THEN end_id END) AS anchor_id,
       list(end_id) AS witness_ids,
       COUNT(*) AS n_effects,
       CASE WHEN COUNT(idempotency_key) = 0 THEN 'no_key'
            WHEN COUNT(idempotency_key) = COUNT(*) THEN 'new_keys'
            ELSE 'some_keys' END AS variant
FROM effects
GROUP BY task_id, tool, target
HAVING COUNT(*) > 1
"""


def refund(ts, step, attempt, status="ok", **fields):
    return call(ts, step, attempt, status, tool="refund_payment", target="order:8821", **fields)


CASES = (
    case(
        "timeout-then-retry-without-key",
        [refund(0.0, 3, 1, phase="start"), refund(30.0, 3, 1, "ok", phase="end"), refund(31.0, 3, 2)],
        expect={("t1", 3)},
    ),
    case(
        "a-new-key-per-attempt",
        [refund(0.0, 3, 1, idempotency_key="k-51f2"), refund(2.0, 3, 2, idempotency_key="k-9ac0")],
        expect={("t1", 3)},
    ),
    case(
        "whole-flow-retry-repeats-an-earlier-step",
        [refund(0.0, 1, 1), call(1.0, 2, 1, "error", code=500, tool="notify"), refund(5.0, 1, 1)],
        expect={("t1", 1)},
    ),
    case(
        "near-miss: the same key answered twice (deduplicated replay)",
        [refund(0.0, 3, 1, idempotency_key="k-1"), refund(2.0, 3, 2, idempotency_key="k-1")],
    ),
    case(
        "near-miss: a for over different targets",
        [
            call(0.0, 4, 1, "ok", tool="send_email", target=f"user:{n}")
            for n in (101, 102, 103)
        ],
    ),
    case(
        "near-miss: one failure, one success",
        [refund(0.0, 3, 1, "error", code=503), refund(1.0, 3, 2)],
    ),
    case(
        "near-miss: a read repeated",
        [call(0.0, 1, 1, "ok", tool="get_order"), call(1.0, 1, 2, "ok", tool="get_order")],
    ),
    case(
        "near-miss: same target in two tasks",
        [refund(0.0, 3, 1), refund(1.0, 3, 1, task="t2")],
    ),
)

DETECTOR = Detector(
    code="NR301",
    name="duplicate-effect",
    severity="error",
    doc=__doc__,
    sql=SQL,
    message={
        "no_key": (
            "`{tool}` on {target} succeeded {n_effects} times without an idempotency key"
            " (again in step {step}): the effect was applied {n_effects} times"
        ),
        "new_keys": (
            "`{tool}` on {target} succeeded {n_effects} times with a different idempotency key"
            " each time (again in step {step}): a key that changes per attempt protects nothing"
        ),
        "some_keys": (
            "`{tool}` on {target} succeeded {n_effects} times, not under one idempotency key"
            " (again in step {step}): the unkeyed calls were not deduplicated"
        ),
    },
    witnesses=(
        ("effect_ids", "`{tool}` on {target} succeeded"),
    ),
    requires=("nr_ops",),
    cases=CASES,
)
