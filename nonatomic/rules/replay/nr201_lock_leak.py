"""
## What it finds
A lock lease of a task that ended (it has a `task_end`) which its owner never
released: the lease stays `open` (no TTL: an **error**) or ran out by its TTL
(a **warning**: only the TTL freed it).  A release by the owner counts even
when it is logged after the `task_end` (cleanup in `finally` blocks), as long
as it comes before the TTL runs out.  A re-acquire by the same owner renews
the lease; the last lease of the chain is judged.  Tasks that have not ended
are not judged: they may still release.

## Why is this bad?
A session lock taken with `SET NX` is released on the success path only.
A tool call times out, the task ends with a 504, and the lock stays: every
later request for that customer fails with "lock busy" until someone deletes
the key by hand, or, with a 6-hour TTL, for six hours.  Release on every
path (and keep TTLs short) so a dead task cannot block the living.

## Evidence
The acquire and the task's end.
"""

from nonatomic.rules.replay.base import Detector, case, ev

SQL = """
SELECT l.task_id, l.step, l.acquire_id AS anchor_id, [l.acquire_id, t.end_id] AS witness_ids,
       l.lock_name, l.owner, l.ttl_ms, t.end_status,
       CASE WHEN l.end_kind = 'open' THEN 'no_ttl' ELSE 'ttl' END AS variant,
       CASE WHEN l.end_kind = 'open' THEN 'error' ELSE 'warning' END AS severity
FROM nr_leases l
JOIN nr_task_ends t ON t.task_id = l.task_id
WHERE l.end_kind IN ('open', 'expired')
"""


def acquire(ts, **fields):
    return ev(ts, "lock_acquire", step=1, target="lock:customer:9", owner="w1", **fields)


def release(ts, **fields):
    return ev(ts, "lock_release", step=1, target="lock:customer:9", owner="w1", **fields)


END = ev(5.0, "task_end", status="timeout")

CASES = (
    case("no-ttl-never-released", [acquire(0.0), END], expect={("t1", 1)}),
    case("only-the-ttl-freed-it", [acquire(0.0, ttl_ms=30_000), END], expect={("t1", 1)}),
    case(
        "released-after-the-ttl-ran-out",
        [acquire(0.0, ttl_ms=1_000), END, release(6.0)],
        expect={("t1", 1)},
    ),
    case("near-miss: released by its owner", [acquire(0.0), release(4.0), END]),
    case("near-miss: released in cleanup after task_end", [acquire(0.0), END, release(5.1)]),
    case("near-miss: task has not ended", [acquire(0.0)]),
    case("near-miss: acquire failed", [acquire(0.0, status="error"), END]),
    case(
        "near-miss: renewed, then released",
        [acquire(0.0, ttl_ms=2_000), acquire(1.5, ttl_ms=2_000), release(3.0), END],
    ),
)

DETECTOR = Detector(
    code="NR201",
    name="lock-leak",
    severity="error",
    doc=__doc__,
    sql=SQL,
    message={
        "no_ttl": (
            "lock `{lock_name}` acquired by {owner} in step {step} was never released and has no"
            " TTL: it stays held after the task ended ({end_status})"
        ),
        "ttl": (
            "lock `{lock_name}` acquired by {owner} in step {step} was not released by its owner"
            " before the task ended ({end_status}); only its {ttl_ms:dur} TTL freed it"
        ),
    },
    witnesses=(
        ("acquire_id", "{owner} acquired lock `{lock_name}` in step {step}"),
        ("task_end_id", "the task ended ({end_status}) with no release by {owner}"),
    ),
    requires=("nr_leases", "nr_task_ends"),
    cases=CASES,
)
