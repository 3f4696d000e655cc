"""
## What it finds
Attempts (same task, step, tool and target) that start sooner after the previous attempt
ended than the minimum backoff (`min-backoff-ms` in `[tool.nonatomic.replay]`,
default 100 ms).  Attempts that overlap the previous one are concurrency, not
backoff, and are left to the other detectors.  One finding per step, at its
first hasty retry.

## Why is this bad?
An agent retries a failing `send_sms` five times within the same few
milliseconds: every try fails the same way, the provider rate-limits the
whole account, and a thousand agents retrying in lockstep turn a blip into
an outage.  Back off exponentially, with jitter.

## Evidence
Every hasty retry and the end of the attempt before it.
"""

from nonatomic.rules.replay.base import Detector, call, case

SQL = """
WITH hasty AS (
    SELECT a.*, a.start_ms - a.prev_end_ms AS wait_ms
    FROM nr_attempts a
    WHERE a.prev_end_ms IS NOT NULL
      AND a.start_ms >= a.prev_end_ms AND a.start_ms - a.prev_end_ms < $min_backoff_ms
),
ranked AS (
    SELECT h.*,
           ROW_NUMBER() OVER (PARTITION BY task_id, step ORDER BY start_pos) AS nth,
           COUNT(*) OVER (PARTITION BY task_id, step) AS n_hasty,
           MIN(wait_ms) OVER (PARTITION BY task_id, step) AS min_wait_ms
    FROM hasty h
),
witness_events AS (
    SELECT task_id, step, prev_end_id AS event_id FROM hasty
    UNION
    SELECT task_id, step, start_id FROM hasty
),
witnesses AS (
    SELECT task_id, step, list(event_id) AS witness_ids FROM witness_events GROUP BY task_id, step
)
SELECT r.task_id, r.step, r.start_id AS anchor_id, w.witness_ids, r.tool, r.n_hasty,
       r.min_wait_ms, $min_backoff_ms AS min_backoff_ms
FROM ranked r
JOIN witnesses w ON w.task_id = r.task_id AND w.step = r.step
WHERE r.nth = 1
"""


def sms(ts, attempt, status="error", step=1):
    return call(ts, step, attempt, status, code=503, tool="send_sms", target="phone:+15550100")


CASES = (
    case(
        "five-tries-in-forty-milliseconds",
        [sms(0.0, 1), sms(0.01, 2), sms(0.02, 3), sms(0.03, 4), sms(0.04, 5)],
        expect={("t1", 1)},
    ),
    case(
        "spaced-half-a-second-with-a-higher-minimum",
        [sms(0.0, 1), sms(0.5, 2), sms(1.5, 3)],
        expect={("t1", 1)},
        min_backoff_ms=1_000,
    ),
    case("near-miss: exponential backoff", [sms(0.0, 1), sms(0.5, 2), sms(1.5, 3)]),
    case(
        "near-miss: a slow attempt, then a proper wait",
        [
            call(0.0, 1, 1, phase="start", tool="send_sms"),
            call(9.9, 1, 1, "timeout", phase="end", tool="send_sms"),
            call(10.3, 1, 2, "ok", tool="send_sms"),
        ],
    ),
    case("near-miss: close calls of different steps", [sms(0.0, 1, step=1), sms(0.01, 1, step=2)]),
    case(
        "near-miss: a step that fans out over targets",
        [call(0.01 * n, 4, 1, "ok", tool="send_sms", target=f"phone:{n}") for n in range(3)],
    ),
)

DETECTOR = Detector(
    code="NR304",
    name="retry-storm",
    severity="warning",
    doc=__doc__,
    sql=SQL,
    message=(
        "step {step} `{tool}` was retried {min_wait_ms:dur} after the previous attempt ended,"
        " under the {min_backoff_ms:dur} minimum backoff (hasty retries in this step:"
        " {n_hasty}): retries in lockstep hammer a struggling service"
    ),
    witnesses=(
        ("attempt_ids", "attempts of step {step} `{tool}` closer than {min_backoff_ms:dur}"),
    ),
    requires=("nr_attempts",),
    cases=CASES,
    needs_steps=True,
    params={"min_backoff_ms": 100},
)
