"""
## What it finds
After a write attempt whose outcome is unknown (`timeout`, `unknown`, or no
recorded end), the next attempt (same task, step, tool and target) with no
completed `verify` of that step in between.  One finding per unknown outcome.

## Why is this bad?
A timeout says the caller stopped waiting, not that the write did not happen.
A `transfer_funds` call times out at 10 s while the bank books it at 11 s;
the agent retries at once and the bank books it again.  Ask first (a status
or lookup call logged as `verify`), and retry only what did not land, or use
an idempotency key the bank honours.

## Severity
Error when the write is high or irreversible in the tool registry (a refund,
a payment, a transfer, an email, a deploy, a permission change); warning for
any other write.

## Evidence
The unknown outcome and the start of the retry.
"""

from nonatomic.rules.replay.base import Detector, call, case, ev
from nonatomic.rules.replay.views import VERIFIED_BETWEEN, WRITE

SQL = f"""
SELECT p.task_id, p.step, p.next_id AS anchor_id,
       [p.start_id, p.end_id, p.next_id] AS witness_ids,
       p.tool, p.attempt, p.next_attempt, COALESCE(p.status, 'no end logged') AS status,
       p.next_ms - COALESCE(p.end_ms, p.start_ms) AS gap_ms
FROM nr_attempts p
WHERE p.outcome IN ('unknown', 'open') AND p.next_id IS NOT NULL AND {WRITE.format(op="p")}
  AND NOT {VERIFIED_BETWEEN.format(op="p", after="COALESCE(p.end_pos, p.start_pos)", before="p.next_pos")}
"""


def transfer(ts, attempt, status=None, **fields):
    return call(ts, 2, attempt, status, tool="transfer_funds", target="account:40-118", **fields)


CASES = (
    case("retry-after-timeout", [transfer(0.0, 1, "timeout"), transfer(0.5, 2, "ok")], expect={("t1", 2)}),
    case(
        "retry-while-the-first-never-ended",
        [transfer(0.0, 1, phase="start"), transfer(12.0, 2, "ok")],
        expect={("t1", 2)},
    ),
    case(
        "a-verify-of-another-step-does-not-count",
        [transfer(0.0, 1, "unknown"), ev(0.2, "verify", step=1, status="ok"), transfer(0.5, 2, "ok")],
        expect={("t1", 2)},
    ),
    case(
        "a-verify-that-timed-out-does-not-count",
        [transfer(0.0, 1, "timeout"), ev(0.2, "verify", step=2, status="timeout"), transfer(0.5, 2)],
        expect={("t1", 2)},
    ),
    case(
        "near-miss: verified timeout, then retry",
        [
            transfer(0.0, 1, "timeout"),
            ev(1.0, "verify", step=2, phase="start", tool="get_transfer"),
            ev(1.4, "verify", step=2, phase="end", status="ok", tool="get_transfer"),
            transfer(2.0, 2, "ok"),
        ],
    ),
    case("near-miss: retry after a 503", [transfer(0.0, 1, "error", code=503), transfer(1.0, 2, "ok")]),
    case(
        "near-miss: a read timed out",
        [call(0.0, 2, 1, "timeout", tool="get_balance"), call(0.5, 2, 2, "ok", tool="get_balance")],
    ),
    case("near-miss: timeout, no retry", [transfer(0.0, 1, "timeout")]),
)

DETECTOR = Detector(
    code="NR303",
    name="retry-without-verify",
    severity="warning",
    doc=__doc__,
    sql=SQL,
    message=(
        "attempt {next_attempt} of step {step} `{tool}` started {gap_ms:dur} after attempt"
        " {attempt} ({status}), with no verify in between: if the first write landed, the retry"
        " applies it twice"
    ),
    witnesses=(
        ("attempt_id", "attempt {attempt} `{tool}` of step {step} started"),
        ("outcome_id", "its outcome was {status}"),
        ("retry_id", "attempt {next_attempt} started {gap_ms:dur} later, with no verify before it"),
    ),
    requires=("nr_attempts",),
    cases=CASES,
    needs_steps=True,
    graded_by_write=True,
)
