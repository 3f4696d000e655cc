from __future__ import annotations


from dataclasses import dataclass, field

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name
from nonatomic.rules.lint.semantics.confidence import INFERRED, severity
from nonatomic.rules.lint.semantics.names import words
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.semantics.pending import catches_timeout, handles_tasks, is_passive
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.retryable import goes_round
from nonatomic.rules.lint.semantics.tools import ToolRegistry
from nonatomic.rules.lint.tree import walk

# wait() functions returning (done, pending); where their timeout may be passed positionally.
_WAITS = {
    "asyncio.wait": None,
    "asyncio.tasks.wait": None,
    "concurrent.futures.wait": 1,
    "concurrent.futures._base.wait": 1,
}
_WAIT_FOR = ("asyncio.wait_for", "asyncio.tasks.wait_for")
_SHIELD = ("asyncio.shield", "asyncio.tasks.shield")
_FUTURE_RESULT = "concurrent.futures.Future.result"
_EXECUTOR = "concurrent.futures.Executor"
_EARLY_RETURNS = frozenset({"FIRST_COMPLETED", "FIRST_EXCEPTION"})
# Calls that stop abandoned work: a cancel, a kill of the child, a stop of the runner;
# `.set()` on a cooperative token named for it (`budget.cancelled.set()`).
_CLEANUP = frozenset({"cancel", "kill", "killpg", "terminate", "stop", "shutdown", "abort", "cancel_all"})
_TOKEN_WORDS = frozenset({"cancel", "cancelled", "canceled", "cancellation", "stop", "stopped", "abort",
                          "aborted", "shutdown", "interrupt", "interrupted"})
# Calls that start work, by last name, and where the work is among their arguments: a
# coroutine (`create_task(run(c))`) or a callable (`pool.submit(charge, order)`).
_STARTS = {"create_task": 0, "ensure_future": 0, "run_coroutine_threadsafe": 0, "submit": 0, "run_in_executor": 1}
# Methods that put a task or future into a container the object keeps (`self._stuck.add(fut)`).
_KEEPS = frozenset({"add", "append", "appendleft", "put", "put_nowait", "setdefault", "insert"})


@dataclass
class _Wait:
    call: cst.Call
    pending: str | None  # the name the pending set is bound to, if any
    awaited: list[str]  # names of the tasks, or of the collection, waited on
    fed_back: bool  # a collection an enclosing loop waits on again
    work: cst.BaseExpression  # what was waited on


@dataclass
class _Frame:
    waits: list[_Wait] = field(default_factory=list)
    tries: list[cst.Try | cst.TryStar] = field(default_factory=list)  # whose body we are in
    params: set[str] = field(default_factory=set)
    assigned: dict[str, cst.BaseExpression] = field(default_factory=dict)
    loops: list[set[str]] = field(default_factory=list)  # names bound so far in each enclosing loop
    loop_nodes: list[cst.For | cst.While] = field(default_factory=list)
    try_depth: dict[int, int] = field(default_factory=dict)  # a try -> how many loops enclose it
    pools: int = 0  # enclosing `with ThreadPoolExecutor() as ex:` blocks: leaving one waits for its work
    node: cst.CSTNode | None = None  # the function (or module)
    deadlines: list[bool] = field(default_factory=list)  # enclosing `while`s: tested against a clock?
    _cleanup: bool | None = None

    def cleans_up(self) -> bool:
        """The function stops abandoned work somewhere: it cancels, kills or stops it, or
        sets a cooperative cancel token (before the wait, in the handler, in `finally`)."""
        if self._cleanup is None:
            self._cleanup = self.node is not None and any(
                _stops(node) for node in walk.subtree(self.node) if isinstance(node, cst.Call)
            )
        return self._cleanup


