"""What a retry scope retries on: which exceptions, and which HTTP statuses.

A scope retries on exceptions (the `except` clauses of a hand-written loop,
the predicate argument of a library construct, or the library's default when
there is none) and, where the code decides by status, on the statuses its
tests send round again (`if resp.status_code in RETRYABLE: continue`, a
`retry_if_result(lambda r: r.status_code in {...})` predicate).  Which
statuses and exceptions mean what is `non_retryable.yaml`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from http import HTTPStatus
from typing import Any

import libcst as cst

from nonatomic.rules.lint.semantics.callees import dotted_name
from nonatomic.rules.lint.semantics.model import RetryScope
from nonatomic.rules.lint.semantics.names import source
from nonatomic.rules.lint.semantics.packs import load_pack

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
    """`A` / `(A, B)` / `[A, B]` / `retry_if_exception_type(A)` -> dotted names; None if opaque."""
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
    return None


def retries_on(scope: RetryScope) -> RetriesOn | None:
    """The exceptions `scope` retries on; None when it cannot be told (a callable predicate,
    a status-driven loop, an unknown construct)."""
    if scope.inner is not None and scope.kind == "helper" and not scope.library:
        return retries_on(scope.inner)
    if scope.caught is not None:
        return RetriesOn(not scope.caught or any(is_catch_all(n) for n in scope.caught), scope.caught)
    if scope.kind == "loop":
        return None
    predicate = scope.config.get("predicate")
    if predicate is None:
        return RetriesOn(True) if scope.library in pack()["default_retries_all"] else None
    names = exception_names(predicate.value)
    if names is None:
        return None
    return RetriesOn(any(is_catch_all(n) for n in names), tuple(names))


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


def retried_statuses(
    test: cst.BaseExpression, constants: dict[str, cst.BaseExpression], *, retried_when_true: bool
) -> tuple[cst.CSTNode, set[int]] | None:
    """The comparison in `test` that sends statuses round again and those statuses.

    `retried_when_true`: the attempt is retried when `test` holds (a predicate, or an `if`
    whose branch goes round again); otherwise when it fails (`if code not in S: return`)."""
    for comparison in _comparisons(test):
        subject = comparison.left
        if not _about_status(subject):
            continue
        for target in comparison.comparisons:
            operator = target.operator
            positive = isinstance(operator, cst.In) if retried_when_true else isinstance(operator, cst.NotIn)
            if positive:
                codes = status_set(target.comparator, constants)
                if codes:
                    return comparison, codes
            # `code >= 400` goes round, or `code < 300` leaves: everything from the threshold up.
            threshold = _status(target.comparator)
            upward = (cst.GreaterThanEqual, cst.GreaterThan) if retried_when_true else (cst.LessThan, cst.LessThanEqual)
            if threshold is not None and isinstance(operator, upward):
                start = threshold + 1 if isinstance(operator, (cst.GreaterThan, cst.LessThanEqual)) else threshold
                return comparison, set(range(start, 600))
    return None


def _comparisons(node: cst.CSTNode) -> list[cst.Comparison]:
    if isinstance(node, (cst.Lambda, cst.FunctionDef)):
        return []
    found = [node] if isinstance(node, cst.Comparison) else []
    for child in node.children:
        found += _comparisons(child)
    return found


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
    for child in node.children:
        found += _returns(child)
    return found


def sleeps_or_loops_on(branch: cst.BaseSuite) -> bool:
    """An `if` branch that goes round again: it neither returns, breaks nor raises."""
    statements = branch.body if isinstance(branch, cst.IndentedBlock) else [branch]
    for statement in statements:
        smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
        if any(isinstance(s, (cst.Return, cst.Break, cst.Raise)) for s in smalls):
            return False
    return True

