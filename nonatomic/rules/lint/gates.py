"""Gates: tests on CPython's syntax tree of whether a rule could fire on a file.

The syntax check builds that tree for every file anyway; a gate that says no
saves the file a libcst parse and walk.  Each gate over-approximates its rule:
it looks for the shape every finding of the rule needs (a retry construct, a
store in an `except` path, a container in a class body, a bounded wait), never
for the finding itself, so it can only skip files the rule would not flag.  The
rules' cases and a corpus comparison (same findings with and without gates)
check that.  No libcst here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from nonatomic.rules.lint.semantics.packs import load_pack

# Every retry library and retrier name of retry.yaml says one of these (a test checks).
RETRY_WORDS = re.compile(r"retr|backoff|stamina|tenacity", re.IGNORECASE)
_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _last(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _names(expr: ast.expr) -> Iterator[str]:
    """Every name and attribute in an expression (`tenacity.retry(stop=...)`)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg


def _aliases(tree: ast.Module) -> dict[str, str]:
    """`from m import name as alias`: alias -> name."""
    return {
        alias.asname: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname
    }


def _called(call: ast.Call, aliases: dict[str, str]) -> str | None:
    name = _last(call.func)
    return aliases.get(name, name) if name else None


def retry_construct(tree: ast.Module) -> bool:
    """A retry scope can exist (NA101, NA103, NA104, NA105): a decorator, call,
    keyword or import that names a retry library or says retry/backoff, or a `while`
    or counting `for` loop whose body catches, continues or sleeps."""
    aliases = _aliases(tree)
    pack = load_pack("retry")
    counters = {name.rsplit(".", 1)[-1] for name in pack["counters"]}
    sleeps = {name.rsplit(".", 1)[-1] for name in pack["sleeps"]}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            named = [name for decorator in node.decorator_list for name in _names(decorator)]
        elif isinstance(node, ast.Call):
            named = [*_names(node.func), *(k.arg for k in node.keywords if k.arg)]
        elif isinstance(node, ast.ImportFrom):
            named = [node.module or "", *(alias.name for alias in node.names)]
        elif isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.While) or (
            isinstance(node, (ast.For, ast.AsyncFor))
            and isinstance(node.iter, ast.Call)
            and _called(node.iter, aliases) in counters
        ):
            if _catches_or_sleeps(node, aliases, sleeps):
                return True
            continue
        else:
            continue
        if any(RETRY_WORDS.search(name) for name in named):
            return True
    return False


def _catches_or_sleeps(loop: ast.While | ast.For | ast.AsyncFor, aliases: dict[str, str], sleeps: set[str]) -> bool:
    return any(
        isinstance(node, (*_TRY, ast.Continue))
        or (isinstance(node, ast.Call) and _called(node, aliases) in sleeps)
        for statement in loop.body
        for node in ast.walk(statement)
    )


# Methods that store a value under a key: (key position, value position).
STORES = {"set": (0, 1), "setex": (0, 2), "psetex": (0, 2), "hset": (0, 2), "setnx": (0, 1),
          "put": (0, 1), "add": (0, 1), "setdefault": (0, 1), "set_many": (None, 0),
          "mset": (None, 0), "update": (None, 0)}


def _stores(node: ast.AST) -> bool:
    return any(
        (isinstance(inner, ast.Assign) and any(isinstance(t, ast.Subscript) for t in inner.targets))
        or (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in STORES)
        for inner in ast.walk(node)
    )


def failure_store(tree: ast.Module) -> bool:
    """NA107: a keyed store (`cache[k] = ...`, `cache.set(...)`) in an `except`
    handler, or after a `try` whose handler assigns something."""
    for node in ast.walk(tree):
        for _, statements in ast.iter_fields(node):
            if not isinstance(statements, list):
                continue
            for i, statement in enumerate(statements):
                if not isinstance(statement, _TRY):
                    continue
                for handler in statement.handlers:
                    if _stores(handler):
                        return True
                    assigns = any(isinstance(inner, ast.Assign) for inner in ast.walk(handler))
                    if assigns and any(_stores(following) for following in statements[i + 1 :]):
                        return True
    return False


# Constructors of fresh mutable containers, and the module that has each.
CONTAINERS = {
    "dict": None, "list": None, "set": None, "bytearray": None,
    **dict.fromkeys(("defaultdict", "OrderedDict", "Counter", "deque", "ChainMap"), "collections"),
    **dict.fromkeys(("WeakValueDictionary", "WeakKeyDictionary", "WeakSet"), "weakref"),
}
_CONTAINER_LITERALS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def class_container(tree: ast.Module) -> bool:
    """NA302: a class body that binds a fresh mutable container."""
    aliases = _aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
            _binds_container(inner, aliases)
            for statement in node.body
            if not isinstance(statement, _NESTED)
            for inner in _in_scope(statement)
        ):
            return True
    return False


def _in_scope(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and what is under it, not entering nested functions and classes."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _NESTED):
            yield from _in_scope(child)


def _binds_container(node: ast.AST, aliases: dict[str, str]) -> bool:
    if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) or node.value is None:
        return False
    values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    return any(
        isinstance(value, _CONTAINER_LITERALS)
        or (isinstance(value, ast.Call) and _called(value, aliases) in CONTAINERS)
        for value in values
    )


def bounded_wait(tree: ast.Module) -> bool:
    """NA203: `wait(...)` given a timeout or `return_when`, or, in a file with a
    `try`, a `wait_for`, `shield` or `.result(...)` call."""
    aliases = _aliases(tree)
    has_try = awaited = False
    for node in ast.walk(tree):
        if isinstance(node, _TRY):
            has_try = True
        elif isinstance(node, ast.Call):
            called = _called(node, aliases)
            if called == "wait" and (len(node.args) > 1 or node.keywords or any(isinstance(a, ast.Starred) for a in node.args)):
                return True
            awaited = awaited or called in ("wait_for", "shield", "result")
    return has_try and awaited
