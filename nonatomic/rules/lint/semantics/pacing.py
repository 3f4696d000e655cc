"""How a retry scope paces and ends its attempts, and which scopes that matters for.

`wait_of(scope, model)`: the wait between attempts — NONE (the next attempt
starts at once), FIXED (the same wait every time, no jitter), VARIES (it grows
or is random), or None when the code does not say (a policy in a variable,
`**kwargs`, a wait computed elsewhere).  `stop_of(scope, model)`: LIMITED (by
attempts or time), NEVER (it retries until the call works), or None.

Library constructs are read from the arguments `retry.yaml` maps to the stop,
wait, growth and jitter roles, under the library's `defaults` when an argument
is absent.  Hand-written loops are read from their sleeps, their bound
(`range(3)`, `while attempt < 3`) and the tests that give up (`if attempt >= 5:
raise`).

`paced_scopes(model, registry)`: the scopes whose pacing is a hazard, those
retrying a failure of work that leaves the machine.  A loop that polls a read
until it becomes visible (no `except`, no write) is not a retry; neither is a
library construct that retries on a result when it retries no write.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import libcst as cst

from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import dotted_name, source
from nonatomic.rules.lint.semantics.loops import calls_in, ifs_in, inside, leaves_loop, names_in
from nonatomic.rules.lint.semantics.model import (
    CallSite,
    FunctionFacts,
    ModuleModel,
    Retried,
    RetryScope,
    construct_call,
    settings_hidden,
)
from nonatomic.rules.lint.semantics.names import word_list, words
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.semantics.retryable import is_catch_all, reasks_only
from nonatomic.rules.lint.semantics.tool_config import client_packages
from nonatomic.rules.lint.semantics.tools import ToolRegistry
from nonatomic.rules.lint.tree import walk

NONE, FIXED, VARIES = "none", "fixed", "varies"
LIMITED, NEVER = "limited", "never"

# Library waits by last name: tenacity's, and backoff's wait generators.
_GROWING = {
    "wait_random", "wait_exponential", "wait_random_exponential", "wait_full_jitter",
    "wait_exponential_jitter", "wait_incrementing", "expo", "fibo", "decay",
}
_SUMS = {"wait_combine"}  # tenacity: waits added together, like `wait_fixed(1) + wait_random(0, 1)`
_RESULT_PREDICATES = {"retry_if_result", "retry_if_not_result", "on_predicate"}
# Builtins a give-up test may call that cannot hide a count (`if isinstance(e, Fatal): raise`).
_TYPE_TESTS = {"isinstance", "issubclass", "hasattr", "getattr", "type", "len", "str", "repr", "bool", "callable"}


@lru_cache(maxsize=None)
def _pack() -> dict[str, Any]:
    return load_pack("retry")


@lru_cache(maxsize=None)
def _defaults() -> dict[str | None, dict[str, str]]:
    """Library -> what it does when the stop or wait is not given."""
    pack = _pack()
    found = {entry["library"]: entry["defaults"] for entry in pack["constructs"]}
    found["langchain"] = pack["with_retry"]["defaults"]
    found["langgraph"] = pack["retry_policy"]["defaults"]
    return found


def _last(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


def _literal(expr: cst.BaseExpression) -> float | None:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _literal(expr.expression)
        return -inner if inner is not None else None
    return None


def _sites(model: ModuleModel) -> dict[int, CallSite]:
    key = ("pacing", "sites")
    if key not in model.memo:
        model.memo[key] = {id(site.node): site for site in model.sites}
    return model.memo[key]


# -- stop -------------------------------------------------------------------------------------

def stop_of(scope: RetryScope, model: ModuleModel) -> str | None:
    if scope.kind == "loop":
        return _loop_stop(scope, model)
    if scope.library is None or settings_hidden(scope):
        return None
    if scope.construct is not None and scope.construct.label is not None:
        return framework_stop(scope)
    default = _defaults().get(scope.library, {}).get("stop")
    arg = scope.config.get("stop")
    if arg is None:
        return None if default == NEVER and _state_predicate(scope, model) else default
    value = arg.value
    never = calls.is_none(value) or _literal(value) == -1 or _last(dotted_name(value)) == "stop_never"
    if never:
        return NEVER if default == NEVER else None  # stamina: `attempts=None` still has its timeout
    return LIMITED


# tenacity hands its `retry=` predicate the whole retry state, the attempt number and the time
# since the first attempt included, so a predicate of the code's own may give up by itself
# (`return state.attempt_number < 10`): only one built of tenacity's own predicates never does.
_STATE_PREDICATES = frozenset({"tenacity"})
_STATE_WORDS = frozenset({"attempt_number", "seconds_since_start", "idle_for", "start_time"})


def _state_predicate(scope: RetryScope, model: ModuleModel) -> bool:
    """Does the construct's predicate read the retry state, or may it, being out of sight?"""
    arg = scope.config.get("predicate") if scope.library in _STATE_PREDICATES else None
    return arg is not None and _may_give_up(arg.value, model, 0)


