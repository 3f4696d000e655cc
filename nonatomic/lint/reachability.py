"""Code that cannot run, so no finding in it can happen.

A function defined inside another one runs only if the enclosing function names it: calls
it, returns it, hands it on, or registers it with a decorator.  One that is never named
(its only call commented out, a helper left behind by a refactor) is dead, and what the
rules would say of its body is about nothing that happens.  A use through `locals()` or
`vars()` cannot be seen, so a function that calls either keeps all its nested functions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCTIONS, ast.ClassDef, ast.Lambda)
_INTROSPECTION = {"locals", "vars"}


def dead_spans(tree: ast.Module) -> list[tuple[int, int]]:
    """(first line, last line) of every nested function its enclosing function never names."""
    return [(inner.lineno, inner.end_lineno or inner.lineno)
            for outer in ast.walk(tree) if isinstance(outer, _FUNCTIONS)
            for inner in _never_named(outer)]


def _never_named(outer: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    named = {node.id for node in ast.walk(outer) if isinstance(node, ast.Name)}
    if named & _INTROSPECTION:
        return
    for inner in _own_defs(outer.body):
        if not inner.decorator_list and inner.name not in named:
            yield inner


def _own_defs(body: list[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions defined in a body, at any block depth but not in a nested scope."""
    for statement in body:
        if isinstance(statement, _FUNCTIONS):
            yield statement
        elif not isinstance(statement, _SCOPES):
            for block in _blocks(statement):
                yield from _own_defs(block)


def _blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists of a compound statement: if/for/while/with/try bodies, handlers, cases."""
    for field in ("body", "orelse", "finalbody"):
        yield getattr(statement, field, [])
    for clause in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
        yield clause.body


def within(spans: list[tuple[int, int]], line: int) -> bool:
    return any(first <= line <= last for first, last in spans)
