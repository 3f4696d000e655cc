"""What the retry analysis knows about one module: its functions, its calls,
the retry scopes around them and what each scope retries.

`retry.RetryProvider` builds a `ModuleModel` in one pass; `tools.ToolRegistry`
decides which of its calls are writes and which carry an idempotency key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.names import word_list


@dataclass(eq=False)
class RetryScope:
    # decorator: a retry decorator on a function; loop: a hand-written `for`/`while`
    # retry loop; attempts: `for attempt in Retrying(...)`; wrapper:
    # `Retrying(...)(fn, ...)`; helper: a function that retries its callable argument;
    # with_retry: LangChain `.with_retry()`; retry_policy: a LangGraph node or task
    # with a `RetryPolicy`; raise: a function a framework runs again when it raises
    # (`raise self.retry(...)`, `raise ModelRetry(...)`); tools: the tools of an agent
    # whose whole run is retried; transport: the calls of a client whose transport retries.
    kind: str
    label: str  # how a message names the construct: "tenacity `@retry`"
    node: cst.CSTNode  # the decorator, loop, or call that makes the retry
    library: str | None = None  # tenacity, backoff, ...; None when hand-written
    # role (stop, wait, jitter, predicate) -> the argument that sets it
    config: dict[str, cst.Arg] = field(default_factory=dict)
    # hand-written loops only:
    caught: tuple[str, ...] | None = None  # exception names the loop's handlers catch; () is bare
    sleeps: tuple[cst.Call, ...] = ()  # the waits between attempts
    bound: cst.BaseExpression | None = None  # `range(...)` call or `while` test; None: none
    # a helper scope: the scope inside the helper that retries its callable
    inner: RetryScope | None = None
    # a framework construct of the retry pack (`retry.Construct`): how its settings read
    construct: Any = None
    # a raise scope: only the calls before the raise (their index in the function's sites)
    upto: int | None = None
    # hand-written loops: every handler that goes round re-raises unless its test says
    # the attempt was refused; the words each such test names (loops.LoopShape.refused_on)
    refused_on: tuple[frozenset[str], ...] = ()
    in_tests: bool = False  # written in a test module (confidence.test_module)
    # a decorator or helper defined out of sight (another module, another package), taken for
    # a retry only because its name says so (`retry_k8s_api_call`, `@with_retries`)
    by_name: bool = False

    @property
    def refused(self) -> bool:
        return bool(self.refused_on)

    @property
    def policy_elsewhere(self) -> bool:
        """A framework's task retried by its default policy, which the code that starts it
        sets (a Temporal activity: `execute_activity(..., retry_policy=...)`, often in
        another module, often `maximum_attempts=1`)."""
        return self.construct is not None and bool(self.construct.entry.get("policy_elsewhere"))

    @property
    def known(self) -> bool:
        """Seen, not inferred from a loop's shape or a name: a retry construct (not one guessed
        from a keyword every queue uses), or a loop that counts its attempts (`for attempt in
        range(3)`, `while attempt < max_retries`)."""
        if self.by_name or self.policy_elsewhere:
            return False  # what it retries on, and how often, is not in sight
        if "inferred" in self.config and self.construct is not None:
            return not self.construct.entry.get("by_keyword_guess")  # `@x.task(retries=3)` of some queue
        if self.kind != "loop" or isinstance(self.node, cst.For):
            return True
        return self.bound is not None and bool(_ATTEMPT_WORDS & _words_of(self.bound))

    def catches_only(self, names: set[str], words: frozenset[str] = frozenset()) -> bool:
        """True when every exception this scope retries on is one of `names`, or is named
        with one of `words`."""
        caught = self.caught
        predicate = self.config.get("predicate")
        if caught is None and predicate is not None:
            caught = tuple(_exception_names(predicate.value))
        if self.inner is not None and not caught:
            return self.inner.catches_only(names, words)
        last = [name.rsplit(".", 1)[-1] for name in caught or ()]
        return bool(last) and all(name in names or set(word_list(name)) & words for name in last)


_ATTEMPT_WORDS = {"attempt", "attempts", "retry", "retries", "tries", "try", "tried", "retried"}


def _words_of(expr: cst.CSTNode) -> set[str]:
    if isinstance(expr, cst.Name):
        return set(word_list(expr.value))
    found: set[str] = set()
    for child in expr.children:
        found |= _words_of(child)
    return found


def _exception_names(expr: cst.BaseExpression) -> list[str]:
    """`ConnectError` / `(A, B)` / `retry_if_exception_type((A, B))` -> names; [] if opaque.
    `retry_if_exception(_is_commit_conflict)` -> the test's name, which the failures it
    lets through go by."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return [_last(expr)]
    if isinstance(expr, cst.Tuple):
        names = [_exception_names(el.value) for el in expr.elements]
        return [n for group in names for n in group] if all(names) else []
    if isinstance(expr, cst.Call) and _last(expr.func) in ("retry_if_exception_type", "retry_if_exception") \
            and expr.args:
        return _exception_names(expr.args[0].value)
    return []