def _may_give_up(expr: cst.BaseExpression, model: ModuleModel, depth: int) -> bool:
    if depth > 4:
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitOr, cst.BitAnd)):
        return _may_give_up(expr.left, model, depth + 1) or _may_give_up(expr.right, model, depth + 1)
    if isinstance(expr, cst.Call) and (factory := _last(dotted_name(expr.func))).startswith("retry_"):
        # tenacity's own predicates hand theirs the outcome only; its combinators pass the state on
        combined = factory in ("retry_any", "retry_all")
        return combined and any(_may_give_up(a.value, model, depth + 1) for a in expr.args)
    if isinstance(expr, cst.Lambda):
        return bool(_STATE_WORDS & names_in(expr.body))
    name = dotted_name(expr)
    if _last(name).startswith(("retry_always", "retry_never")):
        return False
    if isinstance(expr, cst.Name):
        facts = model.function(expr.value)
        if facts is not None:
            return bool(_STATE_WORDS & names_in(facts.node))
        values = model.assigned.get(expr.value, [])
        if len(values) == 1:
            return _may_give_up(values[0], model, depth + 1)
    return True  # defined out of sight: it may count attempts


def one_attempt(scope: RetryScope) -> bool:
    """A retry library's construct told to stop after the first attempt (`stop_max_attempt_number=1`,
    `stop=stop_after_attempt(1)`, `max_tries=1`): it never goes round, so it retries nothing."""
    arg = scope.config.get("stop") if scope.library is not None and scope.construct is None else None
    if arg is None:
        return False
    value = arg.value
    if isinstance(value, cst.Call) and _last(dotted_name(value.func)) == "stop_after_attempt" and value.args:
        value = value.args[0].value
    return _literal(value) == 1


# Keywords that count attempts, and those that count retries after the first attempt.
_ATTEMPT_WORDS = frozenset({"stop_max_attempt_number", "max_tries", "attempts", "tries", "stop_after_attempt"})
_RETRY_WORDS = frozenset({"max_retries", "retries"})


def attempts_of(scope: RetryScope, model: ModuleModel) -> int | None:
    """How many attempts the scope makes at most, when its code says so plainly: tenacity's
    `stop=stop_after_attempt(2)`, backoff's `max_tries=3`, `for attempt in range(RETRIES + 1)`
    with `RETRIES = 1` a constant of the module; None otherwise."""
    where = next((entry.function for entry in model.retried if entry.function is not None
                  and any(s is scope for s in entry.scopes)), None)
    if scope.kind == "loop":
        loop = scope.node
        if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call) \
                or _last(dotted_name(loop.iter.func)) != "range" or not 1 <= len(loop.iter.args) <= 2:
            return None
        bounds = [_int_value(arg.value, where, model) for arg in loop.iter.args]
        if None in bounds:
            return None
        return bounds[0] if len(bounds) == 1 else bounds[1] - bounds[0]
    arg = scope.config.get("stop") if scope.library is not None else None
    if arg is None or arg.keyword is None:
        return None
    value, word = arg.value, arg.keyword.value
    if isinstance(value, cst.Call) and _last(dotted_name(value.func)) == "stop_after_attempt" and value.args:
        value, word = value.args[0].value, "stop_after_attempt"
    count = _int_value(value, where, model)
    if count is None or word not in _ATTEMPT_WORDS | _RETRY_WORDS:
        return None
    return count + 1 if word in _RETRY_WORDS else count


