"""The guard-log emitter: canonical events, numbering, outcomes, concurrency, and a sink that fails."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading

import pytest

from nonatomic.guard import GuardLog
from nonatomic.replay.api import open_logs


class Clock:
    def __init__(self) -> None:
        self.now = 1_715_677_200.0  # 2024-05-14T09:00:00Z

    def __call__(self) -> float:
        self.now += 0.25
        return self.now


def collect():
    lines: list[str] = []
    return GuardLog(lines.append, clock=Clock()), lines


def events(lines):
    return [json.loads(line) for line in lines]


def test_a_task_with_one_call_writes_canonical_events():
    guard, lines = collect()
    with guard.task("t-1", agent="support"):
        with guard.current().call("refund_payment", "order:8821", idempotency_key="k-1") as call:
            call.code = 201
    got = events(lines)
    assert [(e["op"], e.get("phase"), e["status"]) for e in got] == [
        ("task_start", None, "started"), ("call", "start", "started"), ("call", "end", "ok"),
        ("task_end", None, "completed"),
    ]
    assert [e["seq"] for e in got] == [1, 2, 3, 4]
    assert got[0]["ts"] == "2024-05-14T09:00:00.250Z" and got[0]["agent"] == "support"
    assert got[2] == {"ts": "2024-05-14T09:00:00.750Z", "seq": 3, "task_id": "t-1", "op": "call", "step": 1,
                      "attempt": 1, "phase": "end", "status": "ok", "code": 201, "tool": "refund_payment",
                      "target": "order:8821", "idempotency_key": "k-1"}


class ReadTimeout(Exception):
    """Named like requests' timeout, which is no TimeoutError."""


class HTTPError(Exception):
    status_code = 503


@pytest.mark.parametrize("exc, status, code", [
    (TimeoutError(), "timeout", None), (ReadTimeout(), "timeout", None), (HTTPError(), "error", 503),
    (asyncio.CancelledError(), "cancelled", None),
])
def test_the_exception_that_escapes_is_the_outcome_and_still_propagates(exc, status, code):
    guard, lines = collect()
    with pytest.raises(type(exc)):
        with guard.task("t-1") as task, task.call("charge_card", "order:1"):
            raise exc
    end, task_end = events(lines)[-2:]
    assert (end["status"], end.get("code"), end["error"]) == (status, code, type(exc).__name__)
    assert task_end["status"] == {"timeout": "timeout", "cancelled": "cancelled"}.get(status, "failed")


def test_a_retry_after_a_failure_is_the_next_attempt_and_a_call_after_success_a_new_step():
    guard, lines = collect()
    task = guard.task("t-1").start()
    task.call("create_booking", "trip:1").start().end("error", code=503)
    task.call("create_booking", "trip:1").start().end("ok")
    task.call("create_booking", "trip:1").start().end("ok")
    task.verify("get_booking", "trip:1").start().end("ok")
    task.call("create_booking", "trip:1", step=7).start().end("ok")
    task.call("create_booking", "trip:1", step=7).start().end("ok")
    ends = [(e["op"], e["step"], e.get("attempt")) for e in events(lines) if e.get("phase") == "end"]
    assert ends == [("call", 1, 1), ("call", 1, 2), ("call", 2, 1), ("verify", 2, None), ("call", 7, 1),
                    ("call", 7, 2)]


def test_locks_release_on_every_path_and_keep_their_step():
    guard, lines = collect()
    task = guard.task("t-1").start()
    with pytest.raises(KeyError), task.lock("lock:customer:9", owner="w1", ttl_ms=30_000):
        task.call("update_subscription", "sub:9").start().end()
        raise KeyError
    acquire, *_, release = events(lines)[1:]
    assert (acquire["op"], acquire["step"], acquire["ttl_ms"], acquire["owner"]) == ("lock_acquire", 1, 30_000, "w1")
    assert (release["op"], release["step"], release["target"]) == ("lock_release", 1, "lock:customer:9")


def test_the_decorator_logs_sync_and_async_tools_inside_a_task_only():
    guard, lines = collect()

    @guard.tool(target="order:{order_id}")
    def refund_payment(order_id, amount, idempotency_key=None):
        return amount

    @guard.tool(target=lambda user: f"user:{user}", op="verify")
    async def get_user(user):
        return user

    with pytest.warns(RuntimeWarning, match="outside any task"):
        assert refund_payment("1", 5) == 5 and not lines  # no task: not logged, but counted
    assert guard.dropped == 1
    with guard.task("t-1"):
        assert refund_payment("8821", 10, idempotency_key="k-9") == 10
        assert asyncio.run(get_user("ana")) == "ana"
    calls = [e for e in events(lines) if e.get("phase") == "end"]
    assert [(e["op"], e["tool"], e["target"], e.get("idempotency_key")) for e in calls] == [
        ("call", "refund_payment", "order:8821", "k-9"), ("verify", "get_user", "user:ana", None)]


