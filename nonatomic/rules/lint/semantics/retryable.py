"""What a retry scope retries on: which exceptions, and which HTTP statuses.

A scope retries on exceptions (the `except` clauses of a hand-written loop,
the predicate argument of a library construct, or the library's default when
there is none) and, where the code decides by status, on the statuses its
tests send round again (`if resp.status_code in RETRYABLE: continue`, a
`retry_if_result(lambda r: r.status_code in {...})` predicate).  Which
statuses and exceptions mean what is `non_retryable.yaml`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from http import HTTPStatus
from typing import Any

import libcst as cst

from nonatomic.rules.lint.semantics.callees import dotted_name, source
from nonatomic.rules.lint.semantics.loops import calls_in, inside, leaves_loop, names_in
from nonatomic.rules.lint.semantics.model import ModuleModel, RetryScope, settings_hidden
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.tree import walk

# Library predicates that name exception types (`retry_if_exception_type(A, B)`).
_TYPE_PREDICATES = {"retry_if_exception_type": ("Exception",)}
# A comparison tests a status when its subject says so (`resp.status_code`, `e.code`).
_STATUS_WORDS = ("status", "code")


@lru_cache(maxsize=None)
def pack() -> dict[str, Any]:
    return load_pack("non_retryable")


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def is_timeout(name: str) -> bool:
    return _last(name) in pack()["timeout_exceptions"]


def is_catch_all(name: str) -> bool:
    return _last(name) in pack()["catch_all_exceptions"]


@dataclass(frozen=True)
class RetriesOn:
    everything: bool  # a bare `except:`, `Exception`, or a library retrying all by default
    names: tuple[str, ...] = ()  # the exception names otherwise


def exception_names(expr: cst.BaseExpression) -> list[str] | None:
    """`A` / `(A, B)` / `[A, B]` / `retry_if_exception_type(A)` / `retry_if_exception(lambda e:
    isinstance(e, A))` -> dotted names; None if opaque."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        name = dotted_name(expr)
        return [name] if name else None
    if isinstance(expr, (cst.Tuple, cst.List)):
        found: list[str] = []
        for element in expr.elements:
            names = exception_names(element.value)
            if names is None:
                return None
            found += names
        return found
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        left, right = exception_names(expr.left), exception_names(expr.right)  # `retry_if_... | retry_if_...`
        return left + right if left is not None and right is not None else None
    if isinstance(expr, cst.Call):
        default = _TYPE_PREDICATES.get(_last(dotted_name(expr.func) or ""))
        if default is not None:
            if not expr.args:
                return list(default)
            found = []
            for arg in expr.args:
                names = exception_names(arg.value)
                if names is None:
                    return None
                found += names
            return found
        if _last(dotted_name(expr.func) or "") == "retry_if_exception" and len(expr.args) == 1:
            return _isinstance_test(expr.args[0].value)
    return None


def _isinstance_test(test: cst.BaseExpression) -> list[str] | None:
    """`lambda e: isinstance(e, VersionMismatchError)`: the types the test admits."""
    if not isinstance(test, cst.Lambda) or not isinstance(test.body, cst.Call):
        return None
    call, params = test.body, test.params.params
    if dotted_name(call.func) != "isinstance" or len(call.args) != 2 or len(params) != 1:
        return None
    subject = call.args[0].value
    if not (isinstance(subject, cst.Name) and subject.value == params[0].name.value):
        return None
    return exception_names(call.args[1].value)


def retries_on(scope: RetryScope) -> RetriesOn | None:
    """The exceptions `scope` retries on; None when it cannot be told (a callable predicate,
    a status-driven loop, an unknown construct)."""
    if scope.inner is not None and scope.kind == "helper" and not scope.library:
        return retries_on(scope.inner)
    if scope.caught is not None:
        return RetriesOn(not scope.caught or any(is_catch_all(n) for n in scope.caught), scope.caught)
    if scope.kind == "loop" or "opaque" in scope.config or "exclude" in scope.config:
        return None  # a policy out of sight, or one that names what it does not retry
    if scope.policy_elsewhere:
        return None
    if "inferred" in scope.config and "predicate" not in scope.config:
        return None  # known by a keyword only: its default is not assumed
    predicate = scope.config.get("predicate")
    if predicate is None and settings_hidden(scope):
        return None  # `Retrying(**retry_kwargs)`: the predicate is unknown, not missing
    if predicate is None:
        return RetriesOn(True) if scope.library in pack()["default_retries_all"] else None
    names = exception_names(predicate.value)
    if names is None:
        return None
    return RetriesOn(any(is_catch_all(n) for n in names), tuple(names))