def _last(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return expr.value if isinstance(expr, cst.Name) else ""


def construct_call(scope: RetryScope) -> cst.Call | None:
    """The call that configures a library scope, where it is written in place."""
    node = scope.node
    if isinstance(node, cst.Decorator):
        return node.decorator if isinstance(node.decorator, cst.Call) else None
    if isinstance(node, cst.For):
        return node.iter if isinstance(node.iter, cst.Call) else None
    if scope.kind == "wrapper" and isinstance(node, cst.Call) and isinstance(node.func, cst.Call):
        return node.func
    return node if isinstance(node, cst.Call) else None


def settings_hidden(scope: RetryScope) -> bool:
    """Settings passed through `**kwargs` cannot be read."""
    call = construct_call(scope)
    return call is not None and calls.has_star_kwargs(call)


@dataclass(eq=False)
class FunctionFacts:
    node: cst.FunctionDef | cst.Lambda
    name: str  # "" for a lambda
    class_name: str | None  # the class a method is defined in
    parent: FunctionFacts | None  # the enclosing function of a nested def or lambda
    params: list[cst.Param]
    decorators: list[tuple[str | None, cst.Decorator]] = field(default_factory=list)  # resolved name
    tool_name: str | None = None  # the name an agent calls it by, when it is a tool
    # MCP `ToolAnnotations` given where it is declared a tool: hint -> the argument's value
    hints: dict[str, cst.BaseExpression] = field(default_factory=dict)
    sites: list[CallSite] = field(default_factory=list)  # calls in its own body
    assigned: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)  # name -> values
    item_keys: dict[str, list[tuple[str, cst.BaseExpression]]] = field(default_factory=dict)
    scopes: list[RetryScope] = field(default_factory=list)  # decorator / retry-policy scopes

    @property
    def param_names(self) -> list[str]:
        return [p.name.value for p in self.params]

    def binds(self, name: str) -> bool:
        """Whether `name` is a parameter or local here or in an enclosing function."""
        facts: FunctionFacts | None = self
        while facts is not None:
            if name in facts.assigned or name in facts.param_names:
                return True
            facts = facts.parent
        return False

    def values_of(self, name: str) -> list[cst.BaseExpression]:
        """What `name` is bound to here or in an enclosing function (flow-insensitive)."""
        facts: FunctionFacts | None = self
        while facts is not None:
            if name in facts.assigned or name in facts.param_names:
                return facts.assigned.get(name, [])
            facts = facts.parent
        return []

    def items_of(self, name: str) -> list[tuple[str, cst.BaseExpression]]:
        """`(key, value)` pairs set on the dict `name` by `name[key] = value` or `.update(...)`."""
        facts: FunctionFacts | None = self
        while facts is not None:
            if name in facts.item_keys:
                return facts.item_keys[name]
            facts = facts.parent
        return []


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    callee: str | None  # resolved through imports and object types
    dotted: str | None  # the syntactic dotted name of `node.func`
    function: FunctionFacts | None  # the function (or lambda) whose body holds the call
    frames: tuple[RetryScope, ...]  # loop scopes around it inside that function, innermost first

    @property
    def method(self) -> str | None:
        func = self.node.func
        if isinstance(func, cst.Attribute):
            return func.attr.value
        return func.value if isinstance(func, cst.Name) else None


@dataclass(eq=False)
class Retried:
    """Something a retry scope runs again: a call, or a callable handed to a retry construct."""

    node: cst.CSTNode  # where a finding is reported: the call, or the callable reference
    target: cst.BaseExpression  # what is called: `node.func`, or the reference
    carrier: cst.Call  # the call whose arguments reach the target (the call, or the helper call)
    site: CallSite | None  # the call site, for a direct call
    function: FunctionFacts | None  # where it is, for resolving names
    scopes: tuple[RetryScope, ...]  # innermost first


@dataclass(eq=False)
class ModuleModel:
    functions: dict[str, list[FunctionFacts]] = field(default_factory=dict)  # "f" / "Class.m"
    sites: list[CallSite] = field(default_factory=list)
    scopes: list[RetryScope] = field(default_factory=list)
    retried: list[Retried] = field(default_factory=list)
    assigned: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)  # module level
    memo: dict[Any, Any] = field(default_factory=dict)  # per-module caches of the registry

    def function(self, name: str, where: FunctionFacts | None = None) -> FunctionFacts | None:
        """The function `name` calls from `where`: a def nested in `where` or a function around
        it (nearest first, as Python looks a name up), else a module-level one."""
        found = self.functions.get(name)
        if not found:
            return None
        scope = where
        while scope is not None:
            local = [facts for facts in found if facts.parent is scope]
            if local:
                return local[-1]
            scope = scope.parent
        return next((facts for facts in reversed(found) if facts.parent is None), found[-1])

    def target_function(self, target: cst.BaseExpression, where: FunctionFacts | None) -> FunctionFacts | None:
        """The module function or method a callee expression names: `f`, `self.m`, `cls.m`,
        and `Store.m` of a class the module defines (a static or class method)."""
        if isinstance(target, cst.Name):
            if where is not None and where.binds(target.value):
                return None
            return self.function(target.value, where)
        if not isinstance(target, cst.Attribute) or not isinstance(target.value, cst.Name):
            return None
        if target.value.value in ("self", "cls"):
            owner = where
            while owner is not None and owner.class_name is None:
                owner = owner.parent
            if owner is not None:
                return self.function(f"{owner.class_name}.{target.attr.value}")
            return None
        if where is not None and where.binds(target.value.value):
            return None
        return self.function(f"{target.value.value}.{target.attr.value}")
