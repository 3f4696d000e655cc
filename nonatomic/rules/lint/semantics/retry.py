"""Retry scopes: which code runs again after a failure, and under which construct.

`RetryProvider` gives the `Module` node a `ModuleModel`: every call with the
loop scopes around it, every function with its decorator and retry-policy
scopes, the retry helpers of the module, and the list of what each scope
retries (`ModuleModel.retried`).  Constructs come from `retry.yaml`: library
decorators and `Retrying` loops, LangChain `.with_retry()`, LangGraph retry
policies, hand-written loops (see `loops`), and the module's own retry helpers
(a function that calls its callable parameter inside a retry scope).

The provider extends `CalleeProvider` so that it resolves names in the same
traversal (a dependent provider would cost one more pass over the tree); its
per-call values are the callees, its analysis is the value of the Module node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import libcst as cst

from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name, source
from nonatomic.rules.lint.semantics.confidence import test_module
from nonatomic.rules.lint.semantics.loops import names_in, retry_loop
from nonatomic.rules.lint.semantics.model import (
    CallSite,
    FunctionFacts,
    ModuleModel,
    Retried,
    RetryScope,
)
from nonatomic.rules.lint.semantics.names import named_like_retry
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.semantics.tool_config import tool_pack


@dataclass(frozen=True, eq=False)
class Construct:
    names: tuple[str, ...]
    library: str | None
    forms: tuple[str, ...]
    roles: dict[str, Any]
    callable: int | None = None
    # A framework construct (a task queue, a workflow engine, an agent framework, a
    # transport): the keys `retry.yaml` documents above its entries.
    label: str | None = None
    entry: dict[str, Any] = field(default_factory=dict)

    def config(self, call: cst.Call | None, roles: dict[str, Any] | None = None) -> dict[str, cst.Arg]:
        """role -> the argument of `call` that sets it."""
        if call is None:
            return {}
        found = {}
        for role, where in (self.roles if roles is None else roles).items():
            keywords = tuple(where.get("keywords", ()))
            arg = calls.argument(call, keywords, where.get("position"))
            for holder in where.get("in", ()) if arg is None else ():
                arg = _dict_entry(call, holder, keywords)  # `retry_kwargs={"max_retries": 5}`
            if arg is not None:
                found[role] = arg
        return found

    @property
    def all_roles(self) -> dict[str, Any]:
        return {**self.roles, **self.entry.get("policy", {}).get("roles", {})}

    def settings(
        self,
        call: cst.Call | None,
        callee_of: Callable[[cst.Call], str | None],
        values_of: Callable[[cst.BaseExpression], list[cst.BaseExpression]] = lambda expr: [expr],
    ) -> dict[str, cst.Arg] | None:
        """The settings a framework construct applied by `call` retries with, or None when
        it does not retry (`when` not given, `disabled_by` off, a required policy missing).
        `values_of`: what a name is bound to (a policy built once: `RETRY = RetryPolicy(...)`)."""
        entry = self.entry
        if call is not None and calls.has_star_kwargs(call) and (entry.get("when") or entry.get("policy")):
            return None  # `**options` may or may not switch the retry on: silent

        def given(name: str) -> cst.Arg | None:
            return calls.keyword(call, name) if call is not None else None

        if entry.get("when") and not any(_on(given(name)) for name in entry["when"]):
            return None
        if call is not None and _disabled(call, entry.get("disabled_by", {})):
            return None
        config = self.config(call)
        policy = entry.get("policy")
        if policy is not None:
            arg = next((a for name in policy["keywords"] if (a := given(name)) is not None), None)
            bound = values_of(arg.value) if arg is not None and isinstance(arg.value, cst.Name) else []
            value = bound[0] if len(bound) == 1 else arg.value if arg is not None else None
            if value is None or calls.is_none(value):
                if policy.get("required"):
                    return None
            elif isinstance(value, cst.Call) and callee_of(value) in policy["names"]:
                if _disabled(value, policy.get("disabled_by", {})):
                    return None
                config.update(self.config(value, policy["roles"]))
            elif isinstance(value, cst.Call) and policy.get("required"):
                return None  # some other object under that keyword
            else:
                config["opaque"] = arg  # a policy out of sight (a parameter, an attribute): unknown
        return config

    def scope_label(self, name: str | None, prefix: str = "") -> str:
        return self.label if "`" in (self.label or "") else f"{self.label} `{prefix}{name}`"


def _inferred(config: dict[str, cst.Arg], name: str | None, construct: Construct) -> None:
    """A construct known by its last name and a keyword only (`@app.task(retries=3)` of an
    app built elsewhere): its settings are read, its defaults are not assumed."""
    if name not in construct.names:
        config["inferred"] = cst.Arg(cst.Name("True"))


def _disabled(call: cst.Call, disabled_by: dict[str, list[Any]]) -> bool:
    """A keyword of `call` given a literal that switches the retries off (`max_retries=0`)."""
    for name, values in disabled_by.items():
        arg = calls.keyword(call, name)
        if arg is not None and source(arg.value) in {str(value) for value in values}:
            return True
    return False


def _on(arg: cst.Arg | None) -> bool:
    """A keyword given a value that switches something on (not 0, None, False or empty)."""
    if arg is None:
        return False
    value = arg.value
    if calls.is_none(value) or calls.is_false(value):
        return False
    return not (isinstance(value, (cst.Tuple, cst.List)) and not value.elements)


def _dict_entry(call: cst.Call, holder: str, keys: tuple[str, ...]) -> cst.Arg | None:
    arg = calls.keyword(call, holder)
    if arg is None or not isinstance(arg.value, cst.Dict):
        return None
    for element in arg.value.elements:
        if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
            if element.key.evaluated_value in keys:
                return cst.Arg(value=element.value, keyword=cst.Name(str(element.key.evaluated_value)))
    return None


@lru_cache(maxsize=None)
def constructs() -> dict[str, Construct]:
    """Dotted name -> library retry construct."""
    by_name = {}
    for entry in load_pack("retry")["constructs"]:
        construct = Construct(
            tuple(entry["names"]), entry.get("library"), tuple(entry["forms"]), entry.get("roles", {}),
            entry.get("callable"), entry.get("label"), entry,
        )
        for name in construct.names:
            by_name[name] = construct
    return by_name


@lru_cache(maxsize=None)
def _by_keyword() -> dict[str, list[Construct]]:
    """Last name -> the constructs matched by it when one of their `by_keyword` keywords is given."""
    found: dict[str, list[Construct]] = {}
    for construct in dict.fromkeys(constructs().values()):
        if construct.entry.get("by_keyword"):
            for last in dict.fromkeys(_last(name) for name in construct.names):
                found.setdefault(last, []).append(construct)
    return found


def construct_of(name: str | None, call: cst.Call | None) -> Construct | None:
    """The construct a callee names: by its resolved name, or, for an object of the
    framework built elsewhere (`@app.task(autoretry_for=...)`), by its last name and keyword."""
    found = constructs().get(name or "")
    if found is not None or call is None or not isinstance(call.func, cst.Attribute):
        return found
    for construct in _by_keyword().get(call.func.attr.value, ()):
        if any(calls.keyword(call, keyword) is not None for keyword in construct.entry["by_keyword"]):
            return construct
    return None


@lru_cache(maxsize=None)
def _pack() -> dict[str, Any]:
    return load_pack("retry")


def _policy_construct() -> Construct:
    policy = _pack()["retry_policy"]
    return Construct((), "langgraph", ("decorator",), policy["roles"])


def _with_retry_construct() -> Construct:
    return Construct((), "langchain", ("with_retry",), _pack()["with_retry"]["roles"])


def _last(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


def _unwrap(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.expression if isinstance(expr, cst.Await) else expr


@dataclass(eq=False)
class _Helper:
    facts: FunctionFacts
    param: int | None  # position of the retried callable, when callers pass it
    scope: RetryScope  # the scope inside the helper that retries the callable


class RetryProvider(CalleeProvider):
    def __init__(self) -> None:
        super().__init__()
        self.model = ModuleModel()
        self._stack: list[FunctionFacts | str] = []  # enclosing functions and class names
        self._frames: list[list[RetryScope]] = [[]]  # loop scopes open in each function
        self._loops: dict[cst.CSTNode, RetryScope] = {}
        self._class_info: dict[str, tuple[list[str], str | None]] = {}  # bases, `name = "..."`
        self._param_calls: list[tuple[FunctionFacts, str, CallSite]] = []
        self._only: dict[RetryScope, frozenset[cst.Call]] = {}  # see `LoopShape.retried`
        self._defined: dict[cst.FunctionDef, FunctionFacts] = {}
        self._raised: set[int] = set()  # calls that build the exception of a `raise`
        self._targets: dict[int, cst.BaseExpression] = {}  # a call -> the name it is assigned to

    # -- where we are ------------------------------------------------------------
    def _function(self) -> FunctionFacts | None:
        for entry in reversed(self._stack):
            if isinstance(entry, FunctionFacts):
                return entry
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        bases = [_last(dotted_name(arg.value)) for arg in node.bases]
        self._class_info[node.name.value] = (bases, _class_tool_name(node))
        self._stack.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._stack.pop()
        super().leave_ClassDef(original_node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # Decorators are resolved where they are written, before the parameters shadow names.
        decorators = [
            (self.qualify(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator), d)
            for d in node.decorators
        ]
        super().visit_FunctionDef(node)
        owner = self._stack[-1] if self._stack else None
        class_name = owner if isinstance(owner, str) else None
        facts = FunctionFacts(node, node.name.value, class_name, self._function(), _params(node.params), decorators)
        facts.tool_name = self._tool_name(facts)
        key = f"{class_name}.{facts.name}" if class_name else facts.name
        self.model.functions.setdefault(key, []).append(facts)
        self._defined[node] = facts

    # The body, not the decorators: a decorator's calls run once, outside the function.
    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self._enter(self._defined.pop(node))

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self._leave()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._enter(FunctionFacts(node, "", None, self._function(), _params(node.params)))

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._leave()

    def _enter(self, facts: FunctionFacts) -> None:
        self._stack.append(facts)
        self._frames.append([])

    def _leave(self) -> None:
        self._stack.pop()
        self._frames.pop()

    def _tool_name(self, facts: FunctionFacts) -> str | None:
        pack = tool_pack()
        for name, decorator in facts.decorators:
            given = decorator.decorator
            func = given.func if isinstance(given, cst.Call) else given
            method = func.attr.value if isinstance(func, cst.Attribute) else None
            if (name or dotted_name(func) or "").split(".", 1)[0] in pack["tool_decorators_not_from"]:
                continue
            if _last(name) in pack["tool_decorators"] or method in pack["tool_decorator_methods"]:
                if isinstance(given, cst.Call):
                    facts.hints = _hints(given, pack["tool_annotations"])
                named = calls.argument(given, ("name",), 0) if isinstance(given, cst.Call) else None
                if named is not None and isinstance(named.value, cst.SimpleString):
                    return named.value.evaluated_value  # `@tool("refund_payment")`, `@mcp.tool(name=...)`
                return facts.name
        if facts.class_name and facts.name in pack["tool_methods"]:
            bases, declared = self._class_info.get(facts.class_name, ([], None))
            if set(bases) & set(pack["tool_base_classes"]):
                return declared or facts.class_name
        return None

    # -- loops ---------------------------------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        attempts = self._attempts_construct(node.iter)
        if attempts is not None:
            construct, call = attempts
            named = self.qualify(call.func) if call is not None else None  # `AsyncRetrying`, not the pack's first name
            scope = RetryScope(
                "attempts", f"{construct.library} `{_last(named or construct.names[0])}` loop", node,
                construct.library, construct.config(call),
            )
            self._open(node, scope)
            return
        self._open_loop(node, f"`for {dotted_name(node.target) or '...'} in ...` retry loop")

    def visit_While(self, node: cst.While) -> None:
        test = "True" if isinstance(node.test, cst.Name) and node.test.value == "True" else "..."
        self._open_loop(node, f"`while {test}` retry loop")

    def leave_For(self, original_node: cst.For) -> None:
        self._close(original_node)

    def leave_While(self, original_node: cst.While) -> None:
        self._close(original_node)

    def _attempts_construct(self, iterable: cst.BaseExpression) -> tuple[Construct, cst.Call | None] | None:
        candidates: list[cst.BaseExpression] = [iterable]
        function = self._function()
        if isinstance(iterable, cst.Name) and function is not None:
            candidates = function.values_of(iterable.value)  # `retryer = Retrying(...)`
        for expr in candidates:
            expr = _unwrap(expr)
            if isinstance(expr, cst.Call):
                construct = constructs().get(self.qualify(expr.func) or "")
                if construct is not None and "loop" in construct.forms:
                    return construct, expr
        return None

    def _open_loop(self, node: cst.For | cst.While, label: str) -> None:
        shape = retry_loop(node, is_counter=self._is_counter, is_sleep=self._is_sleep)
        if shape is None:
            return
        scope = RetryScope("loop", label, node, None, {}, shape.caught, shape.sleeps, shape.bound,
                           refused_on=shape.refused_on)
        self._open(node, scope)
        self._only[scope] = shape.retried

    def _open(self, node: cst.CSTNode, scope: RetryScope) -> None:
        self._loops[node] = scope
        self._frames[-1].insert(0, scope)
        self.model.scopes.append(scope)

    def _close(self, node: cst.CSTNode) -> None:
        scope = self._loops.pop(node, None)
        if scope is not None:
            self._frames[-1].remove(scope)

    def _is_counter(self, iterable: cst.BaseExpression) -> bool:
        if not isinstance(iterable, cst.Call):
            return False
        if (self.qualify(iterable.func) or "") not in _pack()["counters"]:
            return False
        return "len" not in {name for arg in iterable.args for name in names_in(arg.value)}

    def _is_sleep(self, call: cst.Call) -> bool:
        name = self.qualify(call.func) or dotted_name(call.func) or ""
        return name in _pack()["sleeps"] or _last(name) == "sleep"

    # -- calls and bindings ------------------------------------------------------------
    def visit_Raise(self, node: cst.Raise) -> None:
        if isinstance(node.exc, cst.Call):
            self._raised.add(id(node.exc))

    def leave_Call(self, original_node: cst.Call) -> None:
        super().leave_Call(original_node)
        function = self._function()
        frames = tuple(
            scope for scope in self._frames[-1] if scope not in self._only or original_node in self._only[scope]
        )
        site = CallSite(original_node, self.qualify(original_node.func), dotted_name(original_node.func), function, frames)
        self.model.sites.append(site)
        if function is None:
            return
        function.sites.append(site)
        func = original_node.func
        if isinstance(func, cst.Name):
            owner = function
            while owner is not None and func.value not in owner.param_names:
                owner = owner.parent
            if owner is not None:
                self._param_calls.append((owner, func.value, site))
        elif isinstance(func, cst.Attribute) and func.attr.value in ("update", "setdefault"):
            target = func.value
            if isinstance(target, cst.Name):
                items = function.item_keys.setdefault(target.value, [])
                for arg in original_node.args:
                    if arg.keyword is not None:
                        items.append((arg.keyword.value, arg.value))
                    elif isinstance(arg.value, cst.Dict):
                        items += _dict_items(arg.value)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        super().leave_Assign(original_node)
        for target in original_node.targets:
            self._bound(target.target, original_node.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        super().leave_AnnAssign(original_node)
        if original_node.value is not None:
            self._bound(original_node.target, original_node.value)

    def _bound(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(value, cst.Call):
            self._targets[id(value)] = target
        function = self._function()
        if function is not None:
            self._record_binding(function, target, value)
        elif isinstance(target, cst.Name):
            self.model.assigned.setdefault(target.value, []).append(value)

    @staticmethod
    def _record_binding(function: FunctionFacts, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            function.assigned.setdefault(target.value, []).append(value)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.slice:
            index = target.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                key = index.value.evaluated_value
                if isinstance(key, str):
                    function.item_keys.setdefault(target.value.value, []).append((key, value))

    # -- the module, once it is all seen ------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        _Resolver(self.model, self._param_calls, self._raised, self._targets).run()
        if test_module(original_node):
            for scope in self.model.scopes:
                while scope is not None:
                    scope.in_tests = True
                    scope = scope.inner
        self.set_metadata(original_node, self.model)


class _Resolver:
    """Turns what the traversal saw into scopes and retried things (order matters:
    decorator and policy scopes first, then helpers, which may use them)."""

    def __init__(self, model: ModuleModel, param_calls: list[tuple[FunctionFacts, str, CallSite]],
                 raised: set[int], targets: dict[int, cst.BaseExpression]) -> None:
        self.model = model
        self.param_calls = param_calls
        self.raised = raised
        self.targets = targets
        self.helpers: dict[int, _Helper] = {}  # id(FunctionFacts) -> helper
        self.site_of = {id(site.node): site for site in model.sites}
        self.index = {  # a call's place among its function's calls (raise scopes)
            id(site.node): i for group in model.functions.values() for f in group for i, site in enumerate(f.sites)
        }
        self.transported: list[tuple[tuple, RetryScope, frozenset[str] | None]] = []

    def _callee(self, call: cst.Call) -> str | None:
        site = self.site_of.get(id(call))
        return site.callee if site is not None else None

    def run(self) -> None:
        all_functions = [f for group in self.model.functions.values() for f in group]
        for facts in all_functions:
            self._library_decorators(facts)
        self._callers_decide()
        self._raises()
        self._wrapped_tools()
        self._policies()
        self._transports()
        for _ in range(4):  # helpers built on helpers; a few rounds reach a fixed point
            changed = self._find_helpers()
            for facts in all_functions:
                changed |= self._helper_decorators(facts)
            if not changed:
                break
        self._retried()

    # -- scopes on functions ----------------------------------------------------------------
    def _add(self, facts: FunctionFacts, scope: RetryScope) -> None:
        facts.scopes.append(scope)
        self.model.scopes.append(scope)

    def _library_decorators(self, facts: FunctionFacts) -> None:
        policy = _pack()["retry_policy"]
        for name, decorator in facts.decorators:
            call = decorator.decorator if isinstance(decorator.decorator, cst.Call) else None
            construct = construct_of(name, call)
            if construct is not None and construct.label is not None:
                config = (
                    construct.settings(call, self._callee, lambda expr: self._values(expr, facts.parent))
                    if "decorator" in construct.forms else None
                )
                if config is not None:
                    _inferred(config, name, construct)
                    shown = dotted_name(call.func if call is not None else decorator.decorator) or name
                    scope = RetryScope("decorator", construct.scope_label(shown, "@"), decorator, construct.library,
                                       config, construct=construct)
                    self._add(facts, scope)
                elif construct.entry.get("method_raises"):
                    self._method_raises(facts, construct, call)
            elif construct is not None and "decorator" in construct.forms:
                label = f"{construct.library} `@{_last(name)}`"
                self._add(facts, RetryScope("decorator", label, decorator, construct.library, construct.config(call)))
            elif name in policy["decorators"] and call is not None and _retry_policy_arg(call):
                self._add(facts, self._policy_scope(decorator, f"`@{_last(name)}`", _retry_policy_arg(call)))
            elif (
                construct is None
                and name is not None
                and "." in name
                and named_like_retry(name)
                and self.model.function(name) is None
            ):
                # An imported retry decorator of a library (or package) the pack does not know.
                self._add(facts, RetryScope("decorator", f"`@{_last(name)}`", decorator, by_name=True))

    def _callers_decide(self) -> None:
        """A construct whose policy is the caller's (`@activity.defn`): when the module
        itself runs the function (`workflow.execute_activity(send, ...)`), the policy given
        there decides, and a call that retries is reported there; the definition's scope,
        the server's default, is for functions run from elsewhere."""
        for site in self.model.sites:
            construct = construct_of(site.callee, site.node)
            if construct is None or "helper" not in construct.forms or construct.library is None:
                continue
            target = _callable_arg(site.node, construct.callable)
            facts = self.model.target_function(target, site.function) if target is not None else None
            if facts is None:
                continue
            for scope in list(facts.scopes):
                if scope.policy_elsewhere and scope.library == construct.library:
                    facts.scopes.remove(scope)
                    self.model.scopes.remove(scope)

    def _wrapped_tools(self) -> None:
        """Functions made tools by a call: `FunctionTool(send_invoice)`,
        `FunctionTool.from_defaults(fn=refund)`, `Agent(tools=[refund, lookup])`."""
        pack = tool_pack()
        wrappers = pack["tool_wrappers"]
        for site in self.model.sites:
            found: list[tuple[cst.BaseExpression, cst.Call]] = []
            if site.method in wrappers["names"]:
                arg = calls.argument(site.node, tuple(wrappers["keywords"]), wrappers["position"])
                if arg is not None:
                    found.append((arg.value, site.node))
            listed = calls.keyword(site.node, *pack["tool_lists"])
            if listed is not None and isinstance(listed.value, (cst.List, cst.Tuple)):
                found += [(element.value, None) for element in listed.value.elements]
            for target, wrapper in found:
                facts = self.model.target_function(target, site.function)
                if facts is None or facts.tool_name:
                    continue
                named = calls.keyword(wrapper, wrappers["name_keyword"]) if wrapper is not None else None
                given = named.value.evaluated_value if named and isinstance(named.value, cst.SimpleString) else None
                facts.tool_name = given if isinstance(given, str) else facts.name

    def _method_raises(self, facts: FunctionFacts, construct: Construct, call: cst.Call | None) -> None:
        """Celery's `bind=True` task that calls `self.retry(exc=..., countdown=...)`: what ran
        before the call runs again, with the decorator's settings under the call's."""
        bound = facts.param_names[:1]
        for site in facts.sites:
            func = site.node.func
            if (
                isinstance(func, cst.Attribute) and func.attr.value in construct.entry["method_raises"]
                and isinstance(func.value, cst.Name) and [func.value.value] == bound
            ):
                config = {**construct.config(call), **construct.config(site.node)}
                self._raise_scope(facts, site, construct, config, f"{construct.label} `{source(func)}(...)`")

    def _raises(self) -> None:
        """`raise ModelRetry(...)`, `raise Retry(defer=...)`: the framework runs the function again."""
        for site in self.model.sites:
            if id(site.node) not in self.raised or site.function is None:
                continue
            construct = constructs().get(site.callee or "")
            if construct is not None and "raise" in construct.forms:
                self._raise_scope(site.function, site, construct, construct.config(site.node), construct.label or "")

    def _raise_scope(self, facts: FunctionFacts, site: CallSite, construct: Construct,
                     config: dict[str, cst.Arg], label: str) -> None:
        upto = self.index.get(id(site.node))
        for scope in facts.scopes:
            if scope.construct is construct and scope.upto is not None:
                scope.upto = max(scope.upto, upto or 0)  # one scope per function: up to its last raise
                return
        self._add(facts, RetryScope("raise", label, site.node, construct.library, config, construct=construct,
                                    upto=upto))

    # -- transports ---------------------------------------------------------------------------
    def _holder(self, expr: cst.BaseExpression, where: FunctionFacts | None) -> tuple | None:
        """Who holds a client: `self.session` of a class, a local of a function, a module name."""
        name = dotted_name(expr)
        if name is None:
            return None
        root = name.split(".", 1)[0]
        if root in ("self", "cls"):
            owner = where
            while owner is not None and owner.class_name is None:
                owner = owner.parent
            return ("class", owner.class_name if owner else None, name)
        owner = where
        while owner is not None and root not in owner.assigned and root not in owner.param_names:
            owner = owner.parent
        return ("function", id(owner), name) if owner is not None else ("module", name)

    def _values(self, expr: cst.BaseExpression, where: FunctionFacts | None) -> list[cst.BaseExpression]:
        """`expr`, or what the name `expr` is bound to (here, or at module level)."""
        if not isinstance(expr, cst.Name):
            return [expr]
        if where is not None and where.binds(expr.value):
            return where.values_of(expr.value)
        return self.model.assigned.get(expr.value, [])

    def _transports(self) -> None:
        """Clients whose transport retries: a session with an adapter mounted whose urllib3
        `Retry` admits a write method, a Slack client given retry handlers."""
        for site in self.model.sites:
            for construct in _transport_constructs():
                spec = construct.entry["transport"]
                if site.method == spec.get("mount") and isinstance(site.node.func, cst.Attribute):
                    self._mounted(site, construct, spec)
                elif site.callee in spec.get("clients", ()):
                    self._handled(site, construct, spec)

    def _mounted(self, site: CallSite, construct: Construct, spec: dict[str, Any]) -> None:
        adapter_arg = calls.argument(site.node, ("adapter",), 1)
        if adapter_arg is None:
            return
        for adapter in self._values(adapter_arg.value, site.function):
            if not isinstance(adapter, cst.Call) or self._callee(adapter) not in spec["adapters"]:
                continue
            where = spec["adapter_keyword"]
            retry_arg = calls.argument(adapter, tuple(where["keywords"]), where.get("position"))
            for retry in self._values(retry_arg.value, site.function) if retry_arg is not None else ():
                if isinstance(retry, cst.Call) and self._callee(retry) in construct.names:
                    methods = _methods(retry, spec["methods"])
                    writes = set(spec["non_idempotent"]) if methods is None else methods & set(spec["non_idempotent"])
                    if writes:
                        holder = self._holder(site.node.func.value, site.function)
                        scope = RetryScope("transport", construct.label or "", retry, construct.library,
                                           construct.config(retry), construct=construct)
                        self.model.scopes.append(scope)
                        self.transported.append((holder, scope, frozenset(writes)))

    def _handled(self, site: CallSite, construct: Construct, spec: dict[str, Any]) -> None:
        target = self.targets.get(id(site.node))
        arg = calls.keyword(site.node, spec["handlers"])
        if target is None or arg is None or not isinstance(arg.value, (cst.List, cst.Tuple)):
            return
        for element in arg.value.elements:
            handler = element.value
            if isinstance(handler, cst.Call) and self._callee(handler) in construct.names:
                scope = RetryScope("transport", construct.label or "", handler, construct.library,
                                   construct.config(handler), construct=construct)
                self.model.scopes.append(scope)
                self.transported.append((self._holder(target, site.function), scope, None))
                return

    def _transport_scopes(self, site: CallSite) -> tuple[RetryScope, ...]:
        func = site.node.func
        if not self.transported or not isinstance(func, cst.Attribute):
            return ()
        holder = self._holder(func.value, site.function)
        method = _http_method(site)
        return tuple(
            scope for held, scope, methods in self.transported
            if held == holder and (methods is None or method in methods)
        )

    def _policy_scope(self, node: cst.CSTNode, where: str, arg: cst.Arg) -> RetryScope:
        config = {}
        if isinstance(arg.value, cst.Call):
            config = _policy_construct().config(arg.value)
        return RetryScope("retry_policy", f"LangGraph `RetryPolicy` on {where}", node, "langgraph", config)

    def _policies(self) -> None:
        """`builder.add_node("refund", refund_node, retry_policy=RetryPolicy(...))`."""
        for site in self.model.sites:
            if site.method not in _pack()["retry_policy"]["add_node"]:
                continue
            arg = _retry_policy_arg(site.node)
            if arg is None:
                continue
            plain = calls.positional(site.node)
            node_arg = plain[1] if len(plain) > 1 else (plain[0] if plain else None)
            if node_arg is None:
                continue
            target = node_arg.value
            where = f"node `{dotted_name(target) or 'lambda'}`"
            scope = self._policy_scope(site.node, where, arg)
            facts = self.model.target_function(target, site.function)
            if facts is not None:
                self._add(facts, scope)
            elif isinstance(target, cst.Call) and _last(dotted_name(target.func)) == "ToolNode" and target.args:
                tools = target.args[0].value
                if isinstance(tools, (cst.List, cst.Tuple)):
                    self.model.scopes.append(scope)
                    for element in tools.elements:
                        self._reference(element.value, site, scope)

    def _helper_decorators(self, facts: FunctionFacts) -> bool:
        changed = False
        known = {id(s.node) for s in facts.scopes}
        for name, decorator in facts.decorators:
            if id(decorator) in known or name is None:
                continue
            helper_facts = self.model.function(name)
            helper = self.helpers.get(id(helper_facts)) if helper_facts is not None else None
            if helper is None and named_like_retry(name) and "." not in name and helper_facts is None:
                self._add(facts, RetryScope("decorator", f"`@{name}`", decorator, by_name=True))
                changed = True
            elif helper is not None:
                label = f"retry decorator `@{name}`"
                self._add(facts, RetryScope("decorator", label, decorator, None, {}, inner=helper.scope))
                changed = True
        return changed

    # -- helpers ------------------------------------------------------------------------------
    def _find_helpers(self) -> bool:
        changed = False
        for owner, param, site in self.param_calls:
            scopes = self._scopes_of(site)
            if scopes:
                changed |= self._helper(owner, param, scopes[0])
        # A function that hands its callable parameter to a retry helper is one too.
        for site in self.model.sites:
            helper, position = self._helper_at(site)
            if helper is None or site.function is None:
                continue
            arg = _callable_arg(site.node, position)
            if isinstance(arg, cst.Name):
                owner = site.function
                while owner is not None and arg.value not in owner.param_names:
                    owner = owner.parent
                if owner is not None:
                    changed |= self._helper(owner, arg.value, helper)
        return changed

    def _helper(self, owner: FunctionFacts, param: str, scope: RetryScope) -> bool:
        top = owner
        while top.parent is not None:
            top = top.parent
        if id(top) in self.helpers or not top.name:
            return False
        position = owner.param_names.index(param) if top is owner else None
        if position is not None and owner.class_name and owner.param_names[:1] in (["self"], ["cls"]):
            if position == 0:
                # The method hands on its own receiver (`completion_with_retry(self, ...)`):
                # callers pass no callable, so the method is no retry helper.
                return False
            position -= 1
        self.helpers[id(top)] = _Helper(top, position, scope)
        return True

    def _helper_at(self, site: CallSite) -> tuple[RetryScope | None, int | None]:
        """The retry scope a call hands its callable argument to, and the argument's position."""
        construct = construct_of(site.callee, site.node)
        if construct is not None and construct.label is not None:
            config = (
                construct.settings(site.node, self._callee, lambda expr: self._values(expr, site.function))
                if "helper" in construct.forms else None
            )
            if config is None:
                return None, None
            _inferred(config, site.callee, construct)
            label = construct.scope_label(site.dotted or _last(site.callee))
            return RetryScope("helper", label, site.node, construct.library, config, construct=construct), \
                construct.callable
        if construct is not None and "helper" in construct.forms:
            return RetryScope("helper", f"`{_last(site.callee)}`", site.node, construct.library,
                              construct.config(site.node)), construct.callable
        facts = self.model.target_function(site.node.func, site.function)
        helper = self.helpers.get(id(facts)) if facts is not None else None
        if helper is not None and helper.param is not None:
            name = dotted_name(site.node.func) or helper.facts.name
            return RetryScope("helper", f"retry helper `{name}`", site.node, None, {}, inner=helper.scope), helper.param
        if facts is None and site.callee and named_like_retry(site.callee) and site.method != "with_retry":
            return RetryScope("helper", f"retry helper `{site.dotted or site.callee}`", site.node, by_name=True), 0
        return None, None

    def _scopes_of(self, site: CallSite) -> tuple[RetryScope, ...]:
        own = tuple(site.function.scopes) if site.function is not None else ()
        if any(scope.upto is not None for scope in own):
            at = self.index.get(id(site.node), 0)
            own = tuple(scope for scope in own if scope.upto is None or at < scope.upto)
        return site.frames + own

    # -- what is retried ----------------------------------------------------------------------
    def _retried(self) -> None:
        by_lambda: dict[int, list[CallSite]] = {}
        for site in self.model.sites:
            if site.function is not None and isinstance(site.function.node, cst.Lambda):
                by_lambda.setdefault(id(site.function.node), []).append(site)
        for site in self.model.sites:
            scopes = self._scopes_of(site) + self._transport_scopes(site)
            if scopes:
                self.model.retried.append(Retried(site.node, site.node.func, site.node, site, site.function, scopes))
            scope, position = self._helper_at(site)
            if scope is None:
                scope, position = self._wrapper_at(site)
            if scope is not None:
                self.model.scopes.append(scope)
                self._handed(site, _callable_arg(site.node, position), scope, by_lambda)
            elif (construct := constructs().get(site.callee or "")) is not None and "tools" in construct.forms:
                self._agent_tools(site, construct)
            elif site.method == _pack()["with_retry"]["method"] and isinstance(site.node.func, cst.Attribute):
                scope = RetryScope(
                    "with_retry", "LangChain `.with_retry()`", site.node, "langchain",
                    _with_retry_construct().config(site.node),
                )
                self.model.scopes.append(scope)
                self._reference(site.node.func.value, site, scope)

    def _agent_tools(self, site: CallSite, construct: Construct) -> None:
        """`Agent(tools=[send_invoice], retries=3)`: a failed run is run again, its tools too."""
        config = construct.settings(site.node, self._callee, lambda expr: self._values(expr, site.function))
        tools = calls.keyword(site.node, construct.entry["tools"])
        if config is None or tools is None or not isinstance(tools.value, (cst.List, cst.Tuple)):
            return
        scope = RetryScope("tools", construct.label or "", site.node, construct.library, config, construct=construct)
        self.model.scopes.append(scope)
        for element in tools.value.elements:
            self._reference(element.value, site, scope)

    def _wrapper_at(self, site: CallSite) -> tuple[RetryScope | None, int | None]:
        """`Retrying(...)(fn, *args)` and `retry(...)(fn)`: the first argument is retried."""
        func = site.node.func
        if not isinstance(func, cst.Call):
            return None, None
        inner = self.site_of.get(id(func))
        construct = constructs().get(inner.callee or "") if inner is not None else None
        if construct is None or "wrapper" not in construct.forms:
            return None, None
        label = f"{construct.library} `{_last(construct.names[0])}(...)(...)`"
        return RetryScope("wrapper", label, site.node, construct.library, construct.config(func)), 0

    def _handed(self, site: CallSite, arg: cst.BaseExpression | None, scope: RetryScope,
                by_lambda: dict[int, list[CallSite]]) -> None:
        if isinstance(arg, cst.Lambda):
            for inner in by_lambda.get(id(arg), []):
                self.model.retried.append(
                    Retried(inner.node, inner.node.func, inner.node, inner, inner.function, inner.frames + (scope,))
                )
        elif isinstance(arg, cst.Call) and _last(dotted_name(arg.func)) == "partial" and arg.args:
            self.model.retried.append(Retried(arg.args[0].value, arg.args[0].value, arg, None, site.function, (scope,)))
        elif arg is not None:
            self._reference(arg, site, scope)

    def _reference(self, target: cst.BaseExpression, site: CallSite, scope: RetryScope) -> None:
        if isinstance(target, (cst.Name, cst.Attribute)):
            self.model.retried.append(Retried(target, target, site.node, None, site.function, (scope,)))


