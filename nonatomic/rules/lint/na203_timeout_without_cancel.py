from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import PositionProvider

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name
from nonatomic.rules.lint.semantics.pending import catches_timeout, handles_tasks, is_passive

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
_EARLY_RETURNS = frozenset({"FIRST_COMPLETED", "FIRST_EXCEPTION"})


@dataclass
class _Wait:
    call: cst.Call
    pending: str | None  # the name the pending set is bound to, if any
    awaited: str | None  # the name of the collection waited on


@dataclass
class _Frame:
    waits: list[_Wait] = field(default_factory=list)
    tries: list[cst.Try | cst.TryStar] = field(default_factory=list)  # whose body we are in


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
    (they cancel on timeout), a `pending` set fed back into the next `wait`
    (the usual `FIRST_COMPLETED` loop), returned, stored or passed to a helper,
    and a `result(timeout=...)` with no local handler (the caller decides).

    ## Why is this bad?
    A timeout ends the caller's wait, not the work. The abandoned task goes on
    calling tools after the caller reported failure, and whoever retries now
    races it. One real incident: a FastAPI endpoint gave up on an agent run
    after 60 s and returned 504, but the run's task was never cancelled; the
    user clicked again, a second run started, and both wrote the same order.
    Work that cannot be cancelled (a thread in a pool, a shielded task) must at
    least be recorded as "outcome unknown" so that a retry verifies first.

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
    name = "timeout-without-cancel"
    severity = "warning"
    prefilter = re.compile(rb"\bwait\b|\.result\(|\bshield\b")
    METADATA_DEPENDENCIES = (PositionProvider, CalleeProvider)

    VALID = [
        # Pending tasks cancelled, in a loop or a comprehension.
        (
            "import asyncio\nasync def f(tasks):\n    done, pending = await asyncio.wait(tasks, timeout=5)\n"
            "    for t in pending:\n        t.cancel()\n    return done\n"
        ),
        (
            "import asyncio\nasync def f(tasks):\n    done, pending = await asyncio.wait(tasks, timeout=5)\n"
            "    [t.cancel() for t in list(pending)]\n"
        ),
        # Fed back into the next wait: the FIRST_COMPLETED loop.
        (
            "import asyncio\nasync def f(tasks):\n    pending = set(tasks)\n    while pending:\n"
            "        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)\n"
            "        for t in done:\n            handle(t.result())\n"
        ),
        # Handed to a helper, returned, or gathered.
        "import asyncio\nasync def f(ts):\n    done, pending = await asyncio.wait(ts, timeout=5)\n    await cancel_all(pending)\n",
        "import asyncio\nasync def f(ts):\n    return await asyncio.wait(ts, timeout=5)\n",
        "import asyncio\nasync def f(ts):\n    done, pending = await asyncio.wait(ts, timeout=5)\n    return done, pending\n",
        # Result discarded, but the tasks waited on are cancelled afterwards.
        "import asyncio\nasync def f(ts):\n    await asyncio.wait(ts, timeout=5)\n    for t in ts:\n        t.cancel()\n",
        # No timeout and ALL_COMPLETED: nothing is left pending.
        "import asyncio\nasync def f(ts):\n    done, pending = await asyncio.wait(ts)\n",
        # wait_for cancels by itself.
        "import asyncio\nasync def f(c):\n    try:\n        return await asyncio.wait_for(c, timeout=5)\n    except asyncio.TimeoutError:\n        return None\n",
        # The timeout path cancels, or records the unknown outcome.
        (
            "from concurrent.futures import ThreadPoolExecutor, TimeoutError\nex = ThreadPoolExecutor()\n"
            "def f(order):\n    fut = ex.submit(charge, order)\n    try:\n        return fut.result(timeout=10)\n"
            "    except TimeoutError:\n        fut.cancel()\n        raise\n"
        ),
        (
            "from concurrent.futures import ThreadPoolExecutor, TimeoutError\nex = ThreadPoolExecutor()\n"
            "def f(order):\n    fut = ex.submit(charge, order)\n    try:\n        return fut.result(timeout=10)\n"
            "    except TimeoutError:\n        ledger.mark_unknown(order.id)\n        raise\n"
        ),
        # No local handler: the timeout propagates to a caller that may handle it.
        "from concurrent.futures import ThreadPoolExecutor\nex = ThreadPoolExecutor()\nx = ex.submit(f).result(timeout=3)\n",
        # A handler for something else than a timeout.
        (
            "def f(fut):\n    try:\n        return fut.result(timeout=10)\n    except ValueError:\n        return None\n"
        ),
        # Not a future: `result` of an unrelated object without a timeout.
        "import asyncio\nasync def f(t):\n    await asyncio.wait([t])\n    return t.result()\n",
    ]
    INVALID = [
        Invalid(
            "import asyncio\nasync def f(calls):\n    tasks = [asyncio.create_task(run(c)) for c in calls]\n"
            "    done, pending = await asyncio.wait(tasks, timeout=30)\n    if pending:\n"
            "        raise ToolTimeout(f'{len(pending)} tools still running')\n    return done\n",
            line=4,
        ),
        # Pending only logged.
        Invalid(
            "import asyncio, logging\nasync def f(ts):\n    done, pending = await asyncio.wait(ts, timeout=5)\n"
            "    for t in pending:\n        logging.warning('abandoning %s', t.get_name())\n",
            line=3,
        ),
        # Result discarded; the tasks cannot be reached any more.
        Invalid("import asyncio\nasync def f(cs):\n    await asyncio.wait([asyncio.create_task(c) for c in cs], timeout=5)\n", line=3),
        Invalid("import asyncio\nasync def f(ts):\n    done, _ = await asyncio.wait(ts, timeout=5)\n    return done\n", line=3),
        # A race whose losers keep running.
        Invalid(
            "from asyncio import wait, FIRST_COMPLETED\nasync def hedge(a, b):\n"
            "    done, pending = await wait({a, b}, return_when=FIRST_COMPLETED)\n    return done.pop().result()\n",
            line=3,
        ),
        Invalid(
            "import concurrent.futures as cf\ndef f(futs):\n    done, not_done = cf.wait(futs, 30)\n    return [x.result() for x in done]\n",
            line=3,
        ),
        Invalid(
            "from concurrent.futures import ThreadPoolExecutor, TimeoutError\nex = ThreadPoolExecutor()\n"
            "def refund(order):\n    fut = ex.submit(gateway.refund, order)\n    try:\n        return fut.result(timeout=10)\n"
            "    except TimeoutError:\n        log.warning('refund timed out')\n        return {'status': 'failed'}\n",
            line=6,
        ),
        # An untyped future: `.result(timeout=...)` is a future's.
        Invalid(
            "def f(futures):\n    for fut in futures:\n        try:\n            fut.result(timeout=5)\n"
            "        except Exception:\n            pass\n",
            line=4,
        ),
        Invalid(
            "import asyncio\nasync def f(task):\n    try:\n        return await asyncio.wait_for(asyncio.shield(task), 5)\n"
            "    except asyncio.TimeoutError:\n        raise HTTPException(504)\n",
            line=4,
        ),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        self.frames: list[_Frame] = []
        self.assigned_to: dict[cst.Call, cst.BaseAssignTargetExpression | None] = {}

    # -- scopes -------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.frames.append(_Frame())

    def leave_Module(self, original_node: cst.Module) -> None:
        self._check_waits(original_node, self.frames.pop())

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.append(_Frame())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._check_waits(original_node.body, self.frames.pop())

    def visit_Try_body(self, node: cst.Try) -> None:
        self.frames[-1].tries.append(node)

    def leave_Try_body(self, node: cst.Try) -> None:
        self.frames[-1].tries.pop()

    def visit_TryStar_body(self, node: cst.TryStar) -> None:
        self.frames[-1].tries.append(node)

    def leave_TryStar_body(self, node: cst.TryStar) -> None:
        self.frames[-1].tries.pop()

    # -- where a wait's result goes ---------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        call = _unawaited(node.value)
        if call is not None and len(node.targets) == 1:
            self.assigned_to[call] = node.targets[0].target

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
        if not (bounded or early) or node not in self.assigned_to:
            return  # nothing left pending, or the result goes somewhere we do not follow
        target = self.assigned_to[node]
        pending = None
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
            second = target.elements[1].value
            pending = second.value if isinstance(second, cst.Name) and second.value != "_" else None
        elif target is not None:
            return  # `result = await wait(...)`: followed no further
        awaited = node.args[0].value if node.args else None
        self.frames[-1].waits.append(
            _Wait(node, pending, awaited.value if isinstance(awaited, cst.Name) else None)
        )

    def _check_waits(self, scope: cst.CSTNode, frame: _Frame) -> None:
        for wait in frame.waits:
            if wait.pending is not None:
                if handles_tasks(scope, wait.pending):
                    continue
                what = f"nothing cancels, awaits or keeps `{wait.pending}`"
            else:
                if wait.awaited is not None and handles_tasks(scope, wait.awaited, self._after(wait.call)):
                    continue
                what = "its pending set is dropped"
            self.report(
                wait.call,
                f"`{_shown(wait.call)}(...)` can return while tasks still run, and {what}: "
                "they go on calling tools after the caller gave up; cancel them "
                "(`for t in pending: t.cancel()`) or keep them to await later",
            )

    def _after(self, node: cst.CSTNode):
        """A predicate: does a node start after `node` ends?"""
        end = self.get_metadata(PositionProvider, node).end

        def later(other: cst.CSTNode) -> bool:
            start = self.get_metadata(PositionProvider, other).start
            return (start.line, start.column) > (end.line, end.column)

        return later

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
            self._check_handler(node, "the shielded task keeps running after the timeout")

    def _see_result(self, node: cst.Call, callee: str | None) -> None:
        timeout = calls.argument(node, ("timeout",), 0 if callee == _FUTURE_RESULT else None)
        if timeout is not None and not calls.is_none(timeout.value):
            self._check_handler(node, "the future's work keeps running in its worker after the timeout")

    def _check_handler(self, node: cst.Call, why: str) -> None:
        for attempt in reversed(self.frames[-1].tries):
            handler = next((h for h in attempt.handlers if catches_timeout(h)), None)
            if handler is None:
                continue
            if is_passive(handler):
                line = self.get_metadata(PositionProvider, handler).start.line
                self.report(
                    node,
                    f"`{_shown(node)}(...)`: {why}, and the handler on line {line} neither cancels it "
                    "nor records its outcome as unknown; a retry will race it",
                )
            return


def _unawaited(expr: cst.BaseExpression) -> cst.Call | None:
    if isinstance(expr, cst.Await):
        expr = expr.expression
    return expr if isinstance(expr, cst.Call) else None


def _last_name(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value if isinstance(expr.evaluated_value, str) else None
    name = dotted_name(expr)
    return name.rsplit(".", 1)[-1] if name else None


def _shown(call: cst.Call) -> str:
    return dotted_name(call.func) or "call"
