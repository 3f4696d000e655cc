"""Write canonical guard-log events from an agent's tool gateway (JSON Lines).

Standard library only: this module is imported inside users' gateways, where
pulling in the replay engine's DuckDB or pandas would be a cost for nothing.

    from nonatomic.guard import GuardLog

    guard = GuardLog("guard.jsonl")                     # or a logging.Logger / Handler, a stream, a callable

    @guard.tool(target="order:{order_id}")              # instrumenting a tool is one line
    def refund_payment(order_id, amount_cents, idempotency_key=None): ...

    with guard.task("support-7f3a"):                     # task_start ... task_end
        refund_payment("8821", 1999)                     # call start/end, step and attempt numbered
        with guard.current().lock("lock:customer:4410", owner="worker-3", ttl_ms=30_000):
            ...

Every event carries `ts` (RFC 3339, milliseconds) and `seq` (per task), so
replay orders events of one millisecond as they happened.  Logging never
raises into the caller: a failing sink or an unserialisable value drops the
event and is counted in `GuardLog.dropped` (the gateway's own work goes on).

The current task lives in a context variable, which a thread pool's workers do
not inherit: submit `contextvars.copy_context().run(tool, ...)`, or enter the
task in the worker.  A tool called outside any task is logged under
`GuardLog(..., fallback_task_id=...)` when one is given; otherwise it runs
unlogged, is counted in `dropped`, and the first such call warns.

Step and attempt numbering, when not given: a call of the same tool and
target as the task's previous call of them, when that one did not end `ok`,
is the next attempt of its step (a retry); any other call opens a new step.
`verify` and `rollback` default to the step of the task's last call on their
target.  Pass `step=`/`attempt=` when the gateway knows better.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import logging
import os
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from datetime import datetime, timezone

__all__ = ["GuardLog", "Task", "Operation"]

_current: contextvars.ContextVar[Task | None] = contextvars.ContextVar("nonatomic_guard_task", default=None)


class GuardLog:
    """A sink of canonical events, shared by every task and thread of a gateway."""

    def __init__(self, sink, *, clock: Callable[[], float] = time.time, fallback_task_id: str | None = None) -> None:
        """`sink`: a path (appended to), a `logging.Logger` or `Handler` (one record per
        event, the JSON line as message), a text stream, or a callable taking the line.
        `clock` returns epoch seconds (a fixed clock makes logs reproducible).
        `fallback_task_id`: the task that tool calls made outside any task are logged
        under (by default they are dropped, counted and warned about once)."""
        self._write = _writer(sink)
        self._clock = clock
        self._lock = threading.Lock()
        self.dropped = 0
        """Events that could not be written (the sink failed, or a value would not
        serialise), plus tool calls made outside any task and not logged."""
        self.last_error: BaseException | None = None
        self._fallback = Task(self, fallback_task_id, {}) if fallback_task_id is not None else None
        self._warned = False

    def _task_for_tool(self) -> Task | None:
        """The task a tool call belongs to: the current one, else the fallback task;
        without either the call is counted as dropped (and the first one warns)."""
        task = _current.get()
        if task is not None or self._fallback is not None:
            return task or self._fallback
        with self._lock:
            self.dropped += 1
            warn, self._warned = not self._warned, True
        if warn:
            warnings.warn(
                "nonatomic.guard: a tool was called outside any task (in a thread pool, submit "
                "contextvars.copy_context().run(...)); it is not logged. Calls dropped so far: GuardLog.dropped",
                RuntimeWarning,
                stacklevel=4,
            )
        return None

    def task(self, task_id: str | None = None, **extra) -> Task:
        """A task (one agent run); use it as a context manager, or call `start()`/`end()`."""
        return Task(self, task_id or uuid.uuid4().hex, extra)

    @staticmethod
    def current() -> Task | None:
        """The task entered in this thread or asyncio context (`with guard.task(...)`), if any."""
        return _current.get()

    def tool(self, *, target=None, idempotency_key=None, op: str = "call", name: str | None = None):
        """Decorate a tool (sync or async) so each invocation is logged as an `op` of the current task.

        `target` and `idempotency_key` are format strings over the tool's arguments
        (`"order:{order_id}"`) or callables taking the same arguments; without
        `idempotency_key`, an argument named `idempotency_key` is used.  Outside a
        task the tool is logged under the fallback task, or runs unlogged and is
        counted in `dropped`.
        """
        return functools.partial(_instrument, log=self, target=target, key=idempotency_key, op=op, name=name)

    def emit(self, task: Task, op: str, fields: dict) -> None:
        """Write one event of `task`; fields with a None value are left out, and extra
        fields never replace `ts`, `seq`, `task_id` or `op`."""
        try:
            with self._lock:  # one line at a time, and seq in the order lines are written
                task.seq += 1
                event = {"ts": _rfc3339(self._clock()), "seq": task.seq, "task_id": task.task_id, "op": op}
                event.update((k, v) for k, v in fields.items() if v is not None and k not in event)
                self._write(json.dumps(event, ensure_ascii=False, default=str, separators=(",", ":")))
        except Exception as exc:  # noqa: BLE001 - logging must never break the tool call
            self.dropped += 1
            self.last_error = exc

    def close(self) -> None:
        closer = getattr(self._write, "close", None)
        if closer is not None:
            with self._lock:
                closer()

    def __enter__(self) -> GuardLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Task:
    """One business task; it numbers its steps and attempts and stamps its events with `seq`."""

    def __init__(self, log: GuardLog, task_id: str, extra: dict) -> None:
        self.log = log
        self.task_id = task_id
        self.extra = extra
        self.seq = 0
        self._steps = 0
        self._last: dict[tuple, tuple[int, int, str | None]] = {}  # (tool, target) -> step, attempt, status
        self._target_step: dict[str | None, int] = {}
        self._numbering = threading.Lock()
        self._token: contextvars.Token | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> Task:
        self.log.emit(self, "task_start", {"status": "started", **self.extra})
        return self

    def end(self, status: str = "completed", code: int | None = None, error: str | None = None) -> None:
        """Log `task_end`; `status` is completed, failed, cancelled or timeout."""
        self.log.emit(self, "task_end", {"status": status, "code": code, "error": error})

    def __enter__(self) -> Task:
        self.start()
        self._token = _current.set(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._token is not None:
            _current.reset(self._token)
            self._token = None
        status, code, error = _outcome(exc, ended="completed", failed="failed")
        self.end(status, code, error)
        return False

    # -- operations ------------------------------------------------------------------

    def call(self, tool: str, target: str | None = None, *, idempotency_key: str | None = None,
             step: int | None = None, attempt: int | None = None, **extra) -> Operation:
        """A tool call: `with task.call(...) as c:` logs start, then end with the outcome."""
        return Operation(self, "call", tool, target, idempotency_key, step, attempt, extra)

    def verify(self, tool: str, target: str | None = None, *, step: int | None = None, **extra) -> Operation:
        """A status/lookup call that settles an unknown outcome of `step`."""
        return Operation(self, "verify", tool, target, None, step, None, extra)

    def rollback(self, tool: str, target: str | None = None, *, step: int | None = None, **extra) -> Operation:
        """A compensating action that undoes `step`."""
        return Operation(self, "rollback", tool, target, None, step, None, extra)

    def acquire(self, lock: str, owner: str, *, ttl_ms: int | None = None, status: str = "ok",
                step: int | None = None) -> int:
        """Log a `lock_acquire` (status `error` for a lock that was busy); returns its step."""
        step = step if step is not None else self._new_step(lock)
        self.log.emit(self, "lock_acquire",
                      {"step": step, "status": status, "target": lock, "owner": owner, "ttl_ms": ttl_ms})
        return step

    def release(self, lock: str, owner: str, *, step: int | None = None) -> None:
        step = step if step is not None else self._target_step.get(lock)
        self.log.emit(self, "lock_release", {"step": step, "status": "ok", "target": lock, "owner": owner})

    def lock(self, lock: str, owner: str, *, ttl_ms: int | None = None):
        """Hold a lock for a block: acquire on entry, release on every exit path."""
        return _Held(self, lock, owner, ttl_ms)

    # -- numbering -------------------------------------------------------------------

    def _new_step(self, target: str | None) -> int:
        with self._numbering:
            self._steps += 1
            self._target_step[target] = self._steps
            return self._steps

    def _number(self, op: Operation) -> None:
        """Fill in the step and attempt the caller left out (see the module docstring)."""
        with self._numbering:
            key = (op.tool, op.target)
            if op.op != "call":
                if op.step is None:
                    op.step = self._target_step.get(op.target) or self._next_step()
                return
            last = self._last.get(key)
            if op.step is None:
                retry = last is not None and last[2] not in (None, "ok")
                op.step = last[0] if retry else self._next_step()
            if op.attempt is None:
                op.attempt = last[1] + 1 if last is not None and last[0] == op.step else 1
            self._last[key] = (op.step, op.attempt, None)
            self._target_step[op.target] = op.step
            self._steps = max(self._steps, op.step)

    def _next_step(self) -> int:
        self._steps += 1
        return self._steps

    def _settled(self, op: Operation) -> None:
        with self._numbering:
            key = (op.tool, op.target)
            if op.op == "call" and self._last.get(key, (None, None))[:2] == (op.step, op.attempt):
                self._last[key] = (op.step, op.attempt, op.status)


class Operation:
    """A call, verify or rollback logged as `phase` start and end.

    As a context manager it ends `ok`, or with the outcome of the exception
    that escaped (a timeout exception is `timeout`, cancellation `cancelled`,
    anything else `error`, with an HTTP status read from the exception when it
    carries one).  Set `status`/`code`/`error` inside the block to log a
    different outcome (`op.code = 503`), or drive it by hand: `start()`, `end()`.
    """

    def __init__(self, task: Task, op: str, tool: str, target, key, step, attempt, extra: dict) -> None:
        self.task, self.op, self.tool, self.target = task, op, tool, target
        self.idempotency_key, self.step, self.attempt, self.extra = key, step, attempt, extra
        self.status: str | None = None
        self.code: int | None = None
        self.error: str | None = None
        self._ended = False

    def _fields(self, **outcome) -> dict:
        return {"step": self.step, "attempt": self.attempt, **outcome, "tool": self.tool, "target": self.target,
                "idempotency_key": self.idempotency_key, **self.extra}

    def start(self) -> Operation:
        self.task._number(self)
        self.task.log.emit(self.task, self.op, self._fields(phase="start", status="started"))
        return self

    def end(self, status: str | None = None, code: int | None = None, error: str | None = None) -> None:
        """Log the outcome (once); arguments override what was set on the operation."""
        if self._ended:
            return
        self._ended = True
        self.status = status or self.status or "ok"
        self.code = code if code is not None else self.code
        self.error = error or self.error
        self.task._settled(self)
        self.task.log.emit(self.task, self.op,
                           self._fields(phase="end", status=self.status, code=self.code, error=self.error))

    def __enter__(self) -> Operation:
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is None:
            self.end()
        else:
            self.end(*_outcome(exc, ended="ok", failed="error"))
        return False


class _Held:
    def __init__(self, task: Task, lock: str, owner: str, ttl_ms: int | None) -> None:
        self.task, self.lock, self.owner, self.ttl_ms = task, lock, owner, ttl_ms
        self.step: int | None = None

    def __enter__(self) -> _Held:
        self.step = self.task.acquire(self.lock, self.owner, ttl_ms=self.ttl_ms)
        return self

    def __exit__(self, *exc) -> bool:
        self.task.release(self.lock, self.owner, step=self.step)
        return False


def _instrument(function, *, log: GuardLog, target, key, op, name):
    signature = inspect.signature(function)
    tool = name or function.__name__

    def operation(args, kwargs) -> Operation | None:
        task = log._task_for_tool()
        if task is None:
            return None
        try:  # a bad target template must not break the tool: log the call without it
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = bound.arguments
            where = _render(target, values, args, kwargs)
            idem = _render(key, values, args, kwargs) if key is not None else values.get("idempotency_key")
        except Exception as exc:  # noqa: BLE001
            task.log.last_error = exc
            where = idem = None
        if op == "call":
            return task.call(tool, where, idempotency_key=idem)
        return getattr(task, op)(tool, where)

    if inspect.iscoroutinefunction(function):
        @functools.wraps(function)
        async def async_wrapper(*args, **kwargs):
            logged = operation(args, kwargs)
            if logged is None:
                return await function(*args, **kwargs)
            with logged:
                return await function(*args, **kwargs)

        return async_wrapper

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        logged = operation(args, kwargs)
        if logged is None:
            return function(*args, **kwargs)
        with logged:
            return function(*args, **kwargs)

    return wrapper


def _render(spec, values: dict, args, kwargs) -> str | None:
    if spec is None:
        return None
    if callable(spec):
        return str(spec(*args, **kwargs))
    return spec.format(**values)


def _outcome(exc: BaseException | None, *, ended: str, failed: str) -> tuple[str, int | None, str | None]:
    """(status, code, error) for a block that raised `exc` (or returned: `ended`)."""
    if exc is None:
        return ended, None, None
    name = type(exc).__name__
    code = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    code = code if isinstance(code, int) else None
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled", code, name
    # HTTP clients' timeouts (requests.Timeout, httpx.TimeoutException) are not
    # TimeoutError subclasses; the name says it without importing them.
    if isinstance(exc, TimeoutError) or "timeout" in name.lower():
        return "timeout", code, name
    return failed, code, name


def _rfc3339(seconds: float) -> str:
    moment = datetime.fromtimestamp(round(seconds, 3), tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _writer(sink) -> Callable[[str], None]:
    if isinstance(sink, (str, os.PathLike)):
        return _FileWriter(os.fspath(sink))
    if isinstance(sink, logging.Logger):
        return lambda line: sink.info("%s", line)
    if isinstance(sink, logging.Handler):
        return lambda line: sink.handle(logging.LogRecord("nonatomic.guard", logging.INFO, "", 0, line, None, None))
    if hasattr(sink, "write"):
        return lambda line: (sink.write(line + "\n"), sink.flush())
    if callable(sink):
        return sink
    raise TypeError(f"GuardLog sink must be a path, a Logger/Handler, a stream or a callable, not {type(sink).__name__}")


class _FileWriter:
    """Appends lines, one write and flush each, so a crash leaves whole lines and readers see them at once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file = None

    def __call__(self, line: str) -> None:
        if self.file is None:  # opened on first use: a gateway may build its GuardLog before the disk is there
            self.file = open(self.path, "a", encoding="utf-8")
        self.file.write(line + "\n")
        self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