def reasks_only(scope: RetryScope, model: ModuleModel) -> bool:
    """The scope goes round only on a malformed answer that arrived (`except
    json.JSONDecodeError`, `retry_if_exception_type(ValidationError)`, a module tuple of
    such types), or on an error named for an invalid request (`PasswordHashInvalidError`,
    `content_words` in retry.yaml): it asks anew, it does not retry a failing service."""
    return _only_on(scope, model, "content_errors", _named_by("content_words"))


def conflicts_only(scope: RetryScope, model: ModuleModel) -> bool:
    """The scope goes round only on a transaction another client's write aborted (`except
    WatchError`, an error named for a version conflict: `VersionMismatchError`, `conflict_words`
    in retry.yaml), or is a loop of optimistic concurrency by its own words (it WATCHes a key
    each round, `pipe.watch(key)`, or its bound is named for it, `MAX_OPTIMISTIC_RETRIES`):
    going round at once is the protocol, though it still needs a limit."""
    return _only_on(scope, model, "conflict_errors", _named_by("conflict_words")) or _optimistic_loop(scope)


def awaits_grant(scope: RetryScope) -> bool:
    """The loop goes round only when its handler's test says the server refused the attempt
    for a conflict or for a grant it does not see yet (`ungranted_words` in retry.yaml), and
    re-raises every other failure: it waits for the grant to propagate, at the pace its
    wait sets, and an overloaded server is not what it retries on."""
    retry = load_pack("retry")
    words = frozenset(retry["ungranted_words"]) | frozenset(retry["conflict_words"])
    return bool(scope.refused_on) and all(said & words for said in scope.refused_on)


def _optimistic_loop(scope: RetryScope) -> bool:
    if scope.kind != "loop":
        return False
    retry = load_pack("retry")
    if any(_last(dotted_name(call.func) or "") in retry["conflict_calls"] for call in calls_in(scope.node.body)):
        return True
    header = scope.node.iter if isinstance(scope.node, cst.For) else scope.node.test
    return any(set(word_list(name)) & set(retry["conflict_bounds"]) for name in names_in(header))


def _named_by(kind: str) -> Callable[[str], bool]:
    """Is an exception named with one of the retry pack's list `kind` of words?"""
    said = set(load_pack("retry")[kind])
    return lambda name: bool(set(word_list(name)) & said)


def _only_on(scope: RetryScope, model: ModuleModel, kinds: str,
             named: Callable[[str], bool] = lambda name: False) -> bool:
    """The scope goes round only on exceptions of the pack's list `kinds`, or `named` so."""
    what = retries_on(scope)
    if what is None or what.everything or not what.names:
        return False
    allowed = set(load_pack("retry")[kinds])
    names = _expanded(what.names, model)
    return names is not None and all(_last(name) in allowed or named(_last(name)) for name in names)


def _expanded(names: tuple[str, ...] | list[str], model: ModuleModel, depth: int = 0) -> list[str] | None:
    """Exception names with module constants replaced by the types they hold
    (`PARSE_ERRORS = (ValidationError, json.JSONDecodeError)`); None if one is opaque."""
    found: list[str] = []
    for name in names:
        values = model.assigned.get(name, []) if "." not in name else []
        if not values:
            found.append(name)
            continue
        held = exception_names(values[-1]) if len(values) == 1 and depth < 3 else None
        inner = _expanded(held, model, depth + 1) if held is not None else None
        if inner is None:
            return None
        found += inner
    return found


# -- statuses -----------------------------------------------------------------------------

