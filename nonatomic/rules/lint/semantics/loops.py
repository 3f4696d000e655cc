"""Hand-written retry loops, told apart from loops that iterate over work.

A retry loop runs the same work again after a failure and stops once it works:
it counts attempts (`for attempt in range(3)`) or spins (`while ...`), a failure
goes round again (an `except` that does not leave the loop, a `continue`, a
sleep), and success leaves it (`return`, `break`, or setting the `while` flag).
`for user in users: try: send(user) except: continue` iterates: it goes on
after a success, and its variable picks the work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import libcst as cst

from nonatomic.rules.lint.semantics.callees import dotted_name
from nonatomic.rules.lint.semantics.calls import positional
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.semantics.tool_config import tool_pack
from nonatomic.rules.lint.tree import walk

# Calls that may use the attempt counter without making the loop iterate over work.
_COUNTER_USES = {
    "sleep", "print", "log", "debug", "info", "warning", "warn", "error", "exception",
    "critical", "format", "str", "int", "float", "min", "max", "pow", "uniform", "randint",
    "random", "delay", "backoff", "wait", "jitter", "seconds", "interval", "echo", "repr",
}


@dataclass(frozen=True)
class LoopShape:
    caught: tuple[str, ...] | None  # exceptions the retrying handlers catch; () for a bare except
    sleeps: tuple[cst.Call, ...]
    bound: cst.BaseExpression | None  # the `range(...)` or `while` test; None for `while True`
    # The calls the loop retries: those in the body of the try that fails over to
    # the next round, or, without try/except, those whose result decides the exit
    # (`r = post(); if r.ok: break`).  Work before or after them is not the attempt.
    retried: frozenset[cst.Call]
    # every handler that goes round does so only when its test says the attempt was refused:
    # the refusal words each of those tests names (one set per `or`-ed test), else ()
    refused_on: tuple[frozenset[str], ...] = ()


class _Body(cst.CSTVisitor):
    """The parts of one loop body that matter, not entering nested loops and functions."""

    def __init__(self, is_sleep: Callable[[cst.Call], bool]) -> None:
        self.is_sleep = is_sleep
        self.tries: list[cst.Try] = []
        self.exits = False  # a return/break outside the handlers
        self.continues = False
        self.sleeps: list[cst.Call] = []
        self.calls: list[cst.Call] = []
        self.exit_tests: list[cst.BaseExpression] = []  # tests that end or restart the round
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        self.subscripts: list[cst.Subscript] = []
        self._handler_depth = 0

    def _nested(self, node: cst.CSTNode) -> bool:
        return False

    visit_For = visit_While = visit_FunctionDef = visit_ClassDef = visit_Lambda = _nested

    def visit_Try(self, node: cst.Try) -> None:
        self.tries.append(node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._handler_depth += 1

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self._handler_depth -= 1

    def visit_Return(self, node: cst.Return) -> None:
        self.exits = self.exits or not self._handler_depth

    def visit_Break(self, node: cst.Break) -> None:
        self.exits = self.exits or not self._handler_depth

    def visit_Continue(self, node: cst.Continue) -> None:
        self.continues = True

    def visit_If(self, node: cst.If) -> None:
        # `if r.ok: return r` and `if r.code in RETRYABLE: sleep(); continue` both test the attempt.
        if any(isinstance(s, (cst.Return, cst.Break, cst.Continue)) for s in _small_statements(node.body)):
            self.exit_tests.append(node.test)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)
        if self.is_sleep(node):
            self.sleeps.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._handler_depth:
            return
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.assigned.setdefault(target.target.value, []).append(node.value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self.subscripts.append(node)


def _small_statements(block: cst.BaseSuite) -> list[cst.CSTNode]:
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    small: list[cst.CSTNode] = []
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            small += statement.body
        elif isinstance(statement, cst.SimpleStatementSuite):
            small += statement.body
    return small


def leaves_loop(handler: cst.ExceptHandler) -> bool:
    """The handler always raises, returns or breaks: a failure ends the loop."""
    body = handler.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = statements[-1] if statements else None
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and last.body:
        return isinstance(last.body[-1], (cst.Raise, cst.Return, cst.Break))
    return False


def _caught(handler: cst.ExceptHandler) -> list[str] | None:
    """The dotted names of the types `handler` catches ("?" for an expression), None for a bare `except:`."""
    if handler.type is None:
        return None
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else None
    exprs = [el.value for el in types] if types else [handler.type]
    return [dotted_name(expr) or "?" for expr in exprs]


def _never_caught(handler: cst.ExceptHandler, attempt: cst.Try) -> bool:
    """The handler catches only errors a status check raises (`status_only_errors` in
    retry.yaml: `requests.HTTPError` comes from `raise_for_status()`, not from `get`) and its
    attempt makes no status check, raises nothing and calls no function or method of its own
    that might: the handler never runs, and the loop does not go round on it."""
    names = _caught(handler)
    pack = load_pack("retry")
    if names is None or not all(name in pack["status_only_errors"] for name in names):
        return False
    if any(isinstance(node, cst.Raise) for node in walk.subtree(attempt.body)):
        return False
    for call in calls_in(attempt.body):
        name = dotted_name(call.func) or ""
        own = "." not in name or name.split(".", 1)[0] in ("self", "cls")
        if own or name.rsplit(".", 1)[-1] in pack["status_checks"]:
            return False
    return True


def _refusals(handler: cst.ExceptHandler) -> tuple[frozenset[str], ...]:
    """`if not retry_safe(e): raise`, or `if "authorization" in str(e): sleep(...) else: raise`:
    the handler re-raises unless a test that says nothing was applied holds.  The refusal
    words of each of that test's `or`-ed parts; () when the handler goes round otherwise."""
    statements = list(handler.body.body) if isinstance(handler.body, cst.IndentedBlock) else []
    bound = {}  # `is_retryable = isinstance(e, SAFE) or is_deadlock(e)`, then `if not is_retryable: raise`
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    bound[small.targets[0].target.value] = small.value
            continue
        if not isinstance(statement, cst.If):
            continue
        test = statement.test
        if _raises(statement.body) and statement.orelse is None and isinstance(test, cst.UnaryOperation) \
                and isinstance(test.operator, cst.Not):
            condition = test.expression  # `if not C: raise`: it goes round when C
        elif _raises(statement.body) and statement.orelse is None and isinstance(test, cst.Comparison) \
                and all(isinstance(c.operator, cst.NotIn) for c in test.comparisons):
            condition = test  # `if "already allocated" not in str(e): raise`: it goes round when it is in
        elif isinstance(statement.orelse, cst.Else) and _raises(statement.orelse.body) and not _raises(statement.body):
            condition = test  # `if C: <go round> else: raise`
        else:
            continue
        if isinstance(condition, cst.Name) and condition.value in bound:
            condition = bound[condition.value]
        said = tuple(_says_not_applied(part) for part in _disjuncts(condition))
        return said if all(said) else ()
    return ()