def _int_value(expr: cst.BaseExpression, where: FunctionFacts | None, model: ModuleModel,
               depth: int = 0) -> int | None:
    """An integer the expression always has: a literal, a name assigned once (in the function
    or the module) to one, or a sum or difference of those."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        left, right = (_int_value(side, where, model, depth + 1) for side in (expr.left, expr.right))
        if left is None or right is None:
            return None
        return left + right if isinstance(expr.operator, cst.Add) else left - right
    if isinstance(expr, cst.Name):
        if where is not None and expr.value in where.param_names:
            return None  # a caller may pass any count
        local = where.assigned.get(expr.value) if where is not None else None
        values = local if local else model.assigned.get(expr.value, [])
        return _int_value(values[0], where, model, depth + 1) if len(values) == 1 else None
    return None


def _loop_stop(scope: RetryScope, model: ModuleModel) -> str:
    loop = scope.node
    if isinstance(loop, cst.For):
        counter = _sites(model).get(id(loop.iter))
        endless = counter is not None and (
            _last(counter.callee) == "count" or (_last(counter.callee) == "repeat" and len(loop.iter.args) < 2)
        )
        if not endless:
            return LIMITED  # `range(n)`
    elif scope.bound is not None and not _only_success_flags(loop):
        return LIMITED  # `while attempt < 5`, `while not stop_event.is_set()`
    return LIMITED if _gives_up(loop) else NEVER


def _only_success_flags(loop: cst.While) -> bool:
    """`while not done:` where the loop only ever sets `done = True`: no limit."""
    tested = names_in(loop.test)
    values = _assignments(loop.body)
    return bool(tested) and all(
        values.get(name) and all(_bool_literal(v) for v in values[name]) for name in tested
    )


def _bool_literal(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value in ("True", "False")


class _Rebinds(cst.CSTVisitor):
    """What a loop body assigns (`x = ...`) and increments (`x += ...`), not entering
    nested functions."""

    def __init__(self) -> None:
        self.values: dict[str, list[cst.BaseExpression]] = {}
        self.counted: set[str] = set()  # augmented targets: counters and growing delays
        self.targets: set[str] = set()  # source of every rebound name or attribute
        self.items: set[str] = set()  # containers an item is set in or deleted from (`d[k] = v`)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        name = dotted_name(target)
        if isinstance(target, cst.Subscript) and (container := dotted_name(target.value)) is not None:
            self.items.add(container)
        elif name is not None:
            self.targets.add(name)
            if value is not None and isinstance(target, cst.Name):
                self.values.setdefault(name, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)
        name = dotted_name(node.target)
        if name is not None:
            self.counted.add(name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target, None)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name, None)


def _rebinds(loop: cst.For | cst.While) -> _Rebinds:
    found = _Rebinds()
    walk.visit(loop.body, found)
    if isinstance(loop, cst.For):
        found._bind(loop.target, None)
    return found


def _assignments(body: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    found = _Rebinds()
    walk.visit(body, found)
    return found.values


def _gives_up(loop: cst.For | cst.While) -> bool:
    """An exit guarded by a limit: `if attempt >= 5: raise`, `if time.monotonic() > deadline: break`."""
    counted = _rebinds(loop).counted
    limit_words = set(_pack()["limit_words"])
    clocks = set(_pack()["clocks"])
    for test in _exit_tests(loop.body):
        if {dotted_name(n) for n in _references(test)} & counted:
            return True
        if any(words(dotted_name(n) or "") & limit_words for n in _references(test)):
            return True
        names = [_last(dotted_name(c.func)) for c in calls_in(test)]
        if any(name in clocks for name in names):
            return True
        if any(name not in _TYPE_TESTS for name in names):
            return True  # `if not self._state.recovers_from(error): raise` may count: cannot tell
    return False


def _references(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """Names and attribute chains (`attempt`, `self.max_retries`) in an expression."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        return [node]
    return [ref for child in walk.children(node) for ref in _references(child)]


