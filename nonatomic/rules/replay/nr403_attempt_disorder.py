"""
## What it finds
Attempt numbers (same task, step, tool and target) that do not increase in time: an attempt
that starts after an attempt with the same number (repeated) or a higher
one (backwards).  Gaps (1, 3) are fine.  Time is task order (ts, then seq),
not file order.  One finding per step, at its first disorder.

## Why is this bad?
Attempt numbers are how a log tells retries apart; when they repeat, two
workers ran the same step, or the whole flow restarted and reset the
counter, and every per-attempt guard (max attempts, attempt-scoped keys)
silently stops working.  A booking flow restarted after a crash runs
`reserve_seat` as attempt 1 again and books a second seat.

## Evidence
The earlier attempt's start and the out-of-order attempt's start.
"""

from nonatomic.rules.replay.base import Detector, call, case

SQL = """
WITH disorder AS (
    SELECT a.*, ROW_NUMBER() OVER (PARTITION BY task_id, step ORDER BY start_pos) AS nth
    FROM nr_attempts a
    WHERE a.attempt <= a.prev_attempt
)
SELECT task_id, step, start_id AS anchor_id, [prev_id, start_id] AS witness_ids,
       tool, attempt, prev_attempt,
       CASE WHEN attempt = prev_attempt THEN 'repeated' ELSE 'backwards' END AS variant
FROM disorder
WHERE nth = 1
"""


def seat(ts, attempt, status="error", **fields):
    return call(ts, 1, attempt, status, tool="reserve_seat", target="flight:LH441", **fields)


CASES = (
    case("attempt-1-twice", [seat(0.0, 1), seat(1.0, 1, "ok")], expect={("t1", 1)}),
    case("counter-went-backwards", [seat(0.0, 2), seat(1.0, 1, "ok")], expect={("t1", 1)}),
    case("near-miss: increasing with a gap", [seat(0.0, 1), seat(1.0, 3, "ok")]),
    case("near-miss: file out of time order", [seat(1.0, 2, "ok"), seat(0.0, 1)]),
    case(
        "near-miss: same millisecond ordered by seq",
        [seat(1.0, 2, "ok", seq=4), seat(1.0, 1, seq=3)],
    ),
    case("near-miss: different steps", [seat(0.0, 2), call(1.0, 2, 1, "ok")]),
    case(
        "near-miss: a step that fans out over targets",
        [call(0.1 * n, 4, 1, "ok", tool="send_email", target=f"user:{n}") for n in range(3)],
    ),
)

DETECTOR = Detector(
    code="NR403",
    name="attempt-disorder",
    severity="warning",
    doc=__doc__,
    sql=SQL,
    message={
        "repeated": (
            "attempt {attempt} of step {step} `{tool}` ran twice: two workers ran the step, or the"
            " attempt counter was reset"
        ),
        "backwards": (
            "attempt {attempt} of step {step} `{tool}` started after attempt {prev_attempt}: the"
            " attempt counter went backwards (a restarted flow, or two workers)"
        ),
    },
    witnesses=(
        ("earlier_id", "attempt {prev_attempt} `{tool}` of step {step} started first"),
        ("attempt_id", "attempt {attempt} started after it"),
    ),
    requires=("nr_attempts",),
    cases=CASES,
    needs_steps=True,
)
