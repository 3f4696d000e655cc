"""Gates: tests on CPython's syntax tree of whether a rule could fire on a file.

The syntax check builds that tree for every file anyway; a gate that says no
saves the file a libcst parse and walk.  Each gate over-approximates its rule:
it looks for the shape every finding of the rule needs (a retry construct, a
store in an `except` path, a container in a class body, a bounded wait), never
for the finding itself, so it can only skip files the rule would not flag.  The
rules' cases and a corpus comparison (same findings with and without gates)
check that.  All gates of a file share one pass over its tree (`SyntaxIndex`).
No libcst here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from functools import cached_property

from nonatomic.rules.lint.semantics.packs import load_pack

_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NESTED = (*_DEFS, ast.Lambda)


def nodes_under(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and every node under it (ast.walk's nodes, without its generators)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)


class SyntaxIndex:
    """A module's nodes by type, from one pass, for every gate of the file."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self._by_type: dict[type, list[ast.AST]] = {}
        for node in nodes_under(tree):
            self._by_type.setdefault(type(node), []).append(node)

    def of(self, *types: type) -> list:
        return [node for kind in types for node in self._by_type.get(kind, ())]

    @cached_property
    def aliases(self) -> dict[str, str]:
        """`from m import name as alias`: alias -> name."""
        return {alias.asname: alias.name for node in self.of(ast.ImportFrom) for alias in node.names if alias.asname}

    def called(self, call: ast.Call) -> str | None:
        """The last name of what a call calls, through import aliases."""
        name = last_name(call.func)
        return self.aliases.get(name, name) if name else None


Gate = Callable[[SyntaxIndex], bool]


def last_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _names(expr: ast.AST) -> Iterator[str]:
    """Every name, attribute and keyword in an expression (`tenacity.retry(stop=...)`)."""
    for node in nodes_under(expr):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg


# Every retry library and retrier name of retry.yaml says one of these (a test checks).
RETRY_WORDS = re.compile(r"retr|backoff|stamina|tenacity", re.IGNORECASE)


def retry_construct(index: SyntaxIndex) -> bool:
    """A retry scope can exist (NA101, NA103, NA104, NA105): a decorator, call,
    keyword or import that names a retry library or says retry/backoff, or a `while`
    or counting `for` loop whose body catches, continues or sleeps."""
    named = [name for node in index.of(*_DEFS) for decorator in node.decorator_list for name in _names(decorator)]
    for call in index.of(ast.Call):
        named += _names(call.func)
        named += (keyword.arg for keyword in call.keywords if keyword.arg)
    for node in index.of(ast.ImportFrom):
        named += [node.module or "", *(alias.name for alias in node.names)]
    named += (alias.name for node in index.of(ast.Import) for alias in node.names)
    if any(RETRY_WORDS.search(name) for name in named):
        return True
    pack = load_pack("retry")
    counters = {name.rsplit(".", 1)[-1] for name in pack["counters"]}
    sleeps = {name.rsplit(".", 1)[-1] for name in pack["sleeps"]}
    loops = index.of(ast.While) + [
        loop
        for loop in index.of(ast.For, ast.AsyncFor)
        if isinstance(loop.iter, ast.Call) and index.called(loop.iter) in counters
    ]
    return any(
        isinstance(node, (*_TRY, ast.Continue)) or (isinstance(node, ast.Call) and index.called(node) in sleeps)
        for loop in loops
        for statement in loop.body
        for node in nodes_under(statement)
    )


# Methods that store a value under a key: (key position, value position).
STORES = {"set": (0, 1), "setex": (0, 2), "psetex": (0, 2), "hset": (0, 2), "setnx": (0, 1),
          "put": (0, 1), "add": (0, 1), "setdefault": (0, 1), "set_many": (None, 0),
          "mset": (None, 0), "update": (None, 0)}


def _stores(node: ast.AST) -> bool:
    return any(
        (isinstance(inner, ast.Assign) and any(isinstance(t, ast.Subscript) for t in inner.targets))
        or (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in STORES)
        for inner in nodes_under(node)
    )


def failure_store(index: SyntaxIndex) -> bool:
    """NA107: a keyed store (`cache[k] = ...`, `cache.set(...)`) in an `except`
    handler, or after a `try` whose handler assigns something."""
    tries = index.of(*_TRY)
    if not tries:
        return False
    if any(_stores(handler) for attempt in tries for handler in attempt.handlers):
        return True
    assigning = {
        id(attempt)
        for attempt in tries
        if any(isinstance(inner, ast.Assign) for handler in attempt.handlers for inner in nodes_under(handler))
    }
    if not assigning:
        return False
    for node in nodes_under(index.tree):  # the statements after such a try, in its block
        for name in node._fields:
            statements = getattr(node, name, None)
            if isinstance(statements, list):
                for i, statement in enumerate(statements):
                    if id(statement) in assigning and any(_stores(s) for s in statements[i + 1 :]):
                        return True
    return False


# Constructors of fresh mutable containers, and the module that has each.
CONTAINERS = {
    "dict": None, "list": None, "set": None, "bytearray": None,
    **dict.fromkeys(("defaultdict", "OrderedDict", "Counter", "deque", "ChainMap"), "collections"),
    **dict.fromkeys(("WeakValueDictionary", "WeakKeyDictionary", "WeakSet"), "weakref"),
}
_CONTAINER_LITERALS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def class_container(index: SyntaxIndex) -> bool:
    """NA302: a class body that binds a fresh mutable container."""
    return any(
        _binds_container(inner, index)
        for node in index.of(ast.ClassDef)
        for statement in node.body
        if not isinstance(statement, _NESTED)
        for inner in _in_scope(statement)
    )


def _in_scope(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and what is under it, not entering nested functions and classes."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _NESTED):
            yield from _in_scope(child)


def _binds_container(node: ast.AST, index: SyntaxIndex) -> bool:
    if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) or node.value is None:
        return False
    values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    return any(
        isinstance(value, _CONTAINER_LITERALS)
        or (isinstance(value, ast.Call) and index.called(value) in CONTAINERS)
        for value in values
    )


def bounded_wait(index: SyntaxIndex) -> bool:
    """NA203: `wait(...)` given a timeout or `return_when`, or, in a file with a
    `try`, a `wait_for`, `shield` or `.result(...)` call."""
    awaited = False
    for call in index.of(ast.Call):
        called = index.called(call)
        if called == "wait" and (len(call.args) > 1 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args)):
            return True
        awaited = awaited or called in ("wait_for", "shield", "result")
    return awaited and bool(index.of(*_TRY))
