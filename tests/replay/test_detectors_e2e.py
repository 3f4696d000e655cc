"""End to end: generated gateway logs of many interleaved tasks, through ingest and every detector.

Each task plays one scenario, clean or with an injected incident whose
findings are known.  Lines are shuffled across files and timestamps are
written in mixed formats, so the detectors can rely only on the events table.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

import pytest

from nonatomic.replay.detect import run_detectors
from nonatomic.replay.ingest import ingest
from nonatomic.replay.ingest.database import connect
from nonatomic.replay.ingest.inputs import discover

T0 = datetime(2024, 5, 1, 8, 0, 0, tzinfo=timezone.utc)


def op(t, op, step=None, attempt=None, status=None, **fields):
    return {"t": t, "op": op, "step": step, "attempt": attempt, "status": status, **fields}


# Scenarios: (events of one task with t in seconds from its start, expected {(code, step)}).
# A scenario takes the task id, so lock names and owners stay unique per task.

def clean_retry(task):
    return [
        op(0.0, "task_start"),
        op(0.1, "call", 1, 1, "error", code=503, tool="create_ticket", target=f"ticket:{task}"),
        op(0.6, "call", 1, 2, "ok", code=201, tool="create_ticket", target=f"ticket:{task}"),
        op(1.0, "call", 2, 1, "ok", tool="get_ticket", target=f"ticket:{task}"),
        op(1.2, "task_end", status="completed"),
    ], set()


def clean_verified_timeout(task):
    target = f"payment:{task}"
    return [
        op(0.0, "call", 1, 1, phase="start", tool="refund_payment", target=target, idempotency_key=f"k-{task}"),
        op(10.0, "call", 1, 1, "timeout", phase="end", tool="refund_payment", target=target),
        op(10.2, "verify", 1, status="ok", tool="get_refund", target=target),
        op(10.5, "call", 1, 2, "ok", tool="refund_payment", target=target, idempotency_key=f"k-{task}"),
        op(11.0, "task_end", status="completed"),
    ], set()


def clean_lock_and_dedup(task):
    lock, owner = f"lock:cart:{task}", f"owner-{task}"
    return [
        op(0.0, "lock_acquire", 1, status="ok", target=lock, owner=owner, ttl_ms=30_000),
        op(0.2, "call", 2, 1, "ok", tool="reserve_stock", target=f"cart:{task}", idempotency_key="r-1"),
        op(0.9, "call", 2, 2, "ok", tool="reserve_stock", target=f"cart:{task}", idempotency_key="r-1"),
        op(1.0, "call", 3, 1, "ok", tool="send_email", target="user:1"),
        op(1.0, "call", 3, 1, "ok", tool="send_email", target="user:2", seq=1),
        op(1.1, "task_end", status="completed"),
        op(1.15, "lock_release", 1, status="ok", target=lock, owner=owner),
    ], set()


def clean_compensation(task):
    return [
        op(0.0, "call", 1, 1, "ok", tool="book_room", target=f"room:{task}"),
        op(0.5, "call", 2, 1, "error", code=422, tool="charge_card", target=f"card:{task}"),
        op(0.7, "rollback", 1, status="ok", tool="cancel_room", target=f"room:{task}"),
        op(0.9, "task_end", status="failed"),
    ], set()


def retry_after_rollback(task):
    return [
        op(0.0, "call", 2, 1, "error", code=503, tool="charge_card", target=f"order:{task}"),
        op(0.1, "rollback", 2, phase="start", tool="void_charge", target=f"order:{task}"),
        op(1.0, "call", 2, 2, "ok", tool="charge_card", target=f"order:{task}"),
        op(1.4, "rollback", 2, status="ok", phase="end", tool="void_charge"),
        op(1.5, "task_end", status="failed"),
    ], {("NR101", 2)}


def rollback_overlap(task):
    return [
        op(0.0, "call", 2, 1, phase="start", tool="book_room", target=f"room:{task}"),
        op(0.5, "rollback", 2, phase="start", tool="cancel_room", target=f"room:{task}"),
        op(0.8, "rollback", 2, status="ok", phase="end", tool="cancel_room"),
        op(1.1, "call", 2, 1, "ok", phase="end", tool="book_room"),
        op(1.3, "task_end", status="failed"),
    ], {("NR102", 2)}


def whole_flow_retry(task):
    return [
        op(0.0, "call", 1, 1, "ok", tool="book_flight", target=f"pnr:{task}"),
        op(0.4, "call", 2, 1, "error", code=503, tool="pay", target=f"pnr:{task}"),
        op(2.0, "call", 1, 1, "ok", tool="book_flight", target=f"pnr:{task}"),
        op(2.5, "call", 2, 1, "ok", tool="pay", target=f"pnr:{task}"),
        op(3.0, "task_end", status="completed"),
    ], {("NR301", 1), ("NR403", 1), ("NR403", 2)}


def refund_retry_after_timeout(task):
    target = f"order:{task}"
    return [
        op(0.0, "call", 3, 1, phase="start", tool="refund_payment", target=target),
        op(10.0, "call", 3, 1, "timeout", phase="end", tool="refund_payment", target=target),
        op(10.5, "call", 3, 2, "ok", tool="refund_payment", target=target),
        op(11.0, "task_end", status="completed"),
    ], {("NR303", 3)}


def zombie_after_504(task):
    return [
        op(0.0, "call", 1, 1, "ok", tool="get_order", target=f"order:{task}"),
        op(6.0, "task_end", status="timeout", code=504),
        op(8.0, "call", 2, 1, "ok", tool="update_order", target=f"order:{task}"),
    ], {("NR401", 2)}


def lock_leak_after_timeout(task):
    return [
        op(0.0, "lock_acquire", 1, status="ok", target=f"lock:session:{task}", owner=f"owner-{task}"),
        op(0.1, "call", 2, 1, phase="start", tool="sync_crm", target=f"contact:{task}"),
        op(5.1, "call", 2, 1, "timeout", phase="end", tool="sync_crm", target=f"contact:{task}"),
        op(5.2, "task_end", status="timeout"),
    ], {("NR201", 1), ("NR402", 2)}


def non_retryable_retry(task):
    return [
        op(0.0, "call", 1, 1, "error", code=422, tool="create_invoice", target=f"invoice:{task}"),
        op(1.0, "call", 1, 2, "error", code=422, tool="create_invoice", target=f"invoice:{task}"),
        op(1.1, "task_end", status="failed"),
    ], {("NR302", 1)}


def retry_storm(task):
    sms = {"tool": "send_sms", "target": f"phone:{task}", "code": 503}
    return [
        *[op(0.01 * n, "call", 1, n + 1, "error", **sms) for n in range(4)],
        op(2.0, "call", 1, 5, "ok", tool="send_sms", target=f"phone:{task}"),
        op(2.1, "task_end", status="completed"),
    ], {("NR304", 1)}


def attempt_disorder(task):
    return [
        op(0.0, "call", 1, 2, "error", code=500, tool="reserve_seat", target=f"seat:{task}"),
        op(0.5, "call", 1, 1, "ok", tool="reserve_seat", target=f"seat:{task}"),
        op(0.6, "task_end", status="completed"),
    ], {("NR403", 1)}


SINGLE = [
    clean_retry, clean_verified_timeout, clean_lock_and_dedup, clean_compensation,
    retry_after_rollback, rollback_overlap, whole_flow_retry, refund_retry_after_timeout,
    zombie_after_504, lock_leak_after_timeout, non_retryable_retry, retry_storm, attempt_disorder,
]


def late_release(a, b):
    """a's lease runs out, b takes the lock, a's late release deletes b's lock."""
    lock = f"lock:invoice:{a}"
    return {
        a: ([
            op(0.0, "lock_acquire", 1, status="ok", target=lock, owner=f"o-{a}", ttl_ms=5_000),
            op(7.0, "lock_release", 1, status="ok", target=lock, owner=f"o-{a}"),
            op(7.1, "task_end", status="completed"),
        ], {("NR201", 1), ("NR202", 1)}),
        b: ([
            op(6.0, "lock_acquire", 1, status="ok", target=lock, owner=f"o-{b}", ttl_ms=5_000),
            op(8.0, "lock_release", 1, status="ok", target=lock, owner=f"o-{b}"),
            op(8.1, "task_end", status="completed"),
        ], set()),
    }


