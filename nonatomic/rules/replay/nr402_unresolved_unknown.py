"""
## What it finds
A write of an ended task (its attempts: same step, tool and target) whose
last attempt before the `task_end` has an unknown outcome (`timeout`, `unknown`, or no recorded end) and no
completed `verify` of that step between that outcome and the task's end.
Tasks that have not ended are not judged: they may still verify.

## Why is this bad?
Nobody knows whether the write happened, and the task reports a plain
failure.  A `cancel_subscription` call times out, the task ends `failed`,
and support tells the customer nothing was changed; the cancellation had
gone through.  End such tasks as "uncertain" and reconcile (verify) before
reporting, or hand the step to a reconciliation job.

## Severity
Error when the write is high or irreversible in the tool registry (a refund,
a payment, a transfer, an email, a deploy, a permission change); warning for
any other write.

## Evidence
The unknown attempt (start and end) and the task's end.
"""

from nonatomic.rules.replay.base import Detector, call, case, ev
from nonatomic.rules.replay.views import VERIFIED_BETWEEN, WRITE

SQL = f"""
WITH last_attempts AS (
    SELECT c.*, t.end_id AS task_end_id, t.end_pos AS task_end_pos, t.end_status
    FROM nr_attempts c
    JOIN nr_task_ends t ON t.task_id = c.task_id
    WHERE c.outcome IN ('unknown', 'open') AND {WRITE.format(op="c")}
      AND c.start_pos < t.end_pos AND (c.next_id IS NULL OR c.next_pos > t.end_pos)
)
SELECT l.task_id, l.step, COALESCE(l.end_id, l.start_id) AS anchor_id,
       [l.start_id, l.end_id, l.task_end_id] AS witness_ids,
       l.attempt, l.tool, COALESCE(l.status, 'no end logged') AS status, l.end_status
FROM last_attempts l
WHERE NOT {VERIFIED_BETWEEN.format(op="l", after="COALESCE(l.end_pos, l.start_pos)", before="l.task_end_pos")}
"""


def cancel(ts, attempt, status=None, **fields):
    return call(ts, 1, attempt, status, tool="cancel_subscription", target="sub:3391", **fields)


END = ev(12.0, "task_end", status="failed")

CASES = (
    case("timeout-then-the-task-failed", [cancel(0.0, 1, "timeout"), END], expect={("t1", 1)}),
    case("still-running-at-the-end", [cancel(0.0, 1, phase="start"), END], expect={("t1", 1)}),
    case(
        "the-verify-timed-out-too",
        [cancel(0.0, 1, "timeout"), ev(5.0, "verify", step=1, status="timeout"), END],
        expect={("t1", 1)},
    ),
    case(
        "a-verify-after-the-end-is-too-late",
        [cancel(0.0, 1, "timeout"), END, ev(13.0, "verify", step=1, status="ok")],
        expect={("t1", 1)},
    ),
    case(
        "near-miss: verified before the end",
        [cancel(0.0, 1, "timeout"), ev(5.0, "verify", step=1, status="ok"), END],
    ),
    case("near-miss: the retry succeeded", [cancel(0.0, 1, "timeout"), cancel(2.0, 2, "ok"), END]),
    case("near-miss: the task has not ended", [cancel(0.0, 1, "timeout")]),
    case("near-miss: a definite failure", [cancel(0.0, 1, "error", code=500), END]),
)

DETECTOR = Detector(
    code="NR402",
    name="unresolved-unknown",
    severity="warning",
    doc=__doc__,
    sql=SQL,
    message=(
        "the outcome of attempt {attempt} of step {step} `{tool}` is unknown ({status}) and no"
        " verify resolved it before the task ended ({end_status}): nobody knows whether the"
        " write happened"
    ),
    witnesses=(
        ("attempt_id", "attempt {attempt} `{tool}` of step {step} started"),
        ("outcome_id", "its outcome was {status}"),
        ("task_end_id", "the task ended ({end_status}) with no verify after it"),
    ),
    requires=("nr_attempts", "nr_task_ends"),
    cases=CASES,
    needs_steps=True,
    graded_by_write=True,
)
