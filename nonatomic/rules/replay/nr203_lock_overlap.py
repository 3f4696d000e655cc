"""
## What it finds
Two owners holding the same lock at once, in the same task or across tasks:
a lease starts while a lease of another owner on that lock has not ended
(see the lease model in `views.py`: released, renewed, expired by TTL, or
open).  A lease is [acquire, end): a release and an acquire in the same
millisecond are a hand-over, not an overlap.  One finding per overlapping
lease, at the later acquire.

## Why is this bad?
The lock exists so that one writer at a time touches the object; when two
hold it, it protects nothing.  Two agent runs for the same ticket both
"acquire" `lock:ticket:5120` (one through a lock client that ignores a
failed `SET NX`, the other properly) and both post a refund; the customer
gets it twice and the lock's log shows both owners inside.

## Evidence
The earlier owner's acquire and the overlapping acquire.
"""

from nonatomic.rules.replay.base import Detector, case, ev
from nonatomic.rules.replay.views import FOREVER_MS

SQL = f"""
WITH ordered AS (
    SELECT l.*,
           MAX(COALESCE(end_ms, {FOREVER_MS})) OVER (
               PARTITION BY lock_name ORDER BY start_ms, owner, acquire_id
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
           ) AS held_until
    FROM nr_leases l
),
late AS (
    -- cheap pre-filter: only a lease starting before an earlier one ended can overlap
    SELECT * FROM ordered WHERE NOT COALESCE(is_renewal, FALSE) AND held_until > start_ms
),
pairs AS (
    SELECT b.task_id, b.step, b.lock_name, b.owner, b.acquire_id AS anchor_id,
           a.acquire_id AS holder_id, a.owner AS holder, a.task_id AS holder_task,
           b.start_ms - a.start_ms AS held_ms,
           ROW_NUMBER() OVER (PARTITION BY b.acquire_id ORDER BY a.start_ms DESC, a.acquire_id) AS nth
    FROM late b
    JOIN nr_leases a
      ON a.lock_name = b.lock_name AND a.owner <> b.owner
     AND a.start_ms <= b.start_ms AND COALESCE(a.end_ms, {FOREVER_MS}) > b.start_ms
)
SELECT task_id, step, anchor_id, [holder_id, anchor_id] AS witness_ids,
       lock_name, owner, holder, holder_task, held_ms
FROM pairs
WHERE nth = 1
"""


def lock(ts, op, task, owner, name="lock:ticket:5120", **fields):
    return ev(ts, op, task=task, step=1, target=name, owner=owner, **fields)


CASES = (
    case(
        "two-tasks-inside-a-lock-without-ttl",
        [lock(0.0, "lock_acquire", "t1", "w1"), lock(1.0, "lock_acquire", "t2", "w2")],
        expect={("t2", 1)},
    ),
    case(
        "acquired-before-the-ttl-ran-out",
        [
            lock(0.0, "lock_acquire", "t1", "w1", ttl_ms=5_000),
            lock(2.0, "lock_acquire", "t2", "w2", ttl_ms=5_000),
            lock(3.0, "lock_release", "t2", "w2"),
        ],
        expect={("t2", 1)},
    ),
    case(
        "same-instant-acquires",
        [lock(1.0, "lock_acquire", "t1", "w1"), lock(1.0, "lock_acquire", "t1", "w2")],
        expect={("t1", 1)},
    ),
    case(
        "near-miss: acquired after the ttl ran out",
        [
            lock(0.0, "lock_acquire", "t1", "w1", ttl_ms=1_000),
            lock(1.5, "lock_acquire", "t2", "w2"),
        ],
    ),
    case(
        "near-miss: hand-over in the same millisecond",
        [
            lock(0.0, "lock_acquire", "t1", "w1"),
            lock(1.0, "lock_release", "t1", "w1"),
            lock(1.0, "lock_acquire", "t2", "w2"),
        ],
    ),
    case(
        "near-miss: the owner renews its own lease",
        [
            lock(0.0, "lock_acquire", "t1", "w1", ttl_ms=2_000),
            lock(1.0, "lock_acquire", "t1", "w1", ttl_ms=2_000),
        ],
    ),
    case(
        "near-miss: different locks",
        [
            lock(0.0, "lock_acquire", "t1", "w1", name="lock:ticket:1"),
            lock(0.5, "lock_acquire", "t2", "w2", name="lock:ticket:2"),
        ],
    ),
)

DETECTOR = Detector(
    code="NR203",
    name="lock-overlap",
    severity="error",
    doc=__doc__,
    sql=SQL,
    message=(
        "{owner} acquired lock `{lock_name}` while {holder} (task {holder_task}) still held it,"
        " acquired {held_ms:dur} earlier: both were inside the critical section"
    ),
    witnesses=(
        ("holder_acquire_id", "{holder} (task {holder_task}) acquired lock `{lock_name}`"),
        ("acquire_id", "{owner} acquired it {held_ms:dur} later, while it was held"),
    ),
    requires=("nr_leases",),
    cases=CASES,
)