@lru_cache(maxsize=None)
def _transport_constructs() -> tuple[Construct, ...]:
    return tuple(c for c in dict.fromkeys(constructs().values()) if "transport" in c.forms)


_HTTP_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "TRACE"})


def _methods(retry: cst.Call, where: dict[str, Any]) -> set[str] | None:
    """The HTTP methods a urllib3 `Retry` retries: None for every one (`allowed_methods=None`
    or `False`), an empty set when it cannot be read."""
    arg = calls.keyword(retry, *where["keywords"])
    if arg is None:
        return set(where["default"])
    if calls.is_none(arg.value) or calls.is_false(arg.value):
        return None
    found = set()
    for node in _strings(arg.value):
        value = node.evaluated_value
        if isinstance(value, str) and value.upper() in _HTTP_METHODS:
            found.add(value.upper())
    return found


def _strings(expr: cst.CSTNode) -> list[cst.SimpleString]:
    if isinstance(expr, cst.SimpleString):
        return [expr]
    return [s for child in expr.children for s in _strings(child)]


def _http_method(site: CallSite) -> str | None:
    """`session.post(...)` -> POST; `session.request("PATCH", ...)` -> PATCH."""
    method = (site.method or "").upper()
    if method in _HTTP_METHODS:
        return method
    if method == "REQUEST":
        arg = calls.argument(site.node, ("method",), 0)
        if arg is not None and isinstance(arg.value, cst.SimpleString):
            value = arg.value.evaluated_value
            return value.upper() if isinstance(value, str) else None
    return None