class TimeoutWithoutCancel(LintRule):
    """
    ## What it does
    Flags timeouts that stop waiting for work but leave the work running:

    - `asyncio.wait(tasks, timeout=...)` (or `return_when=FIRST_COMPLETED` /
      `FIRST_EXCEPTION`, and `concurrent.futures.wait`) whose pending tasks
      are never cancelled, awaited again, handed on or kept: the result is
      discarded, or `pending` is only counted, tested or logged;
    - `future.result(timeout=...)` and `asyncio.wait_for(asyncio.shield(...),
      ...)` whose `except TimeoutError` handler only logs, returns, raises or
      passes: it neither cancels the work nor records its outcome as unknown.

    Not flagged: `asyncio.wait_for` and `asyncio.timeout` without `shield`
    (they cancel on timeout); a `pending` set fed back into the next `wait`
    (the usual `FIRST_COMPLETED` loop), returned, stored or passed to a helper;
    tasks cancelled before a grace-period wait; tasks the function did not
    make (a parameter, an attribute, a snapshot of `self._tasks`, an entry of
    a registry, `self._lines[process_id]`): their owner still holds them; a
    shielded task of the enclosing function that cancels it elsewhere (its
    `stop()`); a `result(timeout=...)` with no local handler (the
    caller decides); one inside `with ThreadPoolExecutor() as pool:`,
    whose exit waits for the work; a wait in a loop whose timeout handler goes
    round again to wait on the same work (the timeout is a polling interval);
    and a future or task kept where it outlives the call (`self._stuck.add(fut)`,
    `self._futures[job_id] = fut`, a module task set, a done-callback added).

    ## Why is this bad?
    A timeout ends the caller's wait, not the work. The abandoned task goes on
    calling tools after the caller reported failure, and whoever retries now
    races it. One real incident: a FastAPI endpoint gave up on an agent run
    after 60 s and returned 504, but the run's task was never cancelled; the
    user clicked again, a second run started, and both wrote the same order.
    Work that cannot be cancelled (a thread in a pool, a shielded task) must at
    least be recorded as "outcome unknown" so that a retry verifies first.

    ## Severity
    The hazard needs the abandoned work to write. A warning when it is a known
    write by the same model as NA101 (the task's coroutine or the submitted
    callable is a write call or a write tool: `payments.refund(...)`,
    `pool.submit(mailer.send_email, batch)`); `info` otherwise (the work is
    out of sight, or writes nothing).

    ## Example
    ```python
    async def call_tools(calls):
        tasks = [asyncio.create_task(run_tool(c)) for c in calls]
        done, pending = await asyncio.wait(tasks, timeout=30)
        if pending:
            raise ToolTimeout(f"{len(pending)} tools still running")
        return [t.result() for t in done]
    ```

    ## Use instead
    ```python
    async def call_tools(calls):
        tasks = [asyncio.create_task(run_tool(c)) for c in calls]
        done, pending = await asyncio.wait(tasks, timeout=30)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            raise ToolTimeout(f"{len(pending)} tools cancelled")
        return [t.result() for t in done]
    ```
    """

    code = "NA203"
    METADATA_DEPENDENCIES = (CalleeProvider, RetryProvider)

    VALID = [
        # A task another object holds, shielded on purpose: its owner reaps it later.
        """
            import asyncio

            class Manager:
                async def settle(self, execution):
                    task = execution.completion_task
                    if task is None or task.done():
                        return
                    try:
                        await asyncio.wait_for(asyncio.shield(task), timeout=1.0)
                    except asyncio.TimeoutError:
                        pass  # keep the tracker alive: a late exit is still reaped
            """,
        # Shutdown that gives up waiting, then stops the loop the work runs on.
        """
            import asyncio

            class Bridge:
                def shutdown(self):
                    try:
                        future = asyncio.run_coroutine_threadsafe(self._stack.aclose(), self._loop)
                        future.result(timeout=10)
                    except Exception:
                        pass
                    self._loop.call_soon_threadsafe(self._loop.stop)
            """,
        # A shielded reader the enclosing function's `stop()` cancels: kept, not abandoned.
        """
            import asyncio

            async def open_pipe(child):
                said = bytearray()

                async def keep_tail():
                    while chunk := await child.stderr.read(4096):
                        said.extend(chunk)

                draining = asyncio.create_task(keep_tail())

                async def diagnostic():
                    try:
                        await asyncio.wait_for(asyncio.shield(draining), 1)
                    except TimeoutError:
                        pass
                    return said.decode()

                async def stop():
                    draining.cancel()

                return diagnostic, stop
            """,
        # A task taken from the object's registry: it stays there, to be collected by a later call.
        """
            import asyncio

            class Sessions:
                async def collect(self, process_id, wait_ms):
                    task = self._lines[process_id]
                    done, _ = await asyncio.wait({task}, timeout=wait_ms / 1000)
                    if not done:
                        return Update(process_id=process_id, output=b"")
                    del self._lines[process_id]
                    if task.cancelled():
                        return Update(process_id=None, output=b"")
                    result = task.result()
                    return Update(process_id=None, output=result.output)
            """,
        # Pending tasks cancelled, in a loop or a comprehension.
        """
            import asyncio
            async def f(cs):
                tasks = [asyncio.create_task(c) for c in cs]
                done, pending = await asyncio.wait(tasks, timeout=5)
                for t in pending:
                    t.cancel()
                return done
            """,
        """
            import asyncio
            async def f(cs):
                tasks = [asyncio.create_task(c) for c in cs]
                done, pending = await asyncio.wait(tasks, timeout=5)
                [t.cancel() for t in list(pending)]
            """,
        # Fed back into the next wait: the FIRST_COMPLETED loop.
        """
            import asyncio
            async def f(cs):
                tasks = [asyncio.create_task(c) for c in cs]
                pending = set(tasks)
                while pending:
                    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                    for t in done:
                        handle(t.result())
            """,
        # Handed to a helper, returned, or gathered.
        """
            import asyncio
            async def f(cs):
                ts = [asyncio.create_task(c) for c in cs]
                done, pending = await asyncio.wait(ts, timeout=5)
                await cancel_all(pending)
            """,
        """
            import asyncio
            async def f(cs):
                ts = [asyncio.create_task(c) for c in cs]
                return await asyncio.wait(ts, timeout=5)
            """,
        """
            import asyncio
            async def f(cs):
                ts = [asyncio.create_task(c) for c in cs]
                done, pending = await asyncio.wait(ts, timeout=5)
                return done, pending
            """,
        # Result discarded, but the tasks waited on are cancelled afterwards.
        """
            import asyncio
            async def f(cs):
                ts = [asyncio.create_task(c) for c in cs]
                await asyncio.wait(ts, timeout=5)
                for t in ts:
                    t.cancel()
            """,
        # The tasks of a literal set, cancelled by name afterwards.
        """
            import asyncio
            async def f(job):
                work = asyncio.create_task(job)
                watchdog = asyncio.create_task(asyncio.sleep(60))
                done, _ = await asyncio.wait({work, watchdog}, return_when=asyncio.FIRST_COMPLETED)
                watchdog.cancel()
                work.cancel()
            """,
        # Cancelled first, then given a grace period: what is left is only reported.
        """
            import asyncio, logging
            async def close(cs):
                ts = [asyncio.create_task(c) for c in cs]
                for t in ts:
                    t.cancel()
                done, pending = await asyncio.wait(ts, timeout=1)
                if pending:
                    logging.warning('%d tasks still stopping', len(pending))
            """,
        # Kept by the object: the pending set stored, or a snapshot of a registry it owns.
        """
            import asyncio
            class Pool:
                async def drain(self):
                    done, self.pending = await asyncio.wait(self.pending, return_when=asyncio.FIRST_COMPLETED)
            """,
        """
            import asyncio
            class Pty:
                async def settle(self):
                    tasks = tuple(self._closing)
                    await asyncio.wait(tasks, timeout=1)
            """,
        """
            import asyncio
            async def step(context, job):
                if context.task is None:
                    context.task = asyncio.create_task(job())
                done, _ = await asyncio.wait((context.task,), timeout=1)
                return bool(done)
            """,
        # A collection the enclosing loop waits on again; the outcome handed to the caller.
        """
            import concurrent.futures as cf
            def run(ex, jobs, deadline):
                futs = {ex.submit(j) for j in jobs}
                while futs:
                    done, inflight = cf.wait(futs, timeout=deadline, return_when=cf.FIRST_COMPLETED)
                    if not done:
                        break
                    for f in done:
                        futs.remove(f)
            """,
        """
            import concurrent.futures as cf
            def flush(ex, jobs):
                futs = [ex.submit(j) for j in jobs]
                done, not_done = cf.wait(futs, timeout=5)
                return len(not_done) == 0
            """,
        # FIRST_COMPLETED of a single task waits for that task.
        """
            import asyncio
            async def f(c):
                t = asyncio.create_task(c)
                done, _ = await asyncio.wait({t}, return_when=asyncio.FIRST_COMPLETED)
                return done.pop().result()
            """,
        # Tasks the caller passed in: the caller still holds them.
        """
            import asyncio
            async def wait_briefly(remaining, seconds):
                done, _ = await asyncio.wait(remaining, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
                return bool(done)
            """,
        # No timeout and ALL_COMPLETED: nothing is left pending.
        """
            import asyncio
            async def f(cs):
                ts = [asyncio.create_task(c) for c in cs]
                done, pending = await asyncio.wait(ts)
            """,
        # wait_for cancels by itself.
        """
            import asyncio
            async def f(c):
                try:
                    return await asyncio.wait_for(c, timeout=5)
                except asyncio.TimeoutError:
                    return None
            """,
        # The timeout path cancels, or records the unknown outcome.
        """
            from concurrent.futures import ThreadPoolExecutor, TimeoutError
            ex = ThreadPoolExecutor()
            def f(order):
                fut = ex.submit(charge, order)
                try:
                    return fut.result(timeout=10)
                except TimeoutError:
                    fut.cancel()
                    raise
            """,
        """
            from concurrent.futures import ThreadPoolExecutor, TimeoutError
            ex = ThreadPoolExecutor()
            def f(order):
                fut = ex.submit(charge, order)
                try:
                    return fut.result(timeout=10)
                except TimeoutError:
                    ledger.mark_unknown(order.id)
                    raise
            """,
        # No local handler: the timeout propagates to a caller that may handle it.
        """
            from concurrent.futures import ThreadPoolExecutor
            ex = ThreadPoolExecutor()
            x = ex.submit(f).result(timeout=3)
            """,
        # A handler for something else than a timeout.
        """
            def f(fut):
                try:
                    return fut.result(timeout=10)
                except ValueError:
                    return None
            """,
        # Not a future: `result` of an unrelated object without a timeout.
        """
            import asyncio
            async def f(t):
                await asyncio.wait([t])
                return t.result()
            """,
        # Leaving the pool's `with` waits for its work: nothing runs on after the caller.
        """
            from concurrent.futures import ThreadPoolExecutor, TimeoutError
            def load(url):
                with ThreadPoolExecutor(max_workers=1) as pool:
                    fut = pool.submit(fetch, url)
                    try:
                        return fut.result(timeout=10)
                    except TimeoutError:
                        return None
            """,
        # Cancelled on the line before: `result(timeout=0)` only collects the outcome.
        """

            def cleanup(memory_future, learning_future):
                for future in (memory_future, learning_future):
                    if future is not None and not future.done():
                        future.cancel()
                        try:
                            future.result(timeout=0)
                        except Exception:
                            pass
            """,
        # A cooperative cancel token set in the handler stops the worker.
        """

            from concurrent.futures import TimeoutError as FutureTimeoutError

            def run_sync(self, fn, seconds):
                budget = WorkBudget(seconds)
                future = self._executor.submit(self._execute, fn, budget)
                try:
                    return future.result(timeout=seconds)
                except FutureTimeoutError as exc:
                    budget.cancelled.set()
                    raise TimeoutError("operation_deadline") from exc
            """,
        # The child's process group is killed in `finally`.
        """

            import asyncio, os, signal

            async def run_bash(transport, protocol, timeout_seconds):
                timed_out = False
                try:
                    await asyncio.wait_for(asyncio.shield(protocol.closed), timeout=timeout_seconds)
                except TimeoutError:
                    timed_out = True
                finally:
                    os.killpg(transport.get_pid(), signal.SIGKILL)
                return timed_out
            """,
        # Tasks from a module registry that others poll and cancel.
        """

            import asyncio

            _background_tasks: set = set()

            async def await_background_runs(timeout=None):
                pending = [task for task in _background_tasks if not task.done()]
                if not pending:
                    return
                await asyncio.wait(pending, timeout=timeout)
            """,
        # A subclass of ThreadPoolExecutor used in `with`: leaving it waits for the work.
        """

            def fetch_all(urls):
                with ContextThreadPoolExecutor(max_workers=4) as pool:
                    futures = [pool.submit(fetch, url) for url in urls]
                    try:
                        return [f.result(timeout=10) for f in futures]
                    except TimeoutError:
                        return []
            """,
        # A re-wait loop until a deadline: what is still pending is waited for again.
        """
            import asyncio

            async def drain(deadline):
                while asyncio.get_event_loop().time() < deadline:
                    await asyncio.sleep(0)
                    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
                    if not pending:
                        break
                    await asyncio.wait(pending, timeout=max(0, deadline - asyncio.get_event_loop().time()))
            """,
        # A wait in a loop whose timeout goes round again: the timeout is a polling interval.
        """

            import concurrent.futures
            import logging

            def wait_for_upload(executor, path, stop_event):
                future = executor.submit(upload_file, path)
                while not stop_event.is_set():
                    try:
                        return future.result(timeout=1.0)
                    except concurrent.futures.TimeoutError:
                        logging.debug("upload of %s still running", path)
                        continue
                return None
            """,
        # A future or task kept by the object or the module: whoever holds it sees it through.
        """

            import asyncio
            from concurrent.futures import TimeoutError as FutureTimeout

            _running: set = set()

            class JobRunner:
                def __init__(self, pool):
                    self._pool = pool
                    self._futures = {}
                    self._stuck = set()

                def run(self, job_id, job):
                    fut = self._pool.submit(job.execute)
                    self._futures[job_id] = fut
                    try:
                        return fut.result(timeout=30)
                    except FutureTimeout:
                        return None

                def run_or_park(self, job):
                    fut = self._pool.submit(job.execute)
                    try:
                        return fut.result(timeout=30)
                    except FutureTimeout:
                        self._stuck.add(fut)
                        return None

            async def notify_all(hooks, event):
                tasks = [asyncio.create_task(hook(event)) for hook in hooks]
                for task in tasks:
                    _running.add(task)
                    task.add_done_callback(_running.discard)
                await asyncio.wait(tasks, timeout=5)
            """,
    ]

    INVALID = [
        # The nested function's own loop variable shadows the task its enclosing function cancels.
        Invalid("""
            import asyncio

            async def supervise(orders):
                task = asyncio.create_task(heartbeat())

                async def charge_all():
                    for task in [asyncio.create_task(charge(order)) for order in orders]:
                        try:
                            await asyncio.wait_for(asyncio.shield(task), 1)
                        except asyncio.TimeoutError:
                            pass

                await charge_all()
                task.cancel()
            """, line=9, severity="info"),
        # The same shielded reader with nothing that ever cancels it.
        Invalid("""
            import asyncio

            async def open_pipe(child):
                said = bytearray()

                async def keep_tail():
                    while chunk := await child.stderr.read(4096):
                        said.extend(chunk)

                draining = asyncio.create_task(keep_tail())

                async def diagnostic():
                    try:
                        await asyncio.wait_for(asyncio.shield(draining), 1)
                    except TimeoutError:
                        pass
                    return said.decode()

                return diagnostic
            """, line=14, severity="info"),
        Invalid(
            """
                import asyncio
                async def f(calls):
                    tasks = [asyncio.create_task(run(c)) for c in calls]
                    done, pending = await asyncio.wait(tasks, timeout=30)
                    if pending:
                        raise ToolTimeout(f'{len(pending)} tools still running')
                    return done
                """,
            line=4, severity="info",
        ),
        # Pending only logged.
        Invalid(
            """
                import asyncio, logging
                async def f(cs):
                    ts = [asyncio.create_task(c) for c in cs]
                    done, pending = await asyncio.wait(ts, timeout=5)
                    for t in pending:
                        logging.warning('abandoning %s', t.get_name())
                """,
            line=4, severity="info",
        ),
        # Result discarded; the tasks cannot be reached any more.
        Invalid("""
                import asyncio
                async def f(cs):
                    await asyncio.wait([asyncio.create_task(c) for c in cs], timeout=5)
                """, line=3, severity="info"),
        Invalid("""
                import asyncio
                async def f(cs):
                    ts = [asyncio.create_task(c) for c in cs]
                    done, _ = await asyncio.wait(ts, timeout=5)
                    return done
                """, line=4, severity="info"),
        # A loop that makes new tasks each round: the last round's stragglers are abandoned.
        Invalid(
            """
                import asyncio
                async def f(batches):
                    for batch in batches:
                        tasks = [asyncio.create_task(run(c)) for c in batch]
                        done, pending = await asyncio.wait(tasks, timeout=30)
                        report(done)
                """,
            line=5, severity="info",
        ),
        # A race whose losers keep running.
        Invalid(
            """
                from asyncio import wait, FIRST_COMPLETED, create_task
                async def hedge(primary, backup):
                    a, b = create_task(primary), create_task(backup)
                    done, pending = await wait({a, b}, return_when=FIRST_COMPLETED)
                    return done.pop().result()
                """,
            line=4, severity="info",
        ),
        Invalid(
            """
                import concurrent.futures as cf
                def f(ex, jobs):
                    futs = [ex.submit(j) for j in jobs]
                    done, not_done = cf.wait(futs, 30)
                    return [x.result() for x in done]
                """,
            line=4, severity="info",
        ),
        Invalid(
            """
                from concurrent.futures import ThreadPoolExecutor, TimeoutError
                ex = ThreadPoolExecutor()
                def refund(order):
                    fut = ex.submit(gateway.refund, order)
                    try:
                        return fut.result(timeout=10)
                    except TimeoutError:
                        log.warning('refund timed out')
                        return {'status': 'failed'}
                """,
            line=6,
        ),
        # An untyped future: `.result(timeout=...)` is a future's.
        Invalid(
            """
                def f(futures):
                    for fut in futures:
                        try:
                            fut.result(timeout=5)
                        except Exception:
                            pass
                """,
            line=4, severity="info",
        ),
        Invalid(
            """
                import asyncio
                async def f(task):
                    try:
                        return await asyncio.wait_for(asyncio.shield(task), 5)
                    except asyncio.TimeoutError:
                        raise HTTPException(504)
                """,
            line=4, severity="info",
        ),
        # Work that writes, abandoned: the refunds land after the caller reported failure.
        Invalid("""

                import asyncio

                async def refund_all(payments, orders):
                    tasks = [asyncio.create_task(payments.refund(order.charge_id)) for order in orders]
                    done, pending = await asyncio.wait(tasks, timeout=30)
                    if pending:
                        raise TimeoutError(f"{len(pending)} refunds still running")
                    return [t.result() for t in done]
                """, line=6),
        # A loop that starts new work each round abandons the last round's work.
        Invalid("""

                from concurrent.futures import TimeoutError

                def send_batches(pool, mailer, batches):
                    for batch in batches:
                        fut = pool.submit(mailer.send_email, batch)
                        try:
                            fut.result(timeout=10)
                        except TimeoutError:
                            continue
                """, line=8),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        self.frames: list[_Frame] = []
        self.assigned_to: dict[cst.Call, cst.BaseAssignTargetExpression | None] = {}
        settings = self.context.settings
        self.registry = ToolRegistry.for_table(settings.tools if settings is not None else None)

    # -- scopes -------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.frames.append(_Frame(node=node))
        self.model = self.get_metadata(RetryProvider, node)
        self.facts = {id(f.node): f for group in self.model.functions.values() for f in group}

    def leave_Module(self, original_node: cst.Module) -> None:
        self._check_waits(original_node, self.frames.pop())

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        self.frames.append(_Frame(params=names, node=node))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._check_waits(original_node.body, self.frames.pop())

    def _pool(self, node: cst.With) -> bool:
        """An executor (a subclass too, named `...Executor`) whose `with` waits for its work."""
        for item in node.items:
            if not isinstance(item.item, cst.Call):
                continue
            callee = self.get_metadata(CalleeProvider, item.item, None)
            if CalleeProvider.constructors.get(callee) == _EXECUTOR:
                return True
            if (dotted_name(item.item.func) or "").endswith("Executor"):
                return True
        return False

    def visit_With(self, node: cst.With) -> None:
        self.frames[-1].pools += self._pool(node)

    def leave_With(self, original_node: cst.With) -> None:
        self.frames[-1].pools -= self._pool(original_node)

    def visit_Try_body(self, node: cst.Try) -> None:
        self.frames[-1].tries.append(node)
        self.frames[-1].try_depth[id(node)] = len(self.frames[-1].loop_nodes)

    def leave_Try_body(self, node: cst.Try) -> None:
        self.frames[-1].tries.pop()

    def visit_For(self, node: cst.For) -> None:
        self.frames[-1].loops.append(set())
        self.frames[-1].loop_nodes.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.frames[-1].loops.pop()
        self.frames[-1].loop_nodes.pop()

    def visit_While(self, node: cst.While) -> None:
        self.frames[-1].loops.append(set())
        self.frames[-1].loop_nodes.append(node)
        self.frames[-1].deadlines.append(_clocked(node.test))

    def leave_While(self, original_node: cst.While) -> None:
        self.frames[-1].loops.pop()
        self.frames[-1].loop_nodes.pop()
        self.frames[-1].deadlines.pop()

    def visit_TryStar_body(self, node: cst.TryStar) -> None:
        self.frames[-1].tries.append(node)
        self.frames[-1].try_depth[id(node)] = len(self.frames[-1].loop_nodes)

    def leave_TryStar_body(self, node: cst.TryStar) -> None:
        self.frames[-1].tries.pop()

    # -- where a wait's result goes ---------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        call = _unawaited(node.value)
        if call is not None and len(node.targets) == 1:
            self.assigned_to[call] = node.targets[0].target
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._bind(target.target.value, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.value is not None:
            self._bind(node.target.value, node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, node.value)

    def _bind(self, name: str, value: cst.BaseExpression) -> None:
        frame = self.frames[-1]
        frame.assigned[name] = value
        for bound in frame.loops:
            bound.add(name)

    def visit_Expr(self, node: cst.Expr) -> None:
        call = _unawaited(node.value)
        if call is not None:
            self.assigned_to[call] = None

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.get_metadata(CalleeProvider, node, None)
        if callee in _WAITS:
            self._see_wait(node, _WAITS[callee])
        elif callee in _WAIT_FOR:
            self._see_wait_for(node)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "result":
            self._see_result(node, callee)

    def _see_wait(self, node: cst.Call, timeout_position: int | None) -> None:
        timeout = calls.argument(node, ("timeout",), timeout_position)
        return_when = calls.argument(node, ("return_when",), 2 if timeout_position else None)
        bounded = timeout is not None and not calls.is_none(timeout.value)
        early = return_when is not None and _last_name(return_when.value) in _EARLY_RETURNS
        plain = calls.positional(node)
        if not (bounded or early) or node not in self.assigned_to or not plain:
            return  # nothing left pending, or the result goes somewhere we do not follow
        target = self.assigned_to[node]
        pending = None
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
            second = target.elements[1].value
            if not isinstance(second, cst.Name):
                return  # kept: `done, self.pending = ...`
            pending = None if second.value == "_" else second.value
        elif target is not None:
            return  # `result = await wait(...)`: followed no further
        frame = self.frames[-1]
        if any(frame.deadlines):
            return  # `while loop.time() < deadline: ... wait(pending, timeout=left)`: waits again
        waited = _unconverted(plain[0].value)
        if _held_elsewhere(waited, frame, self.frames[0]):
            return  # the object keeps them: `self._tasks`, a snapshot `tasks = tuple(self._tasks)`
        if isinstance(waited, cst.Name) and _from_registry(frame.assigned.get(waited.value), self.frames[0]):
            return  # `[t for t in _background_tasks if not t.done()]`: a registry others poll
        elements = [e.value for e in waited.elements] if isinstance(waited, (cst.List, cst.Set, cst.Tuple)) else []
        if elements and all(isinstance(e, cst.Name) and _registry_entry(frame.assigned.get(e.value), self.frames[0])
                            for e in elements):
            return  # `task = self._lines[process_id]`: an entry of a registry its owner collects later
        if isinstance(waited, (cst.List, cst.Set, cst.Tuple)):
            elements = waited.elements
            if elements and all(isinstance(e.value, cst.Attribute) for e in elements):
                return  # each task is kept by its object: `(context.task,)`
            if len(elements) == 1 and isinstance(elements[0], cst.Element) and not bounded:
                return  # FIRST_COMPLETED of one task is waiting for it
            named = [e.value for e in elements if isinstance(e.value, cst.Name)]
        else:
            named = [waited] if isinstance(waited, cst.Name) else []
        if named and len(named) == len(getattr(waited, "elements", named)) and all(
            n.value in frame.params for n in named
        ):
            return  # the caller made these tasks and still holds them
        awaited = [n.value for n in named]
        fed_back = isinstance(waited, cst.Name) and bool(frame.loops) and waited.value not in frame.loops[-1]
        frame.waits.append(_Wait(node, pending, awaited, fed_back, waited))

    def _check_waits(self, scope: cst.CSTNode, frame: _Frame) -> None:
        if frame.waits and frame.cleans_up():
            return
        for wait in frame.waits:
            if wait.pending is not None and handles_tasks(scope, wait.pending):
                continue
            outside = self._outside(wait.call)
            if wait.fed_back or any(handles_tasks(scope, name, outside) for name in wait.awaited):
                continue
            if any(_kept(scope, name, self.frames[0]) for name in [*wait.awaited, *filter(None, [wait.pending])]):
                continue
            what = f"nothing cancels, awaits or keeps `{wait.pending}`" if wait.pending else "its pending set is dropped"
            self.report(
                wait.call,
                f"`{_shown(wait.call)}(...)` can return while tasks still run, and {what}: "
                "they go on calling tools after the caller gave up; cancel them "
                "(`for t in pending: t.cancel()`) or keep them to await later",
                severity=self._work_severity(wait.work, frame),
            )

    def _work_severity(self, work: cst.BaseExpression | None, frame: _Frame) -> str | None:
        """The rule's own severity when the abandoned work is a known write (the task's
        coroutine, the submitted callable), else `info`: work that writes nothing does
        no harm by running on."""
        where = self.facts.get(id(frame.node))
        for target, carrier in _work(work, frame, 0):
            callee = self.get_metadata(CalleeProvider, carrier, None) if target is carrier.func else None
            found = self.registry.write_of(target, callee=callee, carrier=carrier, where=where, model=self.model)
            if found is not None:
                return severity(found, (), handed=True)
        return INFERRED

    @staticmethod
    def _outside(node: cst.CSTNode):
        """A predicate: is a node outside `node`'s subtree?"""
        inside = {id(descendant) for descendant in walk.subtree(node)}
        return lambda other: id(other) not in inside

    # -- a timeout whose handler abandons the work ---------------------------------------
    def _see_wait_for(self, node: cst.Call) -> None:
        inner = node.args[0].value if node.args else None
        timeout = calls.argument(node, ("timeout",), 1)
        if (
            isinstance(inner, cst.Call)
            and self.get_metadata(CalleeProvider, inner, None) in _SHIELD
            and timeout is not None
            and not calls.is_none(timeout.value)
        ):
            shielded = inner.args[0].value if inner.args else None
            self._check_handler(node, "the shielded task keeps running after the timeout", shielded)

    def _see_result(self, node: cst.Call, callee: str | None) -> None:
        if self.frames[-1].pools:
            return  # the pool's `with` waits for the work: nothing outlives the caller
        timeout = calls.argument(node, ("timeout",), 0 if callee == _FUTURE_RESULT else None)
        if timeout is not None and not calls.is_none(timeout.value):
            work = node.func.value if isinstance(node.func, cst.Attribute) else None
            self._check_handler(node, "the future's work keeps running in its worker after the timeout", work)

    def _check_handler(self, node: cst.Call, why: str, work: cst.BaseExpression | None) -> None:
        frame = self.frames[-1]
        if frame.cleans_up():
            return
        if isinstance(work, cst.Name) and frame.node is not None and _kept(frame.node, work.value, self.frames[0]):
            return  # kept (`self._stuck.add(fut)`, a done-callback): not abandoned
        if _held_elsewhere(work, frame, self.frames[0]):
            return  # `task = job.completion_task`: its owner still holds it (shielded on purpose)
        if isinstance(work, cst.Name) and self._cancelled_by_owner(work.value, frame):
            return  # a task of the enclosing function, which cancels it elsewhere (its `stop()`)
        for attempt in reversed(frame.tries):
            handler = next((h for h in attempt.handlers if catches_timeout(h)), None)
            if handler is None:
                continue
            if self._polls(attempt, handler, work):
                return
            if is_passive(handler):
                line = self.line_of(handler)
                self.report(
                    node,
                    f"`{_shown(node)}(...)`: {why}, and the handler on line {line} neither cancels it "
                    "nor records its outcome as unknown: its side effects may land after the caller moved on",
                    severity=self._work_severity(work, frame),
                )
            return

    def _cancelled_by_owner(self, name: str, frame: _Frame) -> bool:
        """`name` is not the waiting function's own but an enclosing function's, which cancels it."""
        if name in frame.params or name in frame.assigned or (frame.node is not None and _binds(frame.node, name)):
            return False
        owner = next((f for f in reversed(self.frames[1:-1]) if name in f.assigned), None)
        return owner is not None and owner.node is not None and _cancelled(owner.node, name)

    def _polls(self, attempt: cst.Try | cst.TryStar, handler: cst.ExceptHandler, work: cst.BaseExpression | None
               ) -> bool:
        """The wait is a polling interval: the try is in a loop, the timeout handler goes
        round again, and the loop waits on the same work (not new work each round)."""
        frame = self.frames[-1]
        depth = frame.try_depth.get(id(attempt), 0)
        if not depth or not goes_round(handler.body) or not isinstance(work, cst.Name):
            return False
        loop = frame.loop_nodes[depth - 1]
        targets = {n.value for n in walk.subtree(loop.target) if isinstance(n, cst.Name)} if isinstance(loop, cst.For) else set()
        return work.value not in frame.loops[depth - 1] | targets


def _method_name(func: cst.BaseExpression) -> str | None:
    """`time` of `asyncio.get_event_loop().time`, `monotonic` of `time.monotonic`."""
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


def _clocked(test: cst.BaseExpression) -> bool:
    """A loop test that reads a clock: the loop goes round until a deadline."""
    return any(
        isinstance(node, cst.Call) and _method_name(node.func) in load_pack("retry")["clocks"]
        for node in walk.subtree(test)
    )


def _stops(call: cst.Call) -> bool:
    if not isinstance(call.func, (cst.Attribute, cst.Name)):
        return False
    name = (dotted_name(call.func) or "").rsplit(".", 1)[-1]
    if name in _CLEANUP:
        return True
    if any(isinstance(a.value, cst.Attribute) and a.value.attr.value in _CLEANUP for a in call.args):
        return True  # scheduled: `loop.call_soon_threadsafe(loop.stop)`, `loop.call_later(5, task.cancel)`
    return name == "set" and isinstance(call.func, cst.Attribute) and bool(
        words(dotted_name(call.func.value) or "") & _TOKEN_WORDS
    )


def _from_registry(value: cst.BaseExpression | None, module: _Frame) -> bool:
    """A comprehension over a collection this call did not make: an object's
    (`self._tasks`) or the module's (`_background_tasks`), which others poll or cancel."""
    value = _unconverted(value)
    if not isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return False
    return _registry(value.for_in.iter, module)


def _held_elsewhere(expr: cst.BaseExpression | None, frame: _Frame, module: _Frame) -> bool:
    """Work an object or the module keeps, which its owner still holds: an object's
    (`self._task`, `job.completion_task`), a local bound to one, to a snapshot of one or to an entry of a
    registry."""
    expr = _unconverted(expr)
    if isinstance(expr, cst.Attribute):
        return True
    if not isinstance(expr, cst.Name):
        return False
    value = _unconverted(frame.assigned.get(expr.value))
    return isinstance(value, cst.Attribute) or _registry_entry(value, module)


def _registry_entry(value: cst.BaseExpression | None, module: _Frame) -> bool:
    """`self._lines[process_id]`, `_tasks[key]`: an entry of an object's or the module's registry."""
    value = _unconverted(value)
    return isinstance(value, cst.Subscript) and _registry(value.value, module)


def _registry(holder: cst.BaseExpression, module: _Frame) -> bool:
    """A collection the object (`self._tasks`) or the module (`_background_tasks`) keeps."""
    return isinstance(holder, cst.Attribute) or (isinstance(holder, cst.Name) and holder.value in module.assigned)


def _work(expr: cst.BaseExpression | None, frame: _Frame, depth: int) -> list[tuple[cst.BaseExpression, cst.Call]]:
    """What a task or future runs, as (callee expression, the call carrying its
    arguments): the coroutine of `create_task(run(c))`, the callable of
    `pool.submit(charge, order)`; through local names and comprehensions."""
    if expr is None or depth > 4:
        return []
    expr = _unconverted(expr.expression if isinstance(expr, cst.Await) else expr)
    if isinstance(expr, cst.Name):
        return _work(frame.assigned.get(expr.value), frame, depth + 1)
    if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return _work(expr.elt, frame, depth + 1)
    if isinstance(expr, (cst.List, cst.Set, cst.Tuple)):
        return [found for e in expr.elements for found in _work(e.value, frame, depth + 1)]
    if not isinstance(expr, cst.Call):
        return []
    name = _method_name(expr.func)
    if name in _STARTS:
        at = _STARTS[name]
        plain = calls.positional(expr)
        if at >= len(plain):
            return []
        started = plain[at].value
        if name in ("submit", "run_in_executor"):
            return [(started, expr)] if isinstance(started, (cst.Name, cst.Attribute)) else []
        return _work(started, frame, depth + 1)
    return [(expr.func, expr)]


def _kept(scope: cst.CSTNode, name: str, module: _Frame) -> bool:
    """A task or future `name` is kept where it outlives the call: put into a container
    of the object or module (`self._stuck.add(fut)`, `self._futures[job_id] = fut`,
    `_running.append(task)`), bound to an attribute, or given a done-callback."""
    for node in walk.subtree(scope):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method == "add_done_callback" and _is_name(node.func.value, name):
                return True
            holder = node.func.value
            if method in _KEEPS and any(_is_name(a.value, name) for a in node.args) and (
                not isinstance(holder, cst.Name) or holder.value in module.assigned
            ):
                return True  # `self._stuck.add(fut)`, `_running.add(task)`: not a local list
        elif isinstance(node, cst.Assign) and _is_name(node.value, name):
            if any(isinstance(t.target, (cst.Subscript, cst.Attribute)) for t in node.targets):
                return True
    return False


def _binds(scope: cst.CSTNode, name: str) -> bool:
    """`for name in ...`, `with ... as name`, `a, name = ...` in `scope`: names `frame.assigned` does not hold."""
    for node in walk.subtree(scope):
        targets = [node.target] if isinstance(node, (cst.For, cst.CompFor)) else \
            [node.name] if isinstance(node, cst.AsName) else \
            [t.target for t in node.targets] if isinstance(node, cst.Assign) else []
        if any(_is_name(n, name) for t in targets for n in walk.subtree(t)):
            return True
    return False


def _cancelled(scope: cst.CSTNode, name: str) -> bool:
    """`name.cancel()` somewhere in `scope` (a nested function of it included)."""
    return any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cancel"
               and _is_name(node.func.value, name) for node in walk.subtree(scope))


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _unawaited(expr: cst.BaseExpression) -> cst.Call | None:
    if isinstance(expr, cst.Await):
        expr = expr.expression
    return expr if isinstance(expr, cst.Call) else None


def _unconverted(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The collection inside `set(x)`, `list(x)`, `tuple(x)`."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value in ("set", "list", "tuple", "frozenset")
        and len(expr.args) == 1
    ):
        expr = expr.args[0].value
    return expr


def _last_name(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value if isinstance(expr.evaluated_value, str) else None
    name = dotted_name(expr)
    return name.rsplit(".", 1)[-1] if name else None


def _shown(call: cst.Call) -> str:
    return dotted_name(call.func) or "call"