def _refund_in_a_pool(guard, *, copy_context: bool):
    """Eight refunds made by a thread pool inside one task (as agent frameworks run tools)."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    @guard.tool(target="order:{order_id}")
    def refund_payment(order_id):
        return order_id

    with guard.task("t-pool"), ThreadPoolExecutor(4) as pool:
        if copy_context:
            futures = [pool.submit(contextvars.copy_context().run, refund_payment, str(n)) for n in range(8)]
        else:
            futures = [pool.submit(refund_payment, str(n)) for n in range(8)]
        return [f.result(timeout=10) for f in futures]


def test_tools_run_by_a_thread_pool_without_the_context_are_counted_and_warned_once():
    guard, lines = collect()
    with pytest.warns(RuntimeWarning, match="copy_context") as warned:
        assert _refund_in_a_pool(guard, copy_context=False) == [str(n) for n in range(8)]
    assert len([w for w in warned if issubclass(w.category, RuntimeWarning)]) == 1
    assert guard.dropped == 8
    assert [e["op"] for e in events(lines)] == ["task_start", "task_end"]


def test_tools_outside_a_task_are_logged_under_the_fallback_task():
    lines: list[str] = []
    guard = GuardLog(lines.append, clock=Clock(), fallback_task_id="unattributed")
    _refund_in_a_pool(guard, copy_context=False)
    calls = [e for e in events(lines) if e["op"] == "call"]
    assert len(calls) == 16 and {e["task_id"] for e in calls} == {"unattributed"}
    assert sorted(e["target"] for e in calls if e["phase"] == "end") == [f"order:{n}" for n in range(8)]
    assert guard.dropped == 0


def test_tools_submitted_with_the_context_log_into_their_task():
    guard, lines = collect()
    _refund_in_a_pool(guard, copy_context=True)
    calls = [e for e in events(lines) if e["op"] == "call"]
    assert len(calls) == 16 and {e["task_id"] for e in calls} == {"t-pool"}
    assert guard.dropped == 0


def test_a_failing_sink_never_raises_into_the_caller():
    def broken(line):
        raise OSError("disk full")

    guard = GuardLog(broken)

    @guard.tool(target="order:{missing_argument}")
    def refund_payment(order_id):
        return "refunded"

    with guard.task("t-1"):
        assert refund_payment("1") == "refunded"
    assert guard.dropped == 4 and isinstance(guard.last_error, OSError)


def test_values_that_do_not_serialise_are_written_as_text():
    guard, lines = collect()
    guard.task("t-1", payload=object()).start()
    assert events(lines)[0]["payload"].startswith("<object object")


def test_sinks_files_streams_and_logging(tmp_path):
    path = tmp_path / "guard.jsonl"
    stream = io.StringIO()
    logger = logging.getLogger("nonatomic-test-guard")
    logger.propagate = False
    logger.setLevel(logging.INFO)  # events are INFO records: the logger's level applies
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger.addHandler(handler)
    try:
        for sink in (path, stream, logger, handler):
            with GuardLog(sink) as guard:
                guard.task("t-1").start()
    finally:
        logger.removeHandler(handler)
    assert json.loads(path.read_text())["op"] == "task_start"
    assert json.loads(stream.getvalue())["task_id"] == "t-1"
    assert len(records) == 2 and all(json.loads(r)["op"] == "task_start" for r in records)


def _assert_whole_lines_in_task_order(text: str, tasks: int, events_per_task: int) -> None:
    assert text.endswith("\n")
    seqs: dict[str, list[int]] = {}
    for line in text.splitlines():
        event = json.loads(line)  # a torn or interleaved line would not parse
        seqs.setdefault(event["task_id"], []).append(event["seq"])
    assert len(seqs) == tasks
    assert all(s == list(range(1, events_per_task + 1)) for s in seqs.values())


def test_many_threads_write_whole_lines_with_per_task_seq_in_file_order(tmp_path):
    path = tmp_path / "guard.jsonl"
    threads, calls = 16, 150
    with GuardLog(path) as guard:
        def worker(n: int) -> None:
            with guard.task(f"t-{n}") as task:
                for i in range(calls):
                    with task.call("send_email", f"user:{i}", note="x" * (i % 7) * 100):
                        pass

        pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    assert guard.dropped == 0
    _assert_whole_lines_in_task_order(path.read_text(), threads, 2 + 2 * calls)


def test_asyncio_tasks_each_log_into_their_own_agent_task(tmp_path):
    path = tmp_path / "guard.jsonl"
    guard = GuardLog(path)

    @guard.tool(target="order:{order_id}")
    async def update_order(order_id):
        await asyncio.sleep(0)
        return guard.current().task_id

    async def run(n: int):
        with guard.task(f"t-{n}"):
            return [await update_order(f"{n}-{i}") for i in range(20)]

    async def main():
        return await asyncio.gather(*(run(n) for n in range(50)))

    seen = asyncio.run(main())
    guard.close()
    assert all(ids == [f"t-{n}"] * 20 for n, ids in enumerate(seen))
    text = path.read_text()
    _assert_whole_lines_in_task_order(text, 50, 42)
    calls = [e for e in map(json.loads, text.splitlines()) if e["op"] == "call"]
    assert all(e["target"] == f"order:{e['task_id'][2:]}-{(e['seq'] - 2) // 2}" for e in calls)


def test_what_the_emitter_writes_replays_with_nothing_quarantined(tmp_path):
    path = tmp_path / "guard.jsonl"
    with GuardLog(path, clock=Clock()) as guard, guard.task("t-1") as task:
        task.call("refund_payment", "order:8821").start().end("timeout")
        task.call("refund_payment", "order:8821").start().end("ok")
    with open_logs(path) as replay:
        assert replay.summary()["quarantined"] == 0
        assert [(f["code"], f["step"]) for f in replay.detect()] == [("NR303", 1)]