def _params(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _retry_policy_arg(call: cst.Call) -> cst.Arg | None:
    arg = calls.keyword(call, *_pack()["retry_policy"]["keywords"])
    return None if arg is None or calls.is_none(arg.value) else arg


def _callable_arg(call: cst.Call, position: int | None) -> cst.BaseExpression | None:
    plain = calls.positional(call)
    if position is not None and position < len(plain):
        return plain[position].value
    return None


def _dict_items(node: cst.Dict) -> list[tuple[str, cst.BaseExpression]]:
    items = []
    for element in node.elements:
        if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
            key = element.key.evaluated_value
            if isinstance(key, str):
                items.append((key, element.value))
    return items


def _hints(decorator: cst.Call, spec: dict[str, str]) -> dict[str, cst.BaseExpression]:
    """`annotations=ToolAnnotations(readOnlyHint=True)` or `annotations={"readOnlyHint": True}`."""
    arg = calls.keyword(decorator, spec["keyword"])
    if arg is None:
        return {}
    names = {spec["read_only"], spec["idempotent"], spec["destructive"]}
    value = arg.value
    if isinstance(value, cst.Call):
        return {a.keyword.value: a.value for a in value.args if a.keyword is not None and a.keyword.value in names}
    return {key: item for key, item in _dict_items(value) if key in names} if isinstance(value, cst.Dict) else {}


def _class_tool_name(node: cst.ClassDef) -> str | None:
    """A CrewAI-style tool's `name = "..."` (or `name: str = "..."`) class attribute."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            target = value = None
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign):
                target, value = small.target, small.value
            if isinstance(target, cst.Name) and target.value == "name" and isinstance(value, cst.SimpleString):
                evaluated = value.evaluated_value
                return evaluated if isinstance(evaluated, str) else None
    return None
