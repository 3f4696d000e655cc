"""
## What it finds
The next attempt (same task, step, tool and target) after an attempt whose status code is
non-retryable: by default 400, 401, 403, 404 and 422 (the request itself is
wrong), configurable as `non-retryable` in `[tool.nonatomic.replay]` (after
Temporal's `non_retryable_error_types`).  408, 425, 429 and 5xx stay
retryable; a 409 is retryable only after checking whether the first write
landed, so it is not in the default set.  One finding per such retry.

## Why is this bad?
A rejected request does not improve by repetition; retrying it burns the
retry budget, delays the rollback the failure calls for, and hides the real
error behind "max attempts exceeded".  An agent retries a `create_invoice`
answered 422 (bad tax id) three times with backoff, then the task times out
and the rollback that should have run at once never runs.

## Evidence
The end of the rejected attempt and the start of the retry.
"""

from nonatomic.rules.replay.base import Detector, call, case, ev

SQL = """
SELECT task_id, step, next_id AS anchor_id, [end_id, next_id] AS witness_ids,
       tool, attempt, next_attempt, code, next_ms - end_ms AS gap_ms
FROM nr_attempts
WHERE next_id IS NOT NULL AND array_contains($non_retryable, code)
"""


def invoice(ts, attempt, status, code=None):
    return call(ts, 1, attempt, status, code=code, tool="create_invoice", target="invoice:draft-7")


CASES = (
    case(
        "retry-after-422",
        [invoice(0.0, 1, "error", 422), invoice(1.3, 2, "error", 422), invoice(4.0, 3, "ok", 200)],
        expect={("t1", 1)},
    ),
    case(
        "retry-after-409-when-configured",
        [invoice(0.0, 1, "error", 409), invoice(1.0, 2, "ok", 200)],
        expect={("t1", 1)},
        non_retryable=[409],
    ),
    case("near-miss: retry after 503", [invoice(0.0, 1, "error", 503), invoice(1.0, 2, "ok", 200)]),
    case("near-miss: retry after 429", [invoice(0.0, 1, "error", 429), invoice(2.0, 2, "ok", 200)]),
    case("near-miss: retry after 409 by default", [invoice(0.0, 1, "error", 409), invoice(1.0, 2, "ok")]),
    case(
        "near-miss: 422 then rollback, no retry",
        [invoice(0.0, 1, "error", 422), ev(0.2, "rollback", step=1, status="ok")],
    ),
)

DETECTOR = Detector(
    code="NR302",
    name="retry-after-non-retryable",
    severity="warning",
    doc=__doc__,
    sql=SQL,
    message=(
        "attempt {next_attempt} of step {step} `{tool}` retried {gap_ms:dur} after attempt"
        " {attempt} was rejected with non-retryable {code}: a rejected request does not improve"
        " by repetition"
    ),
    witnesses=(
        ("rejected_id", "attempt {attempt} `{tool}` was rejected with {code}"),
        ("retry_id", "attempt {next_attempt} started {gap_ms:dur} later"),
    ),
    requires=("nr_attempts",),
    cases=CASES,
    needs_steps=True,
    params={"non_retryable": [400, 401, 403, 404, 422]},
)
