"""Mutable state: which values are mutable containers, which statements mutate
them, which names a scope binds, and which functions run at import time.

Scoping is done by hand on purpose: libcst's ScopeProvider costs several times
a parse, while the rules about shared state only need to know, for the few
names that look like shared containers, whether a function rebinds them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from nonatomic.rules.lint.semantics.callees import dotted_name, source
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.tree import walk
from nonatomic.rules.lint.triggers.gates import CONTAINERS, MUTATING_METHODS

# Constructor (as `CalleeProvider` resolves it; bare when not imported) -> shown kind.
_CONSTRUCTORS = {
    name: short
    for short, module in CONTAINERS.items()
    for name in (short, f"{module}.{short}" if module else short)
}

# Parameter names (after underscores are dropped) and annotation endings that hold a function or class.
_CALLABLE_WORDS = (
    "fn", "fun", "func", "function", "callback", "handler", "hook", "factory", "cls", "class",
    "klass", "plugin", "translator", "decorator", "wrapped", "decorated", "method", "tool",
)
_CALLABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__module__"})
# Hooks Python runs while a class statement executes (at import time).
CLASS_CREATION_HOOKS = frozenset({"__init_subclass__", "__set_name__"})
LIFECYCLE_WORDS = frozenset({"startup", "shutdown", "init", "initialize", "initialise", "bootstrap", "lifespan",
                             "teardown"})
"""Words of a function named for the process's start or end (`_on_startup`, `initialize_sub_servers`)."""

Callee = Callable[[cst.Call], "str | None"]


def container_kind(expr: cst.BaseExpression, callee: Callee) -> str | None:
    """`dict`, `list`, `defaultdict`... when `expr` builds a fresh mutable container."""
    if isinstance(expr, (cst.Dict, cst.DictComp)):
        return "dict"
    if isinstance(expr, (cst.List, cst.ListComp)):
        return "list"
    if isinstance(expr, (cst.Set, cst.SetComp)):
        return "set"
    if isinstance(expr, cst.Call):
        name = callee(expr)
        return _CONSTRUCTORS.get(name) if name else None
    return None


def access_chain(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """`expr` and what it reaches into, down to the container it belongs to:
    `STATE[u]["items"]`, `STATE.get(u)` and `STATE.setdefault(u, [])` all lead to
    `STATE` (mutating what they return mutates what STATE holds)."""
    while True:
        yield expr
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value in ("get", "setdefault")
        ):
            expr = expr.func.value
        else:
            return


def container_root(expr: cst.BaseExpression) -> cst.BaseExpression:
    *_, root = access_chain(expr)
    return root