def module_constants(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """Module-level `NAME = value` bindings (the last one wins)."""
    found = {}
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        found[target.value] = small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    if isinstance(small.target, cst.Name):
                        found[small.target.value] = small.value
    return found


def _status(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer):
        value = expr.evaluated_value
        return value if 100 <= value <= 599 else None
    if isinstance(expr, cst.Attribute) and (dotted_name(expr.value) or "").endswith("HTTPStatus"):
        member = HTTPStatus.__members__.get(expr.attr.value)
        return member.value if member is not None else None
    return None


def status_set(expr: cst.BaseExpression, constants: dict[str, cst.BaseExpression], depth: int = 0) -> set[int] | None:
    """The statuses a literal collection holds (`{429, 503}`, `frozenset([...])`, `range(500, 600)`,
    a module constant naming one); None when `expr` is not such a collection."""
    if depth > 2:
        return None
    if isinstance(expr, cst.Name) and expr.value in constants:
        return status_set(constants[expr.value], constants, depth + 1)
    if isinstance(expr, (cst.Set, cst.List, cst.Tuple)):
        codes = [_status(element.value) for element in expr.elements]
        return set(codes) if codes and all(c is not None for c in codes) else None  # type: ignore[arg-type]
    if isinstance(expr, cst.Call) and expr.args:
        func = dotted_name(expr.func)
        if func in ("set", "frozenset", "tuple", "list"):
            return status_set(expr.args[0].value, constants, depth + 1)
        bounds = [arg.value.evaluated_value for arg in expr.args if isinstance(arg.value, cst.Integer)]
        if func == "range" and len(bounds) == len(expr.args) == 2:
            return {code for code in range(*bounds) if 100 <= code <= 599} or None
    return None


def _about_status(expr: cst.BaseExpression) -> bool:
    text = source(expr).lower()
    return any(word in text for word in _STATUS_WORDS)


def _operand(expr: cst.BaseExpression, code: int, constants) -> int | set[int] | None:
    """An operand's value when the status under test is `code`."""
    literal = _status(expr)
    if literal is not None:
        return literal
    collection = status_set(expr, constants)
    if collection is not None:
        return collection
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and _about_status(expr):
        return code
    return None


_OPERATORS = {
    cst.LessThan: lambda a, b: a < b, cst.LessThanEqual: lambda a, b: a <= b,
    cst.GreaterThan: lambda a, b: a > b, cst.GreaterThanEqual: lambda a, b: a >= b,
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
}


def status_truth(test: cst.BaseExpression, code: int, constants) -> bool | None:
    """Whether `test` holds when the status is `code`; None when it depends on something else."""
    if isinstance(test, cst.BooleanOperation):
        left = status_truth(test.left, code, constants)
        right = status_truth(test.right, code, constants)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (True if left and right else None)
        return True if True in (left, right) else (False if left is False and right is False else None)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = status_truth(test.expression, code, constants)
        return None if inner is None else not inner
    if not isinstance(test, cst.Comparison) or not _about_status(test):
        return None
    left = _operand(test.left, code, constants)
    for target in test.comparisons:
        right = _operand(target.comparator, code, constants)
        operator = type(target.operator)
        if left is None or right is None:
            return None
        if operator in (cst.In, cst.NotIn):
            if not isinstance(left, int) or not isinstance(right, set):
                return None
            holds = (left in right) == (operator is cst.In)
        elif operator in _OPERATORS and isinstance(left, int) and isinstance(right, int):
            holds = _OPERATORS[operator](left, right)
        else:
            return None
        if not holds:
            return False
        left = right
    return True


def retried_statuses(
    branches: list[tuple[cst.BaseExpression, bool, bool]], constants, *, falls_round: bool = False
) -> dict[int, cst.BaseExpression]:
    """Statuses a chain of tests sends round again, each with the test that does it.

    `branches`: the tests in order, each with whether its branch goes round again
    (`True`) or leaves (`False`), and whether its `else:` leaves.  The first test that holds for a status decides it;
    one that cannot be told for it leaves it undecided (not retried).  `if code not in
    S: return` sends the statuses of S round, as `if code != 429: break` sends 429.  `falls_round`: a status no test decides
    reaches the end of the loop body and goes round too."""
    retried = {}
    for code in range(100, 600):
        for test, round_if_true, else_leaves in branches:
            holds = status_truth(test, code, constants)
            if holds is None:
                break
            if holds:
                if round_if_true:
                    retried[code] = test
                break
            if not round_if_true and _not_in(test):
                retried[code] = test
                break
            if else_leaves:
                break
        else:
            if falls_round and branches:
                retried[code] = branches[-1][0]
    return retried


def loop_statuses(loop: cst.For | cst.While, constants) -> dict[int, cst.BaseExpression]:
    """The statuses a hand-written loop's tests send round again (`if r.status_code != 429:
    break`), each with the test that does it."""
    branches = [(branch.test, goes_round(branch.body), else_leaves(branch)) for branch in _ifs(loop.body)]
    return retried_statuses(branches, constants, falls_round=goes_round(loop.body))


def refused_only(scope: RetryScope, constants) -> bool:
    """A loop that goes round only on an answer refusing the request unprocessed (HTTP 429,
    `refused_statuses` in non_retryable.yaml), and never on an exception: no attempt that
    timed out, or whose outcome is unknown, is repeated."""
    if scope.kind != "loop" or scope.caught is not None:
        return False
    statuses = set(loop_statuses(scope.node, constants))
    return bool(statuses) and statuses <= set(pack()["refused_statuses"])


def _ifs(node: cst.CSTNode) -> list[cst.If]:
    """`if` statements of a loop body in source order, not in nested functions or loops."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While)):
        return []
    found = [node] if isinstance(node, cst.If) else []
    for child in walk.children(node):
        found += _ifs(child)
    return found


def _not_in(test: cst.BaseExpression) -> bool:
    """`code not in S` or `code != 429`: the statuses it excludes are the ones that stay."""
    return (
        isinstance(test, cst.Comparison) and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.NotIn, cst.NotEqual))
    )


def non_retryable(codes: set[int]) -> list[int]:
    return sorted(codes & set(pack()["non_retryable_statuses"]))


def predicate_tests(expr: cst.BaseExpression, functions: dict[str, cst.FunctionDef]) -> list[cst.BaseExpression]:
    """What a library predicate returns: a lambda's body, or the `return` values of the
    module function it names (directly or through `retry_if_result(fn)`)."""
    if isinstance(expr, cst.Lambda):
        return [expr.body]
    if isinstance(expr, cst.Name) and expr.value in functions:
        return [r.value for r in _returns(functions[expr.value].body) if r.value is not None]
    if isinstance(expr, cst.Call):
        return [test for arg in expr.args for test in predicate_tests(arg.value, functions)]
    if isinstance(expr, cst.BinaryOperation):  # `retry_if_result(a) | retry_if_exception_type(b)`
        return predicate_tests(expr.left, functions) + predicate_tests(expr.right, functions)
    return []


def _returns(node: cst.CSTNode) -> list[cst.Return]:
    if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        return []
    found = [node] if isinstance(node, cst.Return) else []
    for child in walk.children(node):
        found += _returns(child)
    return found


def handlers_in(node: cst.CSTNode) -> list[cst.ExceptHandler]:
    """The `except` clauses of a loop body, not of nested functions or loops."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While)):
        return []
    found = [node] if isinstance(node, cst.ExceptHandler) else []
    for child in walk.children(node):
        found += handlers_in(child)
    return found


def gives_up_on_timeout(scope: RetryScope) -> bool:
    """A retry loop whose handler for a timeout leaves the loop (`except requests.Timeout:
    return failure`): an attempt that timed out, and so may have landed, is not repeated;
    what goes round is a refusal, a lost connection or a server error."""
    if scope.kind != "loop":
        return False
    for handler in handlers_in(scope.node.body):
        names = exception_names(handler.type) if handler.type is not None else None
        if names and all(is_timeout(name) for name in names) and leaves_loop(handler):
            return True
    return False


def undone_by(call: cst.Call, function: cst.CSTNode) -> str | None:
    """The call a handler of a `try` around `call` (in `function`) makes to undo the
    attempt (`self._rollback_partial_connect()`): one named with an `undo_words` word."""
    words = frozenset(load_pack("retry")["undo_words"])
    for node in walk.subtree(function):
        if not isinstance(node, cst.Try) or not inside(call, node.body):
            continue
        for handler in node.handlers:
            for undo in calls_in(handler.body):
                name = dotted_name(undo.func) or ""
                spoken = word_list(name.rsplit(".", 1)[-1])
                if words & {*spoken, *(a + b for a, b in zip(spoken, spoken[1:]))}:  # `roll_back`
                    return name
    return None


def else_leaves(branch: cst.If) -> bool:
    """`if ...: ... else: raise`: when the test fails, the loop is left."""
    return isinstance(branch.orelse, cst.Else) and not goes_round(branch.orelse.body)


def goes_round(branch: cst.BaseSuite) -> bool:
    """An `if` branch that goes round again: it neither returns, breaks nor raises."""
    statements = branch.body if isinstance(branch, cst.IndentedBlock) else [branch]
    for statement in statements:
        smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
        if any(isinstance(s, (cst.Return, cst.Break, cst.Raise)) for s in smalls):
            return False
    return True

