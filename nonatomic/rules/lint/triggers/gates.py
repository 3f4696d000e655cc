"""Gates: tests on CPython's syntax tree of whether a rule could fire on a file.

The syntax check builds that tree for every file anyway; a gate that says no
saves the file a libcst parse and walk.  Each gate over-approximates its rule:
it looks for the shape every finding of the rule needs (a retry construct, a
cache store in an `except` path, a container in a class body or one a function
writes into, a bounded wait), resolved through imports as the rule resolves it,
never for the finding itself, so it can only skip files the rule would not flag.  The
rules' cases and a corpus comparison (same findings with and without gates)
check that.  All gates of a file share one pass over its tree (`SyntaxIndex`).
No libcst here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache

from nonatomic.rules.lint.semantics.names import named_like_retry, words
from nonatomic.rules.lint.semantics.packs import load_pack

_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NESTED = (*_DEFS, ast.Lambda)


# Fields that hold names, numbers, flags, contexts and operators, never a node a gate
# looks for: not descending into them saves a third of the walk.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "arg", "attr", "name", "module", "level", "kind",
                          "type_comment", "is_async", "simple", "conversion"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _pushed(node: ast.AST, stack: list[ast.AST]) -> None:
    """Puts `node`'s children on `stack`."""
    kind = type(node)
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _CHILD_FIELDS[kind] = tuple(name for name in kind._fields if name not in _LEAF_FIELDS)
    for name in names:
        value = getattr(node, name, None)
        if type(value) is list:
            stack.extend([item for item in value if isinstance(item, ast.AST)])
        elif isinstance(value, ast.AST):
            stack.append(value)