def target_names(target: cst.BaseExpression) -> Iterator[cst.Name]:
    """The names an assignment target binds (`a, (b, *c)` binds a, b and c)."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def stored_containers(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The containers an assignment or `del` target writes into (`X` for `X[k] = v`)."""
    if isinstance(target, cst.Subscript):
        yield container_root(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from stored_containers(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from stored_containers(target.value)


def mutated_by_call(call: cst.Call) -> cst.BaseExpression | None:
    """The container `X` of `X.append(...)`, `X.update(...)` and the other mutating methods."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in MUTATING_METHODS:
        return container_root(func.value)
    return None


_LOCK_NAME = re.compile(r"(?:^|_)(?:r?locks?|mutex|guard)(?:$|_)")


def holds_lock(node: cst.With) -> bool:
    """`with self._lock:`, `with _cache_guard:`, `with lock_for(key):`: code that
    knows its state is shared and serialises access to it."""
    for item in node.items:
        expr = item.item.func if isinstance(item.item, cst.Call) else item.item
        name = dotted_name(expr)
        if name and _LOCK_NAME.search(name.rsplit(".", 1)[-1].lower()):
            return True
    return False


def is_main_guard(node: cst.If) -> bool:
    """`if __name__ == "__main__":`"""
    test = node.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [s.value for s in sides if isinstance(s, cst.Name)]
    strings = [s.evaluated_value for s in sides if isinstance(s, cst.SimpleString)]
    return (
        isinstance(test.comparisons[0].operator, cst.Equal)
        and names == ["__name__"]
        and strings == ["__main__"]
    )


@dataclass
class ScopeNames:
    """What one function (or the module) does with names in its own body."""

    bound: dict[str, cst.CSTNode] = field(default_factory=dict)  # name -> first binding
    globals: dict[str, cst.Global] = field(default_factory=dict)
    nonlocals: set[str] = field(default_factory=set)
    returned: set[str] = field(default_factory=set)  # plain names in `return NAME`
    # `NAME = value` and `NAME: annotation = value`, in order: (name, value, annotation, statement)
    assignments: list[tuple[str, cst.BaseExpression | None, cst.Annotation | None, cst.CSTNode]] = field(
        default_factory=list
    )


class _Binder(cst.CSTVisitor):
    """Collects a scope's bindings without entering nested functions and classes
    (their names bind here, their bodies are other scopes); comprehension
    variables are not collected, as Python 3 keeps them in their own scope."""

    def __init__(self, names: ScopeNames) -> None:
        super().__init__()
        self.names = names

    def _bind(self, name: cst.Name, node: cst.CSTNode) -> None:
        self.names.bound.setdefault(name.value, node)

    def _bind_target(self, target: cst.BaseExpression, node: cst.CSTNode) -> None:
        for name in target_names(target):
            self._bind(name, node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._bind(node.name, node)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._bind(node.name, node)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, node)
            self._record(target.target, node.value, None, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind_target(node.target, node)  # an annotation alone makes a name local
        self._record(node.target, node.value, node.annotation, node)

    def _record(self, target, value, annotation, node) -> None:
        if isinstance(target, cst.Name):
            self.names.assignments.append((target.value, value, annotation, node))
        elif (
            isinstance(target, (cst.Tuple, cst.List))
            and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)
        ):
            for name, item in zip(target.elements, value.elements):
                self._record(name.value, item.value, None, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node)

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name, node)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind_target(node.target, node)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is not None:
                self._bind_target(alias.asname.name, node)
            else:
                root = dotted_name(alias.name)
                if root:
                    self.names.bound.setdefault(root.split(".", 1)[0], node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if alias.asname is not None:
                self._bind_target(alias.asname.name, node)
            elif isinstance(alias.name, cst.Name):
                self._bind(alias.name, node)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name, node)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name, node)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._bind(node.rest, node)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self.names.globals.setdefault(item.name.value, node)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names.nonlocals.update(item.name.value for item in node.names)

    def visit_Return(self, node: cst.Return) -> None:
        if isinstance(node.value, cst.Name):
            self.names.returned.add(node.value.value)


def parameters(node: cst.FunctionDef | cst.Lambda) -> list[cst.Param]:
    params = node.params
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    found += [star for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)]
    return found


def scope_names(node: cst.FunctionDef | cst.Lambda | cst.ClassDef | cst.Module) -> ScopeNames:
    """The names a function, class body or module binds in its own scope."""
    names = ScopeNames()
    if isinstance(node, cst.Module):
        for statement in node.body:
            walk.visit(statement, _Binder(names))
        return names
    if isinstance(node, cst.ClassDef):
        walk.visit(node.body, _Binder(names))
        return names
    for param in parameters(node):
        names.bound.setdefault(param.name.value, param)
    walk.visit(node.body, _Binder(names))
    return names


def looks_callable(param: cst.Param) -> bool:
    """Whether a parameter, by its name or annotation, holds a function or class."""
    name = param.name.value.lower().replace("_", "")
    if name in {"f", "fn"} or name.endswith(_CALLABLE_WORDS):
        return True
    if param.annotation is None:
        return False
    annotation = code_of(param.annotation.annotation)
    words = re.split(r"[\[\].|, ]+", annotation.strip("\"'"))
    return (
        "Callable" in annotation
        or annotation.lower().startswith("type[")
        or any(word.lower().endswith(_CALLABLE_WORDS) for word in words if word)
    )


def is_registrar(node: cst.FunctionDef, names: ScopeNames) -> bool:
    """A decorator or registration hook: it hands back a function or class it was
    given (`def register(fn): REGISTRY[fn.__name__] = fn; return fn`), so it runs
    when the decorated definition runs, normally at import time."""
    returns = code_of(node.returns.annotation) if node.returns is not None else None
    for param in parameters(node):
        name = param.name.value
        if name not in names.returned:
            continue
        if looks_callable(param) or _reads_dunder(node.body, name):
            return True
        # A type variable handed straight back: `def register(obj: T) -> T`.
        if param.annotation is not None and code_of(param.annotation.annotation) == returns:
            return True
    return False


def stored_value(node: cst.CSTNode) -> cst.BaseExpression | None:
    """What a mutation puts into its container: `v` of `X[k] = v`, `X.append(v)`,
    `X.setdefault(k, v)`; None for removals and in-place operators."""
    if isinstance(node, cst.Assign):
        return node.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in {"append", "add", "insert", "setdefault", "appendleft", "__setitem__"}:
            args = [arg for arg in node.args if arg.keyword is None and not arg.star]
            return args[-1].value if args else None
    return None


def stores_callable(node: cst.CSTNode, function: cst.FunctionDef | cst.Lambda) -> bool:
    """Whether a mutation stores a function or class the function was given, or one it
    defines itself, directly or in a literal (`HOOKS[point].append(hook)`, `T[k] = {"run": fn}`,
    a class factory's `class _Session: ...` then `_SESSION_TYPES.append(_Session)`)."""
    callables = {p.name.value for p in parameters(function) if looks_callable(p)}
    if isinstance(function, cst.FunctionDef) and isinstance(function.body, cst.IndentedBlock):
        callables |= {statement.name.value for statement in function.body.body
                      if isinstance(statement, (cst.ClassDef, cst.FunctionDef))}
    value = stored_value(node)
    if value is None or not callables:
        return False
    if isinstance(value, (cst.Dict, cst.Tuple, cst.List)):
        parts = [getattr(e, "value", None) for e in value.elements]
    else:
        parts = [value]
    return any(isinstance(part, cst.Name) and part.value in callables for part in parts)


def code_of(node: cst.CSTNode) -> str:
    """The source text of a node."""
    return cst.Module([]).code_for_node(node)


class _DunderReader(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.found = name, False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if (
            isinstance(node.value, cst.Name)
            and node.value.value == self.name
            and node.attr.value in _CALLABLE_DUNDERS
        ):
            self.found = True


def _reads_dunder(body: cst.CSTNode, name: str) -> bool:
    """Whether the body reads `name.__name__` (or `__qualname__`, `__module__`)."""
    reader = _DunderReader(name)
    walk.visit(body, reader)
    return reader.found


class ScopeTracker:
    """A mixin for rules: the classes, functions and lambdas whose body the
    traversal is in (decorators and defaults belong to the enclosing scope), and
    how many `with <lock>:` blocks it is in."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.scopes: list[cst.CSTNode] = []
        self.locks_held = 0

    def innermost_function(self) -> cst.FunctionDef | cst.Lambda | None:
        return next((s for s in reversed(self.scopes) if not isinstance(s, cst.ClassDef)), None)

    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Lambda_body(self, node: cst.Lambda) -> None:
        self.scopes.append(node)

    def leave_Lambda_body(self, node: cst.Lambda) -> None:
        self.scopes.pop()

    def visit_ClassDef_body(self, node: cst.ClassDef) -> None:
        self.scopes.append(node)

    def leave_ClassDef_body(self, node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_With(self, node: cst.With) -> None:
        if holds_lock(node):
            self.locks_held += 1

    def leave_With(self, original_node: cst.With) -> None:
        if holds_lock(original_node):
            self.locks_held -= 1


# -- what shared state holds, and state that is shared on purpose ------------------------
# Per-request data: a container keyed by (or named for) these holds one user's, session's
# or order's data in a store every request of the process shares, the real hazard.  Other
# shared state (process-wide memos, lazy singletons, registries, config setters) is
# reported at `info`.
REQUEST_WORDS = frozenset({
    "user", "users", "session", "sessions", "conversation", "conversations", "request",
    "requests", "order", "orders", "customer", "customers", "tenant", "tenants", "chat",
    "chats", "account", "accounts", "cart", "carts", "payment", "payments", "message", "messages",
    "ticket", "tickets",
})
# Flags that make a warning or a log line appear once per process: shared on purpose.
_ONCE_WORDS = frozenset({"warn", "warned", "warning", "warnings", "logged", "shown", "printed", "once",
                         "notified", "deprecation", "deprecated", "reported"})
# A docstring saying the caller serialises access, or that a helper is for tests.
_CALLER_LOCKS = re.compile(
    r"(caller|callers)\s+(must\s+)?(hold|holds|have|has)\b.*\block|\block\b.*\b(held|be held)\b"
    r"|\b(while|when)\s+(holding|locked)\b|\bunder\s+(the\s+)?\S*lock\b",
    re.IGNORECASE | re.DOTALL)
_FOR_TESTS = re.compile(r"\b(for|in|from|by)\s+(the\s+)?(unit\s+)?tests?\b|\btest(ing)?\s+(only|helper)\b", re.IGNORECASE)
_SIGNAL_PARAMS = frozenset({"signum", "sig", "signo", "signal_number", "signal"})


# What a container's name says it holds is its head noun, the word before any `by`/`per`/
# `for` (`users_by_discord_id` holds users, `vertex_chat_models` models): a request noun
# (`sessions`, `conversation`), or a holder noun after one (`conversation_history`,
# `chat_contexts`).  A singular `order` after a noun is a sequence's (`registration_order`).
_HOLDER_NOUNS = frozenset({"history", "histories", "context", "contexts", "state", "states", "memory",
                           "memories", "data", "store", "stores", "buffer", "buffers", "queue", "queues"})
_HEAD_ENDS = frozenset({"by", "per", "for"})
# A value written as a container (`X[k] = []`): an empty holder to fill, not a computed value.
LITERAL_CONTAINERS = (cst.List, cst.Dict, cst.Set, cst.Tuple, cst.ListComp, cst.DictComp, cst.SetComp)
# Methods that take entries out: a container its module empties as well as fills has a lifecycle.
REMOVING_METHODS = frozenset({"pop", "popitem", "remove", "discard", "clear"})


def holds_request_data(names: Iterator[str] | set[str]) -> bool:
    """Names (keys, values stored) that spell per-request data (`session_id`, `user_message`)."""
    return any(set(word_list(name)) & REQUEST_WORDS for name in names)


def named_for_request_data(name: str) -> bool:
    """A container's name says it holds per-request data (see _HOLDER_NOUNS)."""
    words = word_list(name)
    if any(w in _HEAD_ENDS for w in words):
        words = words[: next(i for i, w in enumerate(words) if w in _HEAD_ENDS)]
    if not words:
        return False
    head = words[-1]
    if head in REQUEST_WORDS and not (head == "order" and len(words) > 1):
        return True
    return head in _HOLDER_NOUNS and any(w in REQUEST_WORDS for w in words[:-1])


KEYED_METHODS = frozenset({"setdefault", "pop"})
"""Methods whose first argument is a key."""
MEMBER_METHODS = frozenset({"add", "discard", "remove"})
"""A set's: its members are its keys."""


def _held(expr: cst.BaseExpression) -> bool:
    """A container itself (`X`, `self.X`, `cls.X`), not one of its entries (`X[k]`)."""
    return isinstance(expr, cst.Name) or isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)


def removes(node: cst.CSTNode) -> bool:
    """A mutation that takes the container's own entries out (`del X[k]`, `X.pop(k)`,
    `del cls._sessions[jid]`, `X.clear()`; not `X[k].remove(item)`, which edits one entry)."""
    if isinstance(node, cst.Del):
        targets = [e.value for e in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        return any(isinstance(t, cst.Subscript) and _held(t.value) for t in targets)
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in REMOVING_METHODS and _held(node.func.value))


def keys_given(node: cst.CSTNode, is_container: Callable[[cst.BaseExpression], bool],
               kind: str) -> list[tuple[str, set[str]]]:
    """The keys a mutation gives the container `is_container` recognises (`_sessions[user_id]`,
    `.pop(user_id)`, `.setdefault(user_id, [])`, a set's `.add(session_id)`), each as its
    source and the names in it; a constant key (`_last["refund"]`) is a slot, not a key."""
    if isinstance(node, cst.Call):
        methods = KEYED_METHODS | (MEMBER_METHODS if kind == "set" else frozenset())
        keyed = isinstance(node.func, cst.Attribute) and node.func.attr.value in methods
        values = [arg.value for arg in node.args[:1]] if keyed else []
    else:
        values = [
            element.slice.value
            for sub in walk.subtree(node)
            if isinstance(sub, cst.Subscript) and is_container(sub.value)
            for element in sub.slice
            if isinstance(element.slice, cst.Index)
        ]
    found = [(source(value), {n.value for n in walk.subtree(value) if isinstance(n, cst.Name) and not is_container(n)})
             for value in values]
    return [(shown, names) for shown, names in found if names]


def once_flag(name: str) -> bool:
    return bool(set(word_list(name)) & _ONCE_WORDS)


def shared_on_purpose(function: cst.FunctionDef | cst.Lambda) -> bool:
    """A function whose own words say its writes to shared state are meant: documented
    (or named `*_locked`) as called with the lock held, a helper for tests (`_reset_cache_for_tests`),
    a once-per-process recorder (`warn_once`), the
    module's PEP 562 `__getattr__` (a lazy import cache), or a signal handler (its exit
    flag is process-wide by nature)."""
    if not isinstance(function, cst.FunctionDef):
        return False
    name = function.name.value
    if name == "__getattr__" or set(word_list(name)) & {"test", "tests", "testing", "once"}:
        return True  # `show_warning_once()`: what it records makes a message appear once per process
    if name.endswith("_locked"):  # `_next_id_locked()`: the convention for "call with the lock held"
        return True
    params = [p.name.value for p in function.params.params]
    if len(params) == 2 and params[0] in _SIGNAL_PARAMS and params[1] == "frame":
        return True
    doc = function.get_docstring() or ""
    return bool(_CALLER_LOCKS.search(doc) or _FOR_TESTS.search(doc))