def _raises(block: cst.BaseSuite) -> bool:
    return ends_with(block, cst.Raise)


def ends_with(block: cst.BaseSuite, *kinds: type[cst.BaseSmallStatement]) -> bool:
    """The block's last statement is one of `kinds` (`cst.Raise`, `cst.Return`)."""
    last = block.body[-1] if block.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, kinds)


def _disjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return [*_disjuncts(test.left), *_disjuncts(test.right)]
    return [test]


def _says_not_applied(test: cst.BaseExpression) -> frozenset[str]:
    """The words of `test` that say nothing was applied (none: it says something else)."""
    words = {w for name in names_in(test) for w in word_list(name)}
    words |= {w for text in _strings_in(test) for w in word_list(text)}
    lock_wait = {"lock", "timeout"} if {"lock", "timeout"} <= words else set()
    return frozenset(words & not_applied_words() | lock_wait)


@lru_cache(maxsize=1)
def not_applied_words() -> frozenset[str]:
    return frozenset(load_pack("retry")["not_applied_words"])


def mentions(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.Name):
        return node.value == name
    return any(mentions(child, name) for child in walk.children(node))


def names_in(node: cst.CSTNode) -> set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    found: set[str] = set()
    for child in walk.children(node):
        found |= names_in(child)
    return found