def nodes_under(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and every node under it (ast.walk's nodes, without contexts and operators)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        _pushed(node, stack)


def deeper_than(tree: ast.AST, limit: int) -> bool:
    """Whether `tree` (at depth 1) has a node deeper than `limit`, counting contexts and
    operators as ast.iter_child_nodes does.  Those are leaves, so the walk leaves them
    out and only asks a node at the limit whether it has any child at all."""
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    children: list[ast.AST] = []
    while stack:
        node, depth = stack.pop()
        if depth >= limit:
            if depth > limit or next(ast.iter_child_nodes(node), None) is not None:
                return True
            continue
        _pushed(node, children)
        stack.extend([(child, depth + 1) for child in children])
        children.clear()
    return False


def outside(nodes: Iterable[ast.AST], skipped: tuple[type, ...]) -> Iterator[ast.AST]:
    """`nodes` and what is under them, not entering (nor yielding) nodes of the `skipped` types."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if not isinstance(node, skipped):
            yield node
            stack.extend(ast.iter_child_nodes(node))


class SyntaxIndex:
    """A module's nodes by type, from one pass, for every gate of the file."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self._by_type: dict[type, list[ast.AST]] = {}
        stack: list[ast.AST] = [tree]
        while stack:  # nodes_under, inlined: this pass runs on most files
            node = stack.pop()
            self._by_type.setdefault(type(node), []).append(node)
            _pushed(node, stack)

    def of(self, *types: type) -> list:
        return [node for kind in types for node in self._by_type.get(kind, ())]

    @cached_property
    def imports(self) -> dict[str, set[str]]:
        """Local name -> what its imports bind it to (`import a.b as c`: c -> a.b;
        `from .m import f`: f -> .m.f), from every scope of the file."""
        bound: dict[str, set[str]] = {}
        for node in self.of(ast.Import):
            for alias in node.names:
                local, full = (alias.asname, alias.name) if alias.asname else (alias.name.split(".")[0],) * 2
                bound.setdefault(local, set()).add(full)
        for node in self.of(ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                bound.setdefault(alias.asname or alias.name, set()).add(f"{module}.{alias.name}" if module else alias.name)
        return bound

    def qualified(self, expr: ast.expr) -> set[str]:
        """The dotted names a callee expression may resolve to through the imports, as
        libcst's callee resolution names them (`tenacity.retry`); just the attribute for
        one that is not a plain dotted name (`make().retry_call`)."""
        dotted = _dotted(expr)
        if dotted is None:
            return {expr.attr} if isinstance(expr, ast.Attribute) else set()
        root, dot, rest = dotted.partition(".")
        return {full + dot + rest for full in self.imports.get(root, ())} or {dotted}

    def called(self, call: ast.Call) -> str | None:
        """The last name of what a call calls, through import aliases (`r` of
        `from tenacity import retry as r` calls `retry`)."""
        name = last_name(call.func)
        imported = self.imports.get(name or "")
        return max(imported).rsplit(".", 1)[-1] if imported else name


Gate = Callable[[SyntaxIndex], bool]


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base else None
    return None


def last_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def retry_construct(index: SyntaxIndex) -> bool:
    """A retry scope can exist (NA101, NA103, NA104, NA105): a decorator or call
    that names a construct of the retry pack or a retrier of a library the pack does
    not know (`semantics/names.py`), resolved through the imports as the retry model
    resolves it; `.with_retry()`; a LangGraph `retry_policy=`; or a loop shaped like a
    retry loop (`semantics/loops.py`, loosened: no test of what the loop works on)."""
    names = _retry_names()
    callees = [
        decorator.func if isinstance(decorator, ast.Call) else decorator
        for node in index.of(*_DEFS)
        for decorator in node.decorator_list
    ]
    for call in index.of(ast.Call):
        callees.append(call.func)
        given = {keyword.arg for keyword in call.keywords}
        if given & names.by_keyword.get(last_name(call.func) or "", frozenset()):
            return True  # `@app.task(autoretry_for=...)` of an app built elsewhere
        if {last_name(call.func), index.called(call)} & names.takes_policy and given & names.policy_keywords:
            return True
        if isinstance(call.func, ast.Attribute) and call.func.attr == names.with_retry:
            return True
    qualified = (name for callee in callees for name in index.qualified(callee))
    if any(name in names.constructs or named_like_retry(name) for name in qualified):
        return True
    loops = index.of(ast.While) + [
        loop
        for loop in index.of(ast.For, ast.AsyncFor)
        if isinstance(loop.iter, ast.Call) and index.called(loop.iter) in names.counters
    ]
    return any(_retry_shaped(loop, index, names.sleeps) for loop in loops)


def retried_or_call_id(index: SyntaxIndex) -> bool:
    """NA102: a retry construct, or a framework's id of a tool call (`ctx.tool_call_id`),
    which is new whenever the agent issues the call again."""
    ids = _call_ids()
    return any(
        (node.attr if isinstance(node, ast.Attribute) else node.id) in ids
        for node in index.of(ast.Attribute, ast.Name)
    ) or retry_construct(index)


@lru_cache(maxsize=None)
def _call_ids() -> frozenset[str]:
    return frozenset(load_pack("tools")["call_ids"])


@dataclass(frozen=True)
class _RetryNames:
    constructs: frozenset[str]
    takes_policy: frozenset[str]  # `add_node(..., retry_policy=...)` and `@task(retry_policy=...)`
    policy_keywords: frozenset[str]
    with_retry: str
    counters: frozenset[str]  # last names
    sleeps: frozenset[str]  # last names
    by_keyword: dict[str, frozenset[str]]  # last name -> keywords that make it a construct


@lru_cache(maxsize=None)
def _retry_names() -> _RetryNames:
    """What the retry gate looks for, from the retry pack (read once per process)."""
    pack = load_pack("retry")
    policy = pack["retry_policy"]

    def last(names) -> frozenset[str]:
        return frozenset(name.rsplit(".", 1)[-1] for name in names)

    by_keyword: dict[str, frozenset[str]] = {}
    for construct in pack["constructs"]:
        for name in last(construct["names"]) if construct.get("by_keyword") else ():
            by_keyword[name] = by_keyword.get(name, frozenset()) | frozenset(construct["by_keyword"])
    policies = [name for c in pack["constructs"] for name in c.get("policy", {}).get("names", ())]
    return _RetryNames(
        constructs=frozenset(name for construct in pack["constructs"] for name in construct["names"]) | frozenset(policies),
        by_keyword=by_keyword,
        takes_policy=frozenset(policy["add_node"]) | last(policy["decorators"]),
        policy_keywords=frozenset(policy["keywords"]),
        with_retry=pack["with_retry"]["method"],
        counters=last(pack["counters"]),
        sleeps=last(pack["sleeps"]),
    )


_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_EXITS = (ast.Return, ast.Break)


def _in_loop(statements: list[ast.stmt]) -> Iterator[ast.AST]:
    """What runs in one round of a loop body: not nested loops, functions or classes."""
    return outside(statements, (*_LOOPS, *_NESTED))


def _leaves_loop(handler: ast.ExceptHandler) -> bool:
    return isinstance(handler.body[-1], (ast.Raise, *_EXITS))


def _retry_shaped(loop: ast.For | ast.AsyncFor | ast.While, index: SyntaxIndex, sleeps: frozenset[str]) -> bool:
    """Either a `try` that fails over to the next round and whose success leaves the
    loop, or, without one, an exit or a `while` flag set, a sleep (or, counting, a
    `continue`) and an `if` that ends or restarts the round."""
    flags: set[str] = set()  # `while not done: ... done = True`
    if isinstance(loop, ast.While):
        flags = {node.id for node in nodes_under(loop.test) if isinstance(node, ast.Name)}

    def sets_flag(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in flags

    body = list(_in_loop(loop.body))
    for attempt in body:
        if not isinstance(attempt, _TRY) or all(_leaves_loop(h) for h in attempt.handlers):
            continue
        inside = list(_in_loop(attempt.body + attempt.orelse))
        if any(isinstance(n, _EXITS) or sets_flag(n) for n in inside):
            return True
        if attempt in loop.body:
            following = loop.body[loop.body.index(attempt) + 1 :][:1]
            if any(isinstance(s, _EXITS) for s in following):
                return True
    if not any(isinstance(n, _EXITS) or sets_flag(n) for n in body):
        return False
    paced = any(isinstance(n, ast.Call) and index.called(n) in sleeps for n in body) or (
        not isinstance(loop, ast.While) and any(isinstance(n, ast.Continue) for n in body)
    )
    return paced and any(
        isinstance(n, ast.If) and any(isinstance(s, (*_EXITS, ast.Continue)) for s in n.body) for n in body
    )


# Methods that store a value under a key: (key position, value position).
STORES = {"set": (0, 1), "setex": (0, 2), "psetex": (0, 2), "hset": (0, 2), "setnx": (0, 1),
          "put": (0, 1), "add": (0, 1), "setdefault": (0, 1), "set_many": (None, 0),
          "mset": (None, 0), "update": (None, 0)}


# Names of a store whose entries are answered back as an operation's outcome.
CACHE_WORDS = frozenset({"idempotency", "idempotent", "idem", "dedupe", "dedup", "deduplication", "replay",
                         "cache", "cached", "memo", "memoized"})
# Names that are such a store only when it outlives the call (NA107 tells).
RESULT_WORDS = frozenset({"result", "results", "response", "responses", "outcome", "outcomes"})


def _stores(node: ast.AST) -> bool:
    """A keyed store under `node` whose holder or key is named like a cache."""
    for inner in nodes_under(node):
        if isinstance(inner, ast.Assign):
            named = [target.value for target in inner.targets if isinstance(target, ast.Subscript)]
        elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in STORES:
            named = [inner.func.value, *inner.args]
        else:
            continue
        if any(_spelled(expr) & (CACHE_WORDS | RESULT_WORDS) for expr in named):
            return True
    return False


def _spelled(expr: ast.AST) -> set[str]:
    """The words of an expression's code: its names, attributes, keywords and strings."""
    found: set[str] = set()
    for node in nodes_under(expr):
        text = (
            node.id if isinstance(node, ast.Name)
            else node.attr if isinstance(node, ast.Attribute)
            else node.arg if isinstance(node, (ast.keyword, ast.arg))
            else node.value if isinstance(node, ast.Constant) and isinstance(node.value, str)
            else None
        )
        if text:
            found |= words(text)
    return found


def failure_store(index: SyntaxIndex) -> bool:
    """NA107: a keyed store named like a cache (`cache[k] = ...`, `r.set(idem_key, ...)`)
    in an `except` handler, or after a `try` whose handler assigns something."""
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
    for statements in _blocks(index):  # the statements after such a try, in its block
        for i, statement in enumerate(statements):
            if id(statement) in assigning and any(_stores(s) for s in statements[i + 1 :]):
                return True
    return False


_BLOCKS = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor,
           ast.While, ast.With, ast.AsyncWith, *_TRY, ast.ExceptHandler, ast.match_case)


def _blocks(index: SyntaxIndex) -> Iterator[list[ast.stmt]]:
    """Every list of statements in the module."""
    for node in index.of(*_BLOCKS):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if statements:
                yield statements


# Constructors of fresh mutable containers, and the module that has each.
CONTAINERS = {
    "dict": None, "list": None, "set": None, "bytearray": None,
    **dict.fromkeys(("defaultdict", "OrderedDict", "Counter", "deque", "ChainMap"), "collections"),
    **dict.fromkeys(("WeakValueDictionary", "WeakKeyDictionary", "WeakSet"), "weakref"),
}
_CONTAINER_LITERALS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def class_container(index: SyntaxIndex) -> bool:
    """NA302: a class body that binds a fresh mutable container to a name that the
    class uses as an attribute of a plain name (`self.seen`, `cls.seen`: every
    mutation the rule reports goes through one, in a method of the class)."""
    for node in index.of(ast.ClassDef):
        bound = {
            target.id
            for inner in outside(node.body, _NESTED)
            if _binds_container(inner, index)
            for target in _targets(inner)
            for target in nodes_under(target)
            if isinstance(target, ast.Name)
        }
        if bound and any(
            isinstance(inner, ast.Attribute) and inner.attr in bound and isinstance(inner.value, ast.Name)
            for inner in nodes_under(node)
        ):
            return True
    return False


def _targets(node: ast.Assign | ast.AnnAssign | ast.NamedExpr) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _binds_container(node: ast.AST, index: SyntaxIndex) -> bool:
    if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) or node.value is None:
        return False
    values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    return any(
        isinstance(value, _CONTAINER_LITERALS)
        or (isinstance(value, ast.Call) and index.called(value) in CONTAINERS)
        for value in values
    )


MUTATING_METHODS = frozenset(
    {
        # list / deque
        "append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
        "appendleft", "extendleft", "popleft", "rotate",
        # dict / OrderedDict / Counter
        "update", "setdefault", "popitem", "move_to_end", "subtract",
        # set
        "add", "discard", "difference_update", "intersection_update",
        "symmetric_difference_update",
        "__setitem__", "__delitem__",
    }
)



def mutated_global(index: SyntaxIndex) -> bool:
    """NA301: a `global` statement, or a module-level container that a function or
    lambda writes into (`X[k] = v`, `del X[k]`, `X.append(v)`, `X.get(k).clear()`)."""
    if index.of(ast.Global):
        return True
    containers = {
        target.id
        for statement in outside(index.tree.body, _NESTED)
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and _binds_container(statement, index)
        for target in _targets(statement)
        for target in nodes_under(target)
        if isinstance(target, ast.Name)
    }
    if not containers:
        return False
    at_import = {id(node) for node in outside(index.tree.body, _FUNCTIONS)}  # class bodies run then too
    return any(
        _container_root(written) in containers
        for node in index.of(ast.Subscript, ast.Call)
        if id(node) not in at_import
        for written in _written(node)
    )


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _written(node: ast.AST) -> list[ast.expr]:
    """What a node writes into: a subscript stored or deleted, a mutating method's object."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING_METHODS:
        return [node.func.value]
    return []


_REACHING = ("get", "setdefault")  # methods that hand back what the container holds


def _container_root(expr: ast.expr) -> str | None:
    """The name `X` that `X[u]["items"]`, `X.get(u)` and `X.setdefault(u, [])` reach into."""
    while True:
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _REACHING:
            expr = expr.func.value
        else:
            return expr.id if isinstance(expr, ast.Name) else None


def bounded_wait(index: SyntaxIndex) -> bool:
    """NA203: `wait(...)` given a timeout or `return_when`, or, in a file with a
    `try`, `wait_for(shield(...), ...)` or a `.result(...)` given an argument."""
    guarded = False
    for call in index.of(ast.Call):
        called = index.called(call)
        if called == "wait" and (len(call.args) > 1 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args)):
            return True
        if called == "wait_for":
            guarded = guarded or any(isinstance(a, ast.Call) and index.called(a) == "shield" for a in call.args[:1])
        elif called == "result":
            guarded = guarded or bool(call.args or call.keywords)
    return guarded and bool(index.of(*_TRY))


# The lock commands of NA401 and NA402 (`lock`, `setnx`, `set` given `nx`), called on a
# receiver, and the name of the lock classes NA401 knows (`redis.lock.Lock`, `redis_lock.Lock`).
_LOCK_METHODS = frozenset({"lock", "setnx"})
_LOCK_CLASS = "Lock"
_SET_NX_POSITION = 4  # set(name, value, ex, px, nx, ...)


def lock_command(index: SyntaxIndex) -> bool:
    """NA401, NA402: a call of a lock command on some receiver (`r.setnx(k, v)`,
    `client.lock(name)`, `r.set(k, v, nx=True)`, or `set` given `nx` by position or
    through `*`/`**`), or the name `Lock` anywhere (imported, called or held)."""
    for call in index.of(ast.Call):
        if not isinstance(call.func, ast.Attribute):
            continue
        if call.func.attr in _LOCK_METHODS:
            return True
        if call.func.attr == "set" and (
            len(call.args) > _SET_NX_POSITION
            or any(keyword.arg in ("nx", None) for keyword in call.keywords)
            or any(isinstance(arg, ast.Starred) for arg in call.args)
        ):
            return True
    return (
        any(node.attr == _LOCK_CLASS for node in index.of(ast.Attribute))
        or any(node.id == _LOCK_CLASS for node in index.of(ast.Name))
        or any(alias.name == _LOCK_CLASS for node in index.of(ast.ImportFrom) for alias in node.names)
    )
