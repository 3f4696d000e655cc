"""
## What it finds
A `lock_release` by an owner that does not hold the lock at that moment,
when either the owner never acquired it before, or another owner holds it
right then.  Releasing your own lease late (after its TTL ran out, with
nobody else holding it) or twice is harmless and not reported; NR201 covers
the late release.  The owner is `owner`, or the task id without a token.

## Why is this bad?
Worker A takes `lock:invoice:31` with a 10 s TTL and stalls for 12 s; the
lease expires and worker B takes the lock.  A wakes up and deletes the key in
its `finally`, releasing B's lock: worker C gets in while B is mid-write, and
two workers now edit the invoice.  Release with a compare-and-delete on the
owner token.

## Evidence
The current holder's acquire (if any) and the foreign release.
"""

from nonatomic.rules.replay.base import Detector, case, ev

SQL = """
WITH stray AS (
    SELECT r.*
    FROM nr_lock_events r
    WHERE r.op = 'lock_release'
      AND NOT COALESCE(
          r.prev_op = 'lock_acquire'
          AND (r.prev_ttl_ms IS NULL OR r.ts_ms <= r.prev_ms + r.prev_ttl_ms), FALSE)
),
holders AS (
    SELECT s.event_id, h.acquire_id, h.owner AS holder, s.ts_ms - h.start_ms AS held_ms,
           ROW_NUMBER() OVER (PARTITION BY s.event_id ORDER BY h.start_ms DESC, h.acquire_id) AS nth
    FROM stray s
    JOIN nr_leases h
      ON h.lock_name = s.lock_name AND h.owner <> s.owner
     AND h.start_ms <= s.ts_ms AND (h.end_ms IS NULL OR s.ts_ms < h.end_ms)
)
SELECT s.task_id, s.step, s.event_id AS anchor_id, [h.acquire_id, s.event_id] AS witness_ids,
       s.lock_name, s.owner, h.holder, h.held_ms,
       CASE WHEN h.acquire_id IS NULL THEN 'never' ELSE 'held' END AS variant
FROM stray s
LEFT JOIN holders h ON h.event_id = s.event_id AND h.nth = 1
WHERE h.acquire_id IS NOT NULL OR s.prev_op IS NULL
"""


def lock(ts, op, task, owner, **fields):
    return ev(ts, op, task=task, step=1, target="lock:invoice:31", owner=owner, **fields)


CASES = (
    case(
        "release-of-a-lock-never-acquired",
        [lock(0.0, "lock_acquire", "t1", "w1"), lock(1.0, "lock_release", "t2", "w2")],
        expect={("t2", 1)},
    ),
    case(
        "late-release-deletes-the-next-holders-lock",
        [
            lock(0.0, "lock_acquire", "t1", "w1", ttl_ms=10_000),
            lock(10.5, "lock_acquire", "t2", "w2", ttl_ms=10_000),
            lock(12.0, "lock_release", "t1", "w1"),
        ],
        expect={("t1", 1)},
    ),
    case(
        "failed-acquire-then-release-in-finally",
        [
            lock(0.0, "lock_acquire", "t1", "w1"),
            lock(0.5, "lock_acquire", "t2", "w2", status="error"),
            lock(0.6, "lock_release", "t2", "w2"),
        ],
        expect={("t2", 1)},
    ),
    case(
        "near-miss: owner releases its own lock",
        [lock(0.0, "lock_acquire", "t1", "w1"), lock(1.0, "lock_release", "t1", "w1")],
    ),
    case(
        "near-miss: late release with nobody holding",
        [
            lock(0.0, "lock_acquire", "t1", "w1", ttl_ms=1_000),
            lock(2.0, "lock_release", "t1", "w1"),
        ],
    ),
    case(
        "near-miss: released twice",
        [
            lock(0.0, "lock_acquire", "t1", "w1"),
            lock(1.0, "lock_release", "t1", "w1"),
            lock(1.1, "lock_release", "t1", "w1"),
        ],
    ),
)

DETECTOR = Detector(
    code="NR202",
    name="foreign-lock-release",
    severity="error",
    doc=__doc__,
    sql=SQL,
    message={
        "held": (
            "{owner} released lock `{lock_name}` while {holder} held it (acquired {held_ms:dur}"
            " earlier): the holder lost its lock without knowing"
        ),
        "never": "{owner} released lock `{lock_name}` without ever acquiring it",
    },
    witnesses=(
        ("holder_acquire_id", "{holder} acquired lock `{lock_name}`"),
        ("release_id", "{owner} released lock `{lock_name}`"),
    ),
    requires=("nr_lock_events", "nr_leases"),
    cases=CASES,
)