def _unwrap(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.expression if isinstance(expr, cst.Await) else expr


def _picks_work(loop: cst.For, body: _Body) -> bool:
    """The loop variable selects what the body works on: `items[i]`, `send(batch=i)`, or
    through a name the body computes from it (`port = start + offset; s.bind((host, port))`:
    a scan of candidates, not one request repeated)."""
    if not isinstance(loop.target, cst.Name):
        return True
    names = {loop.target.value}
    names |= {target for target, values in body.assigned.items()
              if any(mentions(value, name) for value in values for name in names)}
    if any(mentions(sub.slice[0], name) if sub.slice else False for sub in body.subscripts for name in names):
        return True
    for call in body.calls:
        callee = dotted_name(call.func) or ""
        if callee.rsplit(".", 1)[-1].lower().strip("_") in _COUNTER_USES:
            continue
        if any(mentions(arg.value, name) for arg in call.args for name in names):
            return True
    return False


def retry_loop(
    loop: cst.For | cst.While,
    *,
    is_counter: Callable[[cst.BaseExpression], bool],
    is_sleep: Callable[[cst.Call], bool],
) -> LoopShape | None:
    """The retry shape of a hand-written loop, or None when it is not a retry loop."""
    body = _Body(is_sleep)
    walk.visit(loop.body, body)
    shape = _shape(loop, body, is_counter, is_sleep)
    # By design last: it reads the whole body, and most loops iterate over work.
    return None if shape is None or by_design(loop, body) else shape


def _shape(loop: cst.For | cst.While, body: _Body, is_counter: Callable[[cst.BaseExpression], bool],
           is_sleep: Callable[[cst.Call], bool]) -> LoopShape | None:
    flags: set[str] = set()  # `while not done: ... done = True`
    if isinstance(loop, cst.For):
        if not is_counter(loop.iter) or _picks_work(loop, body):
            return None
        bound: cst.BaseExpression | None = loop.iter
    else:
        test = loop.test
        forever = isinstance(test, cst.Name) and test.value == "True" or (
            isinstance(test, cst.Integer) and test.value != "0"
        )
        bound = None if forever else test
        flags = names_in(test) if not forever else set()
    attempts = [
        attempt
        for attempt in body.tries
        if not all(leaves_loop(handler) for handler in attempt.handlers)
        and _attempt_exits(attempt, loop, flags, is_sleep)
    ]
    handlers = [handler for attempt in attempts for handler in attempt.handlers
                if not leaves_loop(handler) and not _never_caught(handler, attempt)]
    if handlers:
        named = [_caught(handler) for handler in handlers]
        bare = any(names is None for names in named)
        caught = [name for names in named if names is not None for name in names]
        retried = frozenset(
            call for attempt in attempts for block in (attempt.body, attempt.orelse) if block for call in calls_in(block)
        )
        refusals = [_refusals(handler) for handler in handlers]
        refused_on = tuple(words for said in refusals for words in said) if all(refusals) else ()
        return LoopShape(() if bare else tuple(caught), tuple(body.sleeps), bound, retried, refused_on)
    if not body.exits and not flags & set(body.assigned):
        return None
    if not body.sleeps and not (body.continues and isinstance(loop, cst.For)):
        return None
    if not body.continues and _failure_leaves(loop):
        return None
    deciding = set()
    for test in body.exit_tests:
        names = names_in(test)
        deciding |= {c for c in body.calls if inside(c, test)}
        for name in names:
            deciding |= {_unwrap(v) for v in body.assigned.get(name, []) if isinstance(_unwrap(v), cst.Call)}
    if not deciding:
        return None
    return LoopShape(None, tuple(body.sleeps), bound, frozenset(deciding))


def _failure_leaves(loop: cst.For | cst.While) -> bool:
    """A poll, not a retry: the loop's first test, `if r.status_code != 200: return ...`,
    leaves on any failed answer, so only an answer that worked but says "not yet" goes round
    (a raised error leaves too: it is only asked of loops none of whose handlers goes round)."""
    statements = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else []
    first = next((s for s in statements if isinstance(s, cst.If)), None)
    return first is not None and first.orelse is None and ends_with(first.body, cst.Return, cst.Raise) \
        and _any_failure(first.test)


def _any_failure(test: cst.BaseExpression) -> bool:
    """`not r.ok`, `r.is_error`, `r.status_code != 200`, `r.status >= 400`, `r.status_code not in
    (200, 201)`: the test holds for every failed HTTP answer."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return isinstance(test.expression, cst.Attribute) and test.expression.attr.value in ("ok", "is_success")
    if isinstance(test, cst.Attribute):
        return test.attr.value == "is_error"
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.left, cst.Attribute) and test.left.attr.value in ("status_code", "status")):
        return False
    operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
    codes = [el.value for el in right.elements] if isinstance(right, (cst.Tuple, cst.List, cst.Set)) else [right]
    if not codes or not all(isinstance(code, cst.Integer) and code.value.isdigit() for code in codes):
        return False
    values = [int(code.value) for code in codes]
    if isinstance(operator, (cst.NotEqual, cst.NotIn)):
        return all(200 <= value < 300 for value in values)
    if isinstance(operator, cst.GreaterThanEqual):
        return 200 < values[0] <= 400
    return isinstance(operator, cst.GreaterThan) and 200 <= values[0] < 400


class _Design(NamedTuple):
    """The words and names of `by_design` in retry.yaml (and the local hosts of tools.yaml)."""
    interactive: frozenset[str]
    reconnect: frozenset[str]
    interval: frozenset[str]
    long_poll: frozenset[str]
    local_hosts: tuple[str, ...]
    verify_verbs: frozenset[str]
    drop_words: frozenset[str]
    probe_words: frozenset[str]
    take_reads: frozenset[str]
    take_gets: frozenset[str]
    take_sources: frozenset[str]


@lru_cache(maxsize=1)
def _design() -> _Design:
    pack = load_pack("retry")["by_design"]
    takes = pack["takes"]
    return _Design(
        frozenset(pack["interactive_calls"]), frozenset(pack["reconnect_words"]), frozenset(pack["interval_words"]),
        frozenset(pack["long_poll_codes"]), tuple(tool_pack()["local_hosts"]), frozenset(pack["verify_verbs"]),
        frozenset(pack["drop_words"]), frozenset(pack["probe_words"]),
        frozenset(takes["reads"]), frozenset(takes["gets"]), frozenset(takes["sources"]),
    )


def asks_this_machine(node: cst.CSTNode) -> bool:
    """Every address `node` names is this machine's (`https://localhost:8443`): what it retries
    waits for a local server to come up, not for a loaded service to recover."""
    urls = [text for text in _strings_in(node) if "://" in text]
    return bool(urls) and all(any(host in url for host in _design().local_hosts) for url in urls)


def asks_a_person(call: cst.Call) -> bool:
    """`input()`, `click.prompt(...)`, `Prompt.ask(...)`: the program waits for the person at its terminal."""
    parts = (dotted_name(call.func) or "").split(".")
    return any(".".join(parts[-n:]) in _design().interactive for n in (1, 2))


@lru_cache(maxsize=1)
def _write_verbs() -> frozenset[str]:
    return frozenset(verb for verbs in tool_pack()["write_verbs"].values() for verb in verbs)


def by_design(loop: cst.For | cst.While, body: _Body) -> bool:
    """The loop goes round by design, not to repeat a failed request: it asks a person
    (`input()`), reconnects, polls at an interval the protocol or server sets, long-polls
    on a deadline, probes a local server or a readiness endpoint until it is up, waits for
    a local port to be free, fails over to another candidate, consumes a queue, or checks
    that the failed attempt did not land before going round (see `by_design` in retry.yaml)."""
    design = _design()
    for call in body.calls:
        name = (dotted_name(call.func) or "").rsplit(".", 1)[-1]
        if asks_a_person(call):
            return True
        if name.lstrip("_")[:1].islower() and set(word_list(name)) & design.reconnect:  # `_redis_connect()`; not a class
            return True
    for sleep in body.sleeps:
        if any(set(word_list(n)) & design.interval for arg in sleep.args for n in names_in(arg.value)):
            return True
    if names_in(loop.body) & design.long_poll:  # `StatusCode.DEADLINE_EXCEEDED` too
        return True
    if asks_this_machine(loop.body):
        return True  # a readiness probe
    if any(_drops_connection(attempt, set(body.assigned), design.drop_words) for attempt in body.tries):
        return True
    if _fails_over(loop, body):
        return True
    if any(_probes_readiness(attempt, design.probe_words) for attempt in body.tries):
        return True
    if any(_binds_port(attempt) for attempt in body.tries):
        return True
    if any(_consumes(attempt) for attempt in body.tries):
        return True
    return any(_verifies(handler, design.verify_verbs) for attempt in body.tries for handler in attempt.handlers)


def _fails_over(loop: cst.For | cst.While, body: _Body) -> bool:
    """`tried.add(proxy)` and `put(..., json={"name": proxy})`, the next pick made from
    candidates `not in tried`: each round records the candidate it tries and sends it, so
    the next round picks another (a failover across proxies, hosts or ports), not the same
    request again."""
    consulted = {dotted_name(c.comparator) for node in walk.subtree(loop) if isinstance(node, cst.Comparison)
                 for c in node.comparisons if isinstance(c.operator, (cst.In, cst.NotIn))}
    recorded = {arg.value.value for call in body.calls if isinstance(call.func, cst.Attribute)
                and call.func.attr.value in ("add", "append") and len(call.args) == 1
                and dotted_name(call.func.value) in consulted
                and isinstance(arg := call.args[0], cst.Arg) and isinstance(arg.value, cst.Name)}
    recorded &= set(body.assigned)  # chosen in the round, not a value fixed before the loop
    for call in body.calls:
        method = (dotted_name(call.func) or "").rsplit(".", 1)[-1].lower().strip("_")
        if method in ("add", "append") or method in _COUNTER_USES:  # the record itself, a log line
            continue
        if any(mentions(arg.value, name) for arg in call.args for name in recorded):
            return True
    return False


def _drops_connection(attempt: cst.Try, rebound: set[str], drop_words: frozenset[str]) -> bool:
    """`ws = await pool.get()` each round, then `except ...: pool.remove(ws)`: the handler
    drops the connection the attempt used, and the next round takes another one."""
    used = {dotted_name(call.func.value) for call in calls_in(attempt.body)
            if isinstance(call.func, cst.Attribute)} & rebound
    for handler in attempt.handlers:
        for call in calls_in(handler.body):
            if not set(word_list((dotted_name(call.func) or "").rsplit(".", 1)[-1])) & drop_words:
                continue
            receiver = dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None
            if receiver in used or any(names_in(arg.value) & used for arg in call.args):
                return True
    return False


def _probes_readiness(attempt: cst.Try, probe_words: frozenset[str]) -> bool:
    """`client.cluster.health(wait_for_status="yellow")`, `self.get("/.well-known/ready")`:
    the attempt asks whether a server is up, and none of its calls is named for a write."""
    called = [word_list((dotted_name(call.func) or "").rsplit(".", 1)[-1]) for call in calls_in(attempt.body)]
    if any(words[:1] and words[0] in _write_verbs() for words in called):
        return False
    paths = [word_list(text) for text in _strings_in(attempt.body) if "/" in text]
    return any(set(words) & probe_words for words in called + paths)


def _binds_port(attempt: cst.Try) -> bool:
    """`sock.bind((host, port))`: the attempt asks this machine whether a port is free (a
    wait for a server to let go of it), no service is asked anything."""
    return any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "bind" and len(call.args) == 1
               and isinstance(call.args[0].value, cst.Tuple) for call in calls_in(attempt.body))


def _consumes(attempt: cst.Try) -> bool:
    """The attempt opens by taking the next item of a queue or stream (`event = await
    asyncio.wait_for(events.get(), timeout=30)`, `await ws.recv()`): each round serves a new
    item, and its timeout means "nothing yet", not a request that failed."""
    if not attempt.body.body:
        return False
    design = _design()
    for call in calls_in(attempt.body.body[0]):
        if not isinstance(call.func, cst.Attribute) or positional(call):
            continue
        method = call.func.attr.value
        if method in design.take_reads or (
                method in design.take_gets and set(word_list(dotted_name(call.func.value) or "")) & design.take_sources):
            return True
    return False


def _verifies(handler: cst.ExceptHandler, verify_verbs: frozenset[str]) -> bool:
    """`except Timeout: if api.get_order(ref): return ...`: the handler leaves the loop on
    what a read answers (`existing = find_tenant(name)`, then `if existing: break` too), so
    it goes round only when the attempt provably did not land."""
    answers = {  # what the handler binds to a call's result
        small.targets[0].target.value: _unwrap(small.value)
        for small in _small_statements(handler.body)
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
        and isinstance(_unwrap(small.value), cst.Call)
    }
    for branch in ifs_in(handler.body):
        if not any(isinstance(s, (cst.Return, cst.Break)) for s in _small_statements(branch.body)):
            continue
        for call in [*calls_in(branch.test), *(answers[n] for n in names_in(branch.test) if n in answers)]:
            words = word_list((dotted_name(call.func) or "").rsplit(".", 1)[-1])
            if words and words[0] in verify_verbs:
                return True
    return False


def ifs_in(node: cst.CSTNode) -> list[cst.If]:
    """The `if`s (and `elif`s) under `node`, not inside nested functions."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return []
    found = [node] if isinstance(node, cst.If) else []
    return found + [branch for child in walk.children(node) for branch in ifs_in(child)]


def _strings_in(node: cst.CSTNode) -> list[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return [value] if isinstance(value, str) else []
    if isinstance(node, cst.FormattedStringText):
        return [node.value]
    return [text for child in walk.children(node) for text in _strings_in(child)]


def _attempt_exits(attempt: cst.Try, loop: cst.For | cst.While, flags: set[str], is_sleep) -> bool:
    """Success of this try leaves the loop: a return/break (or the `while` flag set) in
    its body or `else`, or a return/break right after it.  A long loop whose exit is
    elsewhere (an agent's turn loop) is not retrying this try."""
    inner = _Body(is_sleep)
    walk.visit(attempt.body, inner)
    if attempt.orelse is not None:
        walk.visit(attempt.orelse, inner)
    if inner.exits or flags & set(inner.assigned):
        return True
    statements = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
    if attempt in statements:
        following = statements[statements.index(attempt) + 1 : statements.index(attempt) + 2]
        return any(
            isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], (cst.Return, cst.Break))
            for s in following
        )
    return False


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Every call under `node` that runs when it runs (not inside a nested def or lambda)."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return []
    found = [node] if isinstance(node, cst.Call) else []
    for child in walk.children(node):
        found += calls_in(child)
    return found


def inside(node: cst.CSTNode, tree: cst.CSTNode) -> bool:
    """`node` is `tree` or one of its descendants."""
    return tree is node or any(inside(node, child) for child in walk.children(tree))