def _exit_tests(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """Tests of the `if`s under `node` whose branches leave the loop."""
    return [
        branch.test
        for branch in ifs_in(node)
        if _leaves(branch.body) or (branch.orelse is not None and _leaves(branch.orelse.body))
    ]


def _leaves(block: cst.BaseSuite | cst.CSTNode) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if any(isinstance(s, (cst.Raise, cst.Return, cst.Break)) for s in statement.body):
                return True
    return False


# -- wait -------------------------------------------------------------------------------------

def wait_of(scope: RetryScope, model: ModuleModel) -> str | None:
    if scope.kind == "loop":
        return _loop_wait(scope, model)
    if scope.library is None or settings_hidden(scope):
        return None
    if scope.construct is not None and scope.construct.label is not None:
        return framework_wait(scope)
    arg = scope.config.get("wait")
    if arg is None:
        default = _defaults().get(scope.library, {}).get("wait")
        return default if default in (NONE, VARIES) else None
    value = arg.value
    growth, jitter = scope.config.get("growth"), scope.config.get("jitter")
    if scope.library == "tenacity":
        return _tenacity_wait(value)
    if scope.library == "backoff":
        generator = _last(dotted_name(value))
        if generator == "constant":
            return FIXED if jitter is not None and calls.is_none(jitter.value) else VARIES
        return VARIES if generator in _GROWING else None
    if scope.library in ("retrying", "retry"):
        if growth is not None or jitter is not None:
            return VARIES
        if arg.keyword is not None and arg.keyword.value not in ("wait_fixed", "delay"):
            return None  # `wait_func=`: computed
        return NONE if _literal(value) == 0 else FIXED
    if scope.library == "langchain":
        return NONE if calls.is_false(value) else VARIES
    if scope.library == "langgraph":
        no_jitter = jitter is not None and calls.is_false(jitter.value)
        return FIXED if no_jitter and growth is not None and _literal(growth.value) == 1 else VARIES
    return None


# -- frameworks: their settings read by the roles of their pack entry --------------------------

_KNOWN = {NONE: NONE, FIXED: FIXED, VARIES: VARIES, LIMITED: LIMITED, NEVER: NEVER}
_NO_GROWTH = {"False", "None", "0"}


def framework_stop(scope: RetryScope) -> str | None:
    config, construct = scope.config, scope.construct
    deadline = config.get("deadline")
    if deadline is not None and not calls.is_none(deadline.value):
        return LIMITED  # a time limit over all attempts together
    if "opaque" in config:
        return None
    arg = config.get("stop")
    if arg is None:
        return None if "inferred" in config else _KNOWN.get(construct.entry.get("defaults", {}).get("stop"))
    never = {str(value) for value in construct.all_roles["stop"].get("never", ())}
    return NEVER if source(arg.value) in never else LIMITED


def framework_wait(scope: RetryScope) -> str | None:
    config, construct = scope.config, scope.construct
    if "opaque" in config:
        return None
    default = None if "inferred" in config else _KNOWN.get(construct.entry.get("defaults", {}).get("wait"))
    jitter, growth, wait = config.get("jitter"), config.get("growth"), config.get("wait")
    if jitter is not None and not (calls.is_none(jitter.value) or calls.is_false(jitter.value)):
        return VARIES
    if growth is not None:
        still = _NO_GROWTH | {str(value) for value in construct.all_roles["growth"].get("none", ())}
        if source(growth.value) not in still:
            return VARIES
    elif default == VARIES:
        return VARIES  # the framework grows the wait unless told otherwise
    if wait is None:
        return FIXED if default == VARIES else default
    value = wait.value
    number = _literal(value)
    if number is not None:
        return NONE if number == 0 else FIXED
    if calls.is_none(value) or calls.is_false(value):
        return NONE
    if isinstance(value, (cst.List, cst.Tuple)):
        return VARIES if len({source(e.value) for e in value.elements}) > 1 else FIXED
    if isinstance(value, cst.Call):
        name = _last(dotted_name(value.func))
        if name == "timedelta":
            return FIXED
        return VARIES if name in _GROWING or words(name) & {"exponential", "random", "jitter", "backoff"} else None
    return None


def _tenacity_wait(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _sum(_tenacity_wait(expr.left), _tenacity_wait(expr.right))
    if not isinstance(expr, cst.Call):
        return None
    name = _last(dotted_name(expr.func))
    if name == "wait_fixed":
        return NONE if expr.args and _literal(expr.args[0].value) == 0 else FIXED
    if name == "wait_none":
        return NONE
    if name in _SUMS:
        parts = [_tenacity_wait(arg.value) for arg in expr.args]
        result: str | None = NONE
        for part in parts:
            result = _sum(result, part)
        return result
    return VARIES if name in _GROWING else None


def _sum(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return None
    if VARIES in (a, b):
        return VARIES
    return FIXED if FIXED in (a, b) else NONE


def _loop_wait(scope: RetryScope, model: ModuleModel) -> str | None:
    loop = scope.node
    sites = _sites(model)
    pack = _pack()
    wait_words, not_waits = set(pack["wait_words"]), set(pack["not_waits"])
    sleeps = {id(s) for s in scope.sleeps}
    waits, other = [], False
    for call in calls_in(loop.body):
        if id(call) in sleeps:
            if not (call.args and _literal(call.args[0].value) == 0):  # `sleep(0)` only yields
                waits.append(call)
            continue
        site = sites.get(id(call))
        if _waits(call, site, model, wait_words, not_waits, depth=_HELPER_DEPTH):
            other = True
    if other:
        return None
    if not waits:
        return NONE
    rebound = _rebinds(loop).targets
    for call in waits:
        if not call.args or calls_in(call.args[0].value):
            return None  # `sleep(backoff(attempt))`, `sleep(random.uniform(0, 2))`
        if _server_set(call.args[0].value):
            return None  # `sleep(ex.result_json["parameters"]["retry_after"])`: the server's pacing
        if {dotted_name(n) for n in _references(call.args[0].value)} & rebound:
            return None  # `sleep(2 ** attempt)`, `sleep(delay)` with `delay *= 2`
    return FIXED


# How deep a loop's attempt is followed into the module's own helpers for a wait: the
# helper that logs in (`self._login()`), and the poll it runs (`_poll_for_token`).
_HELPER_DEPTH = 2


def _waits(call: cst.Call, site: CallSite | None, model: ModuleModel, wait_words: set[str],
           not_waits: set[str], depth: int, seen: frozenset[int] = frozenset()) -> bool:
    """The call waits in a way the loop does not spell out: it is named for waiting
    (`self._backoff(attempt)`, `limiter.wait()`), or it is a helper of the module's own whose
    body (or a helper it calls, `depth` deep) sleeps or waits so."""
    name = (site.callee or site.dotted) if site is not None else dotted_name(call.func)
    if name and name not in not_waits and _last(name) not in not_waits and words(_last(name)) & wait_words:
        return True
    helper = model.target_function(call.func, site.function if site is not None else None)
    if depth == 0 or helper is None or id(helper.node) in seen:
        return False
    seen = seen | {id(helper.node)}
    return any(_waits(inner.node, inner, model, wait_words, not_waits, depth - 1, seen) for inner in helper.sites)


def _server_set(expr: cst.BaseExpression) -> bool:
    """A wait the server asked for (`e.retry_after`, `headers["Retry-After"]`, a rate
    limit's reset time): it spaces the clients as the server wants them.  A bare name
    (`sleep(RETRY_AFTER)`) is the module's own constant."""
    if isinstance(expr, cst.Name):
        return False
    text = "".join(char for char in source(expr).lower() if char.isalpha())
    return any(word in text for word in _pack()["server_waits"])


# -- which scopes ---------------------------------------------------------------------------

def paced_scopes(model: ModuleModel, registry: ToolRegistry) -> list[RetryScope]:
    """Scopes retrying a failure of work that leaves the machine, one per construct."""
    retried: dict[int, list[Retried]] = {}
    for entry in model.retried:
        for scope in entry.scopes:
            retried.setdefault(id(scope), []).append(entry)
    found, seen = [], set()
    for scope in model.scopes:
        if id(scope.node) in seen or scope.inner is not None or one_attempt(scope):
            continue  # the module's own helper is judged where its loop is written; one attempt is no retry
        if reasks_only(scope, model):
            continue  # a malformed answer re-asked: the remote side is neither failing nor overloaded
        if scope.kind == "loop":
            relevant = _loop_matters(scope, retried.get(id(scope), []), model, registry)
        elif scope.construct is not None and scope.construct.label is not None:
            entries = retried.get(id(scope), [])  # a framework's task: judged by what it does
            relevant = _writes(entries, model, registry) or any(_external(e, model, registry) for e in entries)
        elif scope.library is not None:
            entries = retried.get(id(scope), [])
            relevant = (not _on_result(scope) or _writes(entries, model, registry)) and not (
                _named_local(scope, model) and not any(_external(e, model, registry) for e in entries))
        else:
            relevant = False  # a retry construct known only by its name: its settings are unknown
        if relevant:
            seen.add(id(scope.node))
            found.append(scope)
    return found


def reached_through(scope: RetryScope, model: ModuleModel, registry: ToolRegistry) -> str | None:
    """The module helper through which alone a loop's attempt leaves the machine
    (`self._login()`, whose body posts), or None when one retried call does so itself: a
    client's method, a callable parameter, or a write made right there.  A loop is a retry
    by its shape, and what a helper does is a second guess, from its body: a finding built
    on both is said at a lower level.  A retry construct is a retry for certain: None."""
    if scope.kind != "loop":
        return None
    helper = None
    for entry in model.retried:
        if not any(s is scope for s in entry.scopes) or entry.site is None:
            continue
        write = registry.retried_write(entry, model)
        if write is not None and write.hops == 0 or registry.on_client(entry.site.callee) \
                or _given(entry.site) is not None:
            return None
        if write is not None and helper is None:
            helper = source(entry.target)
    return helper


def given_only(scope: RetryScope, model: ModuleModel, registry: ToolRegistry) -> str | None:
    """The callable parameter a retry helper's loop retries (`fn` of `call_with_retry(fn)`),
    when that is all of its work that may leave the machine and nothing says where that
    callable goes: what it reaches is up to its callers, which another module may hold (a
    helper applied to local work).  What says it reaches a service: a handler that catches
    or calls something named for a remote failure (`except ConnectionError`,
    `self._ensure_connection()`) or catches a client package's exception
    (`psycopg2.errors.AdminShutdown`), or a helper named for one, or defined in a class
    named for one (`transaction_retry`, `RetryingClient._retry`)."""
    if scope.kind != "loop":
        return None
    given, facts = None, None
    for entry in model.retried:
        if not any(s is scope for s in entry.scopes) or not _external(entry, model, registry):
            continue
        called = _given(entry.site)
        if called is None:
            return None
        given, facts = given or called, facts or entry.site.function
    if given is None:
        return None
    named = [*(scope.caught or ()), *(dotted_name(call.func) or "" for handler in _handlers(scope.node.body)
                                      for call in calls_in(handler.body))]
    while facts is not None:
        named += [facts.name, facts.class_name or ""]
        facts = facts.parent
    remote = set(_pack()["remote_failure_words"])
    if any(words(name) & remote or name.split(".", 1)[0] in client_packages() for name in named):
        return None
    return given


def _named_local(scope: RetryScope, model: ModuleModel) -> bool:
    """The decorated function is named for local work (`retry_parse_json_text`: its first
    word past the retry words is one of `local_verbs`)."""
    pack = _pack()
    for facts in (f for found in model.functions.values() for f in found):
        if any(decorator is scope.node for _, decorator in facts.decorators):
            verbs = [w for w in word_list(facts.name) if w not in pack["name_words"]]
            return bool(verbs) and verbs[0] in pack["local_verbs"]
    return False


def _on_result(scope: RetryScope) -> bool:
    """The construct retries on the result, not on a failure: it polls."""
    call = construct_call(scope)
    if call is not None and _last(dotted_name(call.func)) in _RESULT_PREDICATES:
        return True
    predicate = scope.config.get("predicate")
    if predicate is None:
        return False
    used = {_last(dotted_name(c.func)) for c in calls_in(predicate.value)}
    return bool(used & _RESULT_PREDICATES) and not any(name.startswith("retry_if_exception") for name in used)


def _writes(entries: list[Retried], model: ModuleModel, registry: ToolRegistry) -> bool:
    return any(registry.retried_write(entry, model) is not None for entry in entries)


def _loop_matters(scope: RetryScope, entries: list[Retried], model: ModuleModel, registry: ToolRegistry) -> bool:
    if adapts(scope.node, entries) or _repairs(scope.node):
        return False
    if _writes(entries, model, registry):
        return True
    if _awaits_created(scope, entries):
        return False  # a new resource waited for: a poll at its deadline's pace
    not_yet = set(_pack()["not_yet_errors"]) | set(_pack()["not_up_errors"])
    if scope.caught is None or (scope.caught and all(_last(name) in not_yet for name in scope.caught)):
        return False  # no `except`, or only "not there (or up) yet": a read polled until visible
    return not _polls(scope.node, entries) and any(_external(entry, model, registry) for entry in entries)


def _awaits_created(scope: RetryScope, entries: list[Retried]) -> bool:
    """The loop reads what its function made just before it: a call named for making
    something (`create_verbs`: `client.indices.create(index=name)`) was given one of the
    names the loop's calls are given (`client.search(index=name)`)."""
    sites = [entry.site for entry in entries if entry.site is not None]
    function = sites[0].function if sites else None
    if function is None:
        return False
    first = next((i for i, site in enumerate(function.sites) if any(frame is scope for frame in site.frames)), None)
    verbs = set(_pack()["by_design"]["create_verbs"])
    given = {name for site in sites for arg in site.node.args for name in _argument_names(arg.value)}
    return first is not None and any(
        word_list(site.method or "")[:1] and word_list(site.method or "")[0] in verbs
        and given & {name for arg in site.node.args for name in _argument_names(arg.value)}
        for site in function.sites[:first])


def _argument_names(value: cst.BaseExpression) -> set[str]:
    """A call's argument as the name or attribute it is (`name`, `self.index_name`), else nothing."""
    name = dotted_name(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
    return {name} if name not in (None, "None", "True", "False", "self") else set()


def adapts(loop: cst.For | cst.While, entries: list[Retried]) -> bool:
    """A handler changes what the next attempt sends (`batch = batch[:half]`,
    `name = f"{base}_v{i}"`, `self._name = ...` sent as `self._name`, or
    `state.recovers_from(e)` on the object each round
    builds its arguments from): the loop searches for a request that works, it does
    not repeat one."""
    changed: set[str] = set()
    told: set[str] = set()  # objects a handler calls a method of (`self._state`)
    for handler in _handlers(loop.body):
        found = _rebinds_of(handler.body)
        changed |= found.targets | found.items  # `del payload[field]`: the next round sends less
        told |= {
            receiver
            for call in calls_in(handler.body)
            if isinstance(call.func, cst.Attribute)
            and (receiver := dotted_name(call.func.value)) not in (None, "self", "cls")
        }
    sent = [arg.value for entry in entries if entry.site for arg in entry.site.node.args]
    names = {name for value in sent for name in names_in(value)}
    # `self._name = f"{base}-{uuid4().hex[:6]}"` in the handler, `create(self._name)` sent
    attributes = {name for value in sent for name in _attributes_in(value)}
    if changed & (names | attributes) or _regenerated(loop, names):
        return True
    built = _assignments(loop.body)
    if changed & _built_from(loop, entries, names, built):
        return True
    # What the names sent are computed from, each round (an object handed over as
    # it is, `send(self.client)`, is not rebuilt by closing it in the handler).
    if any(_fresh(value) for name in names for value in built.get(name, [])):
        return True
    used = {dotted_name(ref) or "" for name in names for value in built.get(name, []) for ref in _references(value)}
    return any(name == receiver or name.startswith(receiver + ".") for name in used for receiver in told)


def _built_from(loop: cst.For | cst.While, entries: list[Retried], names: set[str],
                built: dict[str, list[cst.BaseExpression]]) -> set[str]:
    """The names the round's request is built from through the loop's own assignments: those
    sent, and what the connection it is sent on is opened with when the round opens one
    (`nonce` from `timestamp`, `url` from `nonce`, `ws = connect(url)`, then `ws.send(...)`).
    A connection merely opened anew (`session = Session()` in the handler) sends the same
    request again, and the loop's own counter is not what it sends."""
    receivers = {
        name for entry in entries if entry.site and isinstance(entry.site.node.func, cst.Attribute)
        for name in names_in(entry.site.node.func.value) if name in built
    }
    header = loop.target if isinstance(loop, cst.For) else loop.test
    counters = names_in(header)
    reached: set[str] = set()
    frontier = (names | receivers) - counters
    while frontier:
        name = frontier.pop()
        reached.add(name)
        for value in built.get(name, []):
            # `server = Server((host, self.port))`: the handler's `self.port += 1` changes it too
            frontier |= (names_in(value) | _attributes_in(value)) - reached - counters
    return reached - (receivers - names)


def _attributes_in(value: cst.BaseExpression) -> set[str]:
    """The dotted attributes an expression reads (`self.port` of `(self.host, self.port)`)."""
    return {name for node in walk.subtree(value) if isinstance(node, cst.Attribute) and (name := dotted_name(node))}


def _fresh(value: cst.BaseExpression) -> bool:
    """`allocate_free_port()`: a call named for handing out a free resource (`fresh_words`)."""
    value = value.expression if isinstance(value, cst.Await) else value
    name = dotted_name(value.func) if isinstance(value, cst.Call) else None
    return name is not None and bool(set(_pack()["fresh_words"]) & set(word_list(name.rsplit(".", 1)[-1])))


def _regenerated(loop: cst.For | cst.While, names: set[str]) -> bool:
    """What the round sends comes, through the loop's own assignments (and the `for`s over
    them), from a model call made in the round (`create(messages=...)`): a generate-run-
    debug loop that runs new code each round, not a repeat of the same request."""
    values = _assignments(loop.body)
    for inner in walk.subtree(loop.body):
        if isinstance(inner, cst.For) and isinstance(inner.target, cst.Name):
            values.setdefault(inner.target.value, []).append(inner.iter)
    keywords = set(_pack()["model_call_keywords"])
    seen: set[str] = set()
    frontier = set(names)
    while frontier:
        name = frontier.pop()
        seen.add(name)
        for value in values.get(name, []):
            if any(isinstance(call, cst.Call) and any(a.keyword is not None and a.keyword.value in keywords
                                                     for a in call.args) for call in walk.subtree(value)):
                return True
            frontier |= names_in(value) - seen
    return False


def _repairs(loop: cst.For | cst.While) -> bool:
    """A handler repairs what the attempt failed on (`self.register(client)` after
    NoScriptError, `refresh_token()` after a 401): the next round is not the same one, and
    its pace is not the one a failing service needs.  (Pacing only: a write repeated
    after a reconnect may still have landed the first time.)"""
    repairs = set(_pack()["repair_words"])
    return any(
        words(_last(dotted_name(call.func))) & repairs
        for handler in _handlers(loop.body)
        for call in calls_in(handler.body)
    )


def _polls(loop: cst.For | cst.While, entries: list[Retried]) -> bool:
    """The loop ends on a test of what a retried read returned (`if r.status_code == 200:
    break`, `if job.done: return job`, a response held by `with ... as r`, or sets the
    `while` flag there): it waits for a state, as a poll does."""
    retried = {id(entry.node) for entry in entries}
    results = {
        name
        for name, values in _assignments(loop.body).items()
        if any(id(call) in retried for value in values for call in calls_in(value))
    }
    # `async with session.get(url) as response: if response.status == 200: return ...`
    results |= {
        item.asname.name.value
        for node in walk.subtree(loop.body) if isinstance(node, cst.With)
        for item in node.items
        if item.asname is not None and isinstance(item.asname.name, cst.Name)
        and any(id(call) in retried for call in calls_in(item.item))
    }
    flags = names_in(loop.test) if isinstance(loop, cst.While) else set()
    for branch in ifs_in(loop.body):
        ends = _leaves(branch.body) and not _goes_round(branch, loop) or bool(_rebinds_of(branch.body).targets & flags)
        test = branch.test
        if ends and (names_in(test) & results or any(id(call) in retried for call in calls_in(test))):
            return True
    return False


def _goes_round(branch: cst.If, loop: cst.For | cst.While) -> bool:
    """The branch only raises what the loop's own handler catches and goes round on (`if not
    isinstance(parsed, dict): raise ValueError(...)` in a `try` whose `except Exception` retries):
    a failed attempt, not the end of a poll."""
    statements = branch.body.body if isinstance(branch.body, cst.IndentedBlock) else [branch.body]
    exits = [small for statement in statements if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
             for small in statement.body if isinstance(small, (cst.Raise, cst.Return, cst.Break))]
    if not exits or not all(isinstance(small, cst.Raise) and small.exc is not None for small in exits):
        return False
    raised = {_last(dotted_name(exc.func if isinstance(exc, cst.Call) else exc) or "?")
              for exc in (small.exc for small in exits)}
    return any(
        inside(branch, attempt.body) and any(not leaves_loop(handler) and _catches(handler, raised)
                                             for handler in attempt.handlers)
        for attempt in walk.subtree(loop.body) if isinstance(attempt, cst.Try)
    )


def _catches(handler: cst.ExceptHandler, raised: set[str]) -> bool:
    if handler.type is None:
        return True
    types = [el.value for el in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    names = {_last(dotted_name(expr) or "?") for expr in types}
    return any(is_catch_all(name) for name in names) or raised <= names


def _handlers(node: cst.CSTNode) -> list[cst.ExceptHandler]:
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return []
    found = [node] if isinstance(node, cst.ExceptHandler) else []
    return found + [h for child in walk.children(node) for h in _handlers(child)]


def _rebinds_of(node: cst.CSTNode) -> _Rebinds:
    found = _Rebinds()
    walk.visit(node, found)
    return found


def _external(entry: Retried, model: ModuleModel, registry: ToolRegistry) -> bool:
    """A call that leaves the machine: a write, a call into a client package (a method of
    a client its constructor or annotation made), or a callable parameter (a retry helper
    retries whatever it is given).  A read through the module's own function is not
    followed: its body may well be local work."""
    site = entry.site
    if site is None:
        return False
    if registry.retried_write(entry, model) is not None or registry.on_client(site.callee):
        return True
    return _given(site) is not None


def _given(site: CallSite) -> str | None:
    """The callable parameter the call calls (`fn()` in a helper that was given `fn`)."""
    if not isinstance(site.node.func, cst.Name):
        return None
    name, facts = site.node.func.value, site.function
    while facts is not None:
        if name in facts.param_names:
            return name
        if name in facts.assigned:
            return None
        facts = facts.parent
    return None


# -- reporting and fixing -------------------------------------------------------------------

def header(scope: RetryScope) -> cst.CSTNode:
    """Where a finding about a scope's pacing points: the decorator expression, the
    loop's iterable or test, or the call that builds the retry."""
    node = scope.node
    if isinstance(node, cst.Decorator):
        return node.decorator
    if isinstance(node, cst.For):
        return node.iter
    if isinstance(node, cst.While):
        return node.test
    return node


def tenacity_setting(scope: RetryScope, keyword: str, factory: str, args: str
                     ) -> tuple[cst.BaseExpression, tuple[tuple[str, str], ...]] | None:
    """A tenacity `@retry` decorator with `keyword=factory(args)` added, and the import
    that needs; None unless the scope is such a decorator without that keyword.
    `@tenacity.retry` gets `tenacity.<factory>`; `@retry` gets the name imported."""
    if scope.library != "tenacity" or scope.kind != "decorator" or keyword in scope.config or settings_hidden(scope):
        return None
    expr = header(scope)
    call = expr if isinstance(expr, cst.Call) else cst.Call(func=expr)
    root = call.func
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name):
        return None
    qualified = root is not call.func
    value = cst.parse_expression(f"{root.value + '.' if qualified else ''}{factory}({args})")
    return calls.with_keyword(call, keyword, value), (() if qualified else (("tenacity", factory),))