def two_holders(a, b):
    lock = f"lock:ticket:{a}"
    return {
        a: ([
            op(0.0, "lock_acquire", 1, status="ok", target=lock, owner=f"o-{a}"),
            op(2.0, "lock_release", 1, status="ok", target=lock, owner=f"o-{a}"),
            op(2.1, "task_end", status="completed"),
        ], set()),
        b: ([
            op(1.0, "lock_acquire", 1, status="ok", target=lock, owner=f"o-{b}"),
            op(3.0, "lock_release", 1, status="ok", target=lock, owner=f"o-{b}"),
            op(3.1, "task_end", status="completed"),
        ], {("NR203", 1)}),
    }


PAIRS = [late_release, two_holders]


def timestamp(moment: datetime, rng: random.Random):
    """The same instant in one of the formats gateways write."""
    style = rng.randrange(4)
    if style == 0:
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if style == 1:
        return moment.astimezone(timezone(timedelta(hours=2))).isoformat(timespec="milliseconds")
    epoch_ms = round(moment.timestamp() * 1000)
    return epoch_ms if style == 2 else epoch_ms / 1000


def generate(directory, tasks: int = 240, files: int = 3, seed: int = 7):
    """Log files of `tasks` interleaved tasks; returns the expected {(task_id, code, step)}."""
    rng = random.Random(seed)
    plays: dict[str, tuple[list[dict], set]] = {}
    for n in range(tasks):
        task = f"task-{n:04d}"
        if n % 10 == 9:  # a pair of tasks sharing a lock, n-1 and n
            plays.update(PAIRS[(n // 10) % len(PAIRS)](f"task-{n - 1:04d}", task))
        else:
            plays[task] = SINGLE[rng.randrange(len(SINGLE))](task)
    expected, lines = set(), []
    for index, (task, (events, findings)) in enumerate(sorted(plays.items())):
        start = T0 + timedelta(seconds=0.37 * index)  # tasks overlap in time
        expected |= {(task, code, step) for code, step in findings}
        for event in events:
            record = {k: v for k, v in event.items() if k != "t" and v is not None}
            record.update(task_id=task, ts=timestamp(start + timedelta(seconds=event["t"]), rng))
            lines.append(json.dumps(record))
    rng.shuffle(lines)
    for f in range(files):
        (directory / f"gateway-{f}.jsonl").write_text("\n".join(lines[f::files]) + "\n")
    return expected, len(lines)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    directory = tmp_path_factory.mktemp("logs")
    expected, line_count = generate(directory)
    con = connect()
    result = ingest(con, discover([str(directory)]))
    assert (result.lines, result.events, result.quarantined) == (line_count, line_count, 0)
    return expected, run_detectors(con)


def test_every_injected_incident_and_nothing_else(replayed):
    expected, findings = replayed
    assert {(f["task_id"], f["code"], f["step"]) for f in findings} == expected
    assert len(findings) == len(expected)


def test_every_code_is_exercised(replayed):
    expected, _ = replayed
    assert {code for _, code, _ in expected} == {
        "NR101", "NR102", "NR201", "NR202", "NR203", "NR301",
        "NR302", "NR303", "NR304", "NR401", "NR402", "NR403",
    }


def test_evidence_points_at_lines_of_the_logs(replayed):
    _, findings = replayed
    for finding in findings:
        assert finding["events"], finding
        for event in finding["events"]:
            assert event["file"].endswith(".jsonl") and event["line"] >= 1
            assert event["ts"].endswith("Z")


def test_two_runs_give_the_same_fingerprints(tmp_path):
    expected, _ = generate(tmp_path, tasks=40)
    runs = []
    for _ in range(2):
        con = connect()
        ingest(con, discover([str(tmp_path)]))
        runs.append([f["fingerprint"] for f in run_detectors(con)])
    assert runs[0] == runs[1] and len(runs[0]) == len(expected)
