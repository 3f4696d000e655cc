from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import state
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name
from nonatomic.rules.lint.tree import walk

# Classes whose body attributes are not shared mutable state of instances.
_NOT_PLAIN_CLASSES = frozenset(
    {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "NamedTuple", "TypedDict", "type", "ABCMeta", "EnumMeta"}
)
# Bases that add nothing to how class attributes behave.
_NEUTRAL_BASES = frozenset({"object", "ABC", "Generic", "Protocol"})


@dataclass
class _Class:
    node: cst.ClassDef
    attributes: dict[str, tuple[str, cst.CSTNode]]  # name -> (container kind, defining statement)
    declared_shared: set[str] = field(default_factory=set)  # annotated `ClassVar[...]`
    shadowed: set[str] = field(default_factory=set)  # assigned through self: instance attributes
    mutations: list[tuple[cst.CSTNode, str, cst.FunctionDef]] = field(default_factory=list)
    registries: set[str] = field(default_factory=set)


class MutableClassState(state.ScopeTracker, LintRule):
    """
    ## What it does
    Flags a mutable container defined in a class body (`history = []`,
    `_cache = {}`, `seen = set()`, a `ClassVar[dict]`, ...) that a method
    mutates through `self` or `cls`: item assignment or deletion, augmented
    assignment, or a mutating method (`append`, `update`, `setdefault`, ...).

    ## Why is this bad?
    A class attribute is one object for the whole process: every instance,
    and so every request, agent run and user, appends to the same list.
    One real incident: an agent class declared `messages = []` in its body
    and called `self.messages.append(...)`; each new conversation started
    with every earlier user's messages in its prompt, and a retried tool call
    re-read arguments that belonged to someone else's run.

    Not reported:
    - an attribute the class also assigns through `self` (`self.items = []` in
      `__init__` gives each instance its own);
    - annotated fields of dataclasses, attrs, pydantic models and other
      classes with a base or decorator (`items: list[str] = []`): these
      libraries copy or forbid mutable defaults. In a class with no base, an
      annotated default is still a class attribute and is reported, and a
      `ClassVar` is reported in any class;
    - registries: an attribute a method stores given functions or classes
      into, or filled by `__init_subclass__`/`__set_name__` or by a
      classmethod decorator that hands back what it registers (these run
      once per class, at import time);
    - mutations inside `with <lock>:` (`with self._lock:`, `with cls._guard:`):
      deliberately shared state, serialised;
    - Enum, NamedTuple and TypedDict classes, and metaclasses;
    - `dataclasses.field(default_factory=list)` and `pydantic.Field(default_factory=...)`.

    Only classes indented by one level (module-level classes) are looked at,
    and only attributes defined in the class itself (not in a base class).

    ## Severity
    One finding per class attribute, at its first mutation, with the other
    sites as related locations; a warning when it holds per-request data (see
    NA301), `info` otherwise. Entries under their own keys that a method also
    takes out (`del cls._sessions[jid]` when the session closes) have a lifetime:
    `info`, as NA301 says of a global. An attribute annotated `ClassVar[...]` is
    declared shared on purpose, and so is the state of a singleton (a class whose
    `__new__` keeps its one instance): neither is reported unless it holds
    per-request data, and then a `ClassVar` is `info` (its entries still live as
    long as the process).

    ## Example
    ```python
    class SupportAgent:
        messages = []

        def ask(self, text):
            self.messages.append({"role": "user", "content": text})
            return self.llm.invoke(self.messages)
    ```

    ## Use instead
    ```python
    class SupportAgent:
        def __init__(self):
            self.messages = []

        def ask(self, text):
            self.messages.append({"role": "user", "content": text})
            return self.llm.invoke(self.messages)
    ```
    or a dataclass field with `field(default_factory=list)`.
    """

    code = "NA302"
    METADATA_DEPENDENCIES = (CalleeProvider,)

    VALID = [
        # Assigned per instance in __init__: the class attribute is only a default.
        """
            class Agent:
                history = []
                def __init__(self):
                    self.history = []
                def ask(self, m):
                    self.history.append(m)
            """,
        """
            class Agent:
                history = []
                def reset(self):
                    self.history = []
                def ask(self, m):
                    self.history.append(m)
            """,
        # Read only.
        """
            class Router:
                ROUTES = {'a': 1}
                def route(self, k):
                    return self.ROUTES.get(k)
            """,
        # Immutable class attributes.
        """
            class Agent:
                tools = ('search',)
                count = 0
                def f(self):
                    self.count += 1
            """,
        # Dataclass and pydantic fields are per instance.
        """
            from dataclasses import dataclass, field
            @dataclass
            class Run:
                steps: list = field(default_factory=list)
                def add(self, s):
                    self.steps.append(s)
            """,
        """
            from pydantic import BaseModel
            class Run(BaseModel):
                steps: list[str] = []
                def add(self, s):
                    self.steps.append(s)
            """,
        # Registries filled once per class at import time.
        """
            class Tool:
                registry = {}
                def __init_subclass__(cls, **kw):
                    super().__init_subclass__(**kw)
                    cls.registry[cls.__name__] = cls
            """,
        """
            class Hooks:
                _hooks = []
                @classmethod
                def hook(cls, fn):
                    cls._hooks.append(fn)
                    return fn
                @classmethod
                def clear(cls):
                    cls._hooks.clear()
            """,
        # Enum, NamedTuple: not instance state.
        """
            import enum
            class Color(enum.Enum):
                RED = [1]
                def f(self):
                    self.value.append(2)
            """,
        """
            from typing import NamedTuple
            class P(NamedTuple):
                xs: list = []
                def f(self):
                    self.xs.append(1)
            """,
        # Mutating a local or another object.
        """
            class A:
                items = []
                def f(self, other):
                    items = []
                    items.append(1)
                    other.items.append(1)
            """,
        # A static method has no self.
        """
            class A:
                items = []
                @staticmethod
                def f(self):
                    self.items.append(1)
            """,
        # Mutation in the class body runs once, at import time.
        """
            class A:
                items = []
                items.append(1)
                def f(self):
                    return self.items
            """,
        # Deliberately shared and serialised by a lock.
        """
            import threading
            from typing import ClassVar
            class Session:
                _locks: ClassVar[dict] = {}
                _guard = threading.Lock()
                @classmethod
                def lock_for(cls, path):
                    with cls._guard:
                        cls._locks.setdefault(path, threading.RLock())
            """,
        # Set through object.__setattr__ (frozen dataclasses) or setattr.
        """
            class A:
                items = []
                def __init__(self):
                    object.__setattr__(self, 'items', [])
                def f(self):
                    self.items.append(1)
            """,
        # A registry filled by a nested decorator factory: `_register()` returns `_inner(fun)`.
        """

            class Panel:
                data = {}
                meta = {}

                @classmethod
                def _register(cls, name=None, alias=None):
                    def _inner(fun):
                        control_name = name or fun.__name__
                        cls.data[control_name] = fun
                        cls.meta[control_name] = (alias, fun.__doc__)
                        if alias:
                            cls.data[alias] = fun
                        return fun
                    return _inner
            """,
        # A process-wide memo declared `ClassVar`, keyed by server: shared on purpose.
        """
            from typing import ClassVar
            class Client:
                _versions: ClassVar[dict[str, str]] = {}
                def version(self):
                    if self.base_url not in self._versions:
                        self._versions[self.base_url] = self._fetch_version()
                    return self._versions[self.base_url]
            """,
        # A singleton (`__new__` keeps its one instance): its class attributes are that instance's.
        """
            class ConfigurationManager:
                _instance = None
                _configs = {}
                def __new__(cls):
                    if cls._instance is None:
                        cls._instance = super().__new__(cls)
                    return cls._instance
                def register(self, name, config):
                    self._configs[name] = config
            """,
    ]
    INVALID = [
        Invalid("""
                class Agent:
                    messages = []
                    def ask(self, m):
                        self.messages.append(m)
                """, line=4),
        Invalid("""
                class Cache:
                    _store = {}
                    def put(self, k, v):
                        self._store[k] = v
                """, line=4, severity="info"),
        Invalid("""
                class Cache:
                    _store = dict()
                    def drop(self, k):
                        del self._store[k]
                """, line=4, severity="info"),
        Invalid("""
                class A:
                    items = []
                    def f(self):
                        self.items += [1]
                """, line=4, severity="info"),
        Invalid("""
                class A:
                    seen = set()
                    @classmethod
                    def mark(cls, k):
                        cls.seen.add(k)
                """, line=5, severity="info"),
        # Declared shared, but keyed by session: its entries live as long as the process.
        Invalid(
            """
                from typing import ClassVar
                class A:
                    runs: ClassVar[dict] = {}
                    def f(self, session_id, r):
                        self.runs[session_id] = r
                """,
            line=5, severity="info"),
        # A singleton's state holding per-request data: one instance serves every request.
        Invalid("""
                class Store:
                    _instance = None
                    history = []
                    def __new__(cls):
                        if cls._instance is None:
                            cls._instance = super().__new__(cls)
                        return cls._instance
                    def add(self, message):
                        self.history.append(message)
                """, line=9),
        # No base class: an annotated default is a plain class attribute.
        Invalid("""
                class A:
                    items: list[str] = []
                    def f(self):
                        self.items.append('x')
                """, line=4, severity="info"),
        # An unannotated attribute of a dataclass is not a field.
        Invalid(
            """
                from dataclasses import dataclass
                @dataclass
                class A:
                    x: int = 0
                    log = []
                    def f(self):
                        self.log.append(self.x)
                """,
            line=7, severity="info"),
        Invalid(
            """
                from collections import defaultdict
                class A:
                    calls = defaultdict(list)
                    def f(self, u):
                        self.calls[u].append(1)
                """,
            line=5, severity="info"),
        # Inside a closure of a method: still the shared object.
        Invalid(
            """
                class A:
                    results = []
                    def run(self):
                        def done(r):
                            self.results.append(r)
                        return done
                """,
            line=5, severity="info"),
        # Stored per-request values, not registered callables.
        Invalid("""
                class A:
                    _by_run = {}
                    def register(self, run_id, result):
                        self._by_run[run_id] = result
                """, line=4, severity="info"),
        # Keyed by session: every instance, so every user's session, shares one dict.
        Invalid("""
                class BrowserPool:
                    _sessions = {}

                    def attach(self, session_id, browser):
                        self._sessions[session_id] = browser
                """, line=5),
        # A registry of open sessions, one entry per account, taken out when its session
        # closes: the entries have a lifetime and do not mix (info, as NA301 says of a global).
        Invalid("""
                class Remote:
                    _sessions = dict()

                    @classmethod
                    async def new_session_with_client(cls, client):
                        if client.jid in cls._sessions:
                            raise RuntimeError("a session is open for this account")
                        cls._sessions[client.jid] = client

                        def on_close():
                            del cls._sessions[client.jid]

                        return Session(client, on_close)
                """, line=8, severity="info"),
        # The same store declared `ClassVar` and documented as shared: sharing is intended
        # (the annotation says so), still reported, at info (entries outlive their run).
        Invalid("""
                from typing import ClassVar

                class BrowserPool:
                    # One pool for the process, shared by every agent run, keyed by session id.
                    _shared_sessions: ClassVar[dict[str, object]] = {}

                    def attach(self, session_id, browser):
                        self._shared_sessions[session_id] = browser

                    @classmethod
                    def reset(cls):
                        cls._shared_sessions.clear()
                """, line=8, severity="info"),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        self._classes: list[_Class] = []

    def _callee(self, call: cst.Call) -> str | None:
        return self.get_metadata(CalleeProvider, call, None)

    # -- classes ------------------------------------------------------------
    def visit_ClassDef_body(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef_body(node)
        attributes, declared_shared = self._attributes(node)
        self._classes.append(_Class(node, attributes, declared_shared))

    def leave_ClassDef_body(self, node: cst.ClassDef) -> None:
        super().leave_ClassDef_body(node)
        info = self._classes.pop()
        # One finding per attribute, at its first mutation; the others are related locations.
        sites: dict[str, list[tuple[cst.CSTNode, cst.FunctionDef]]] = {}
        for mutation, name, method in info.mutations:
            if name in info.shadowed or name in info.registries or state.shared_on_purpose(method):
                continue
            if not state.once_flag(name):
                sites.setdefault(name, []).append((mutation, method))
        self.place(
            node for name, found in sites.items() for node in (*(site[0] for site in found), info.attributes[name][1])
        )
        for name, found in sites.items():
            found.sort(key=lambda site: self.line_of(site[0]))
            mutation, method = found[0]
            kind, statement = info.attributes[name]
            line = self.line_of(statement)
            keys = {key for site in found for key in _key_names(site[0])}
            request = state.named_for_request_data(name) or state.holds_request_data(keys)
            shared = name in info.declared_shared
            if (shared or _singleton(node)) and not request:
                continue  # declared shared (`ClassVar`), or the one instance's own: a process-wide memo
            # Entries under their own keys (`cls._sessions[jid] = client`) that a method also
            # takes out (`del cls._sessions[jid]` when the session closes) have a lifetime (NA301's).
            ended = any(state.keys_given(site[0], _of_self(name, _self_name(site[1])), kind) for site in found) \
                and any(state.removes(site[0]) for site in found)
            self.report(
                mutation,
                f"`{node.name.value}.{method.name.value}()` mutates class-level {kind} `{name}` "
                f"(defined at line {line}) through `{_self_name(method)}`: one object shared by every "
                f"instance, so every request and run sees it; give each instance its own "
                f"(`self.{name} = ...` in `__init__`, or `field(default_factory=...)`)"
                + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
                + ("; it is declared `ClassVar`, shared on purpose: remove each entry when its run ends"
                   if shared else ""),
                severity=None if request and not shared and not ended else "info",
                related=tuple(site[0] for site in found[1:]),
            )

    def _attributes(self, node: cst.ClassDef) -> tuple[dict[str, tuple[str, cst.CSTNode]], set[str]]:
        """The class's mutable attributes, and those of them declared `ClassVar`."""
        bases = [_base_name(arg.value) for arg in node.bases]
        if any(base in _NOT_PLAIN_CLASSES for base in bases):
            return {}, set()
        plain = not node.decorators and all(base in _NEUTRAL_BASES for base in bases)
        found: dict[str, tuple[str, cst.CSTNode]] = {}
        declared: set[str] = set()
        for name, value, annotation, statement in state.scope_names(node).assignments:
            if value is None or name in found:
                continue
            classvar = annotation is not None and "ClassVar" in state.code_of(annotation.annotation)
            if annotation is not None and not plain and not classvar:
                continue  # a field declaration: the class's library gives each instance its own
            kind = state.container_kind(value, self._callee)
            if kind is not None:
                found[name] = (kind, statement)
                if classvar:
                    declared.add(name)
        return found, declared

    # -- methods ------------------------------------------------------------
    def _method(self) -> tuple[_Class, cst.FunctionDef, str] | None:
        """The innermost class, the method of it we are in, and that method's `self` name."""
        if not self._classes:
            return None
        index = self.scopes.index(self._classes[-1].node)
        if index + 1 >= len(self.scopes):
            return None
        method = self.scopes[index + 1]
        if not isinstance(method, cst.FunctionDef):
            return None
        name = _self_name(method)
        return (self._classes[-1], method, name) if name else None

    def _attribute_of_self(self, expr: cst.BaseExpression, self_name: str) -> str | None:
        if (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and expr.value.value == self_name
        ):
            return expr.attr.value
        return None

    # -- assignments through self, and mutations -----------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._shadow(target.target)
            for container in state.stored_containers(target.target):
                self._mutation(node, container)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._shadow(node.target)
        for container in state.stored_containers(node.target):
            self._mutation(node, container)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        # `self.items += [x]` extends a shared list in place before binding it to the instance.
        self._mutation(node, node.target)
        for container in state.stored_containers(node.target):
            self._mutation(node, container)

    def visit_Del(self, node: cst.Del) -> None:
        for container in state.stored_containers(node.target):
            self._mutation(node, container)

    def visit_Call(self, node: cst.Call) -> None:
        self._setattr(node)
        container = state.mutated_by_call(node)
        if container is not None:
            self._mutation(node, container)

    def _shadow(self, target: cst.BaseExpression) -> None:
        where = self._method()
        if where is None:
            return
        info, _, self_name = where
        targets = [target]
        while targets:
            current = targets.pop()
            if isinstance(current, (cst.Tuple, cst.List)):
                targets += [element.value for element in current.elements]
            elif isinstance(current, cst.StarredElement):
                targets.append(current.value)
            else:
                name = self._attribute_of_self(current, self_name)
                if name is not None:
                    info.shadowed.add(name)

    def _setattr(self, node: cst.Call) -> None:
        """`setattr(self, "x", v)` and `object.__setattr__(self, "x", v)` assign per instance."""
        if dotted_name(node.func) not in ("setattr", "object.__setattr__") or len(node.args) < 2:
            return
        where = self._method()
        subject, attribute = node.args[0].value, node.args[1].value
        if (
            where is not None
            and isinstance(subject, cst.Name)
            and subject.value == where[2]
            and isinstance(attribute, cst.SimpleString)
        ):
            where[0].shadowed.add(str(attribute.evaluated_value))

    def _mutation(self, node: cst.CSTNode, container: cst.BaseExpression) -> None:
        where = self._method()
        if where is None or self.locks_held:
            return
        info, method, self_name = where
        name = self._attribute_of_self(container, self_name)
        if name is None or name not in info.attributes:
            return
        function = self.innermost_function()
        # A decorator factory's inner function (`def _inner(fun): cls.data[n] = fun; return fun`)
        # registers whatever it is applied to.
        inner = isinstance(function, cst.FunctionDef) and function is not method and _registers(function)
        if state.stores_callable(node, function) or _registers(method) or inner:
            info.registries.add(name)
        info.mutations.append((node, name, method))


def _key_names(node: cst.CSTNode) -> set[str]:
    """Names in what a mutation keys or fills (`self._by_user[user_id] = ...`): what it holds."""
    if isinstance(node, cst.Call):
        values = [arg.value for arg in node.args[:1]]
    else:
        values = [
            element.slice.value
            for sub in walk.subtree(node)
            if isinstance(sub, cst.Subscript)
            for element in sub.slice
            if isinstance(element.slice, cst.Index)
        ]
    return {n.value for value in values for n in walk.subtree(value) if isinstance(n, cst.Name)}


def _of_self(name: str, self_name: str | None):
    """Recognises the attribute `name` of a method's `self` (or `cls`): `self.X`."""
    return lambda expr: (isinstance(expr, cst.Attribute) and expr.attr.value == name
                         and isinstance(expr.value, cst.Name) and expr.value.value == self_name)


def _registers(method: cst.FunctionDef) -> bool:
    return method.name.value in state.CLASS_CREATION_HOOKS or state.is_registrar(
        method, state.scope_names(method)
    )


def _self_name(method: cst.FunctionDef) -> str | None:
    """The name of a method's instance (or class) parameter; None for static methods."""
    if any(dotted_name(d.decorator) in ("staticmethod", "functools.staticmethod") for d in method.decorators):
        return None
    params = [*method.params.posonly_params, *method.params.params]
    return params[0].name.value if params else None


def _base_name(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Subscript):  # Generic[T]
        expr = expr.value
    name = dotted_name(expr)
    return name.rsplit(".", 1)[-1] if name else None


def _singleton(node: cst.ClassDef) -> bool:
    """A class whose `__new__` keeps the instance it makes on the class (`cls._instance =
    super().__new__(cls)`): there is one instance, so its class attributes are that
    instance's own state, no more shared than `self.x` would be."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    for statement in body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__new__" and statement.params.params:
            owner = statement.params.params[0].name.value
            for assign in walk.subtree(statement.body):
                if isinstance(assign, cst.Assign) and any(
                        isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name)
                        and t.target.value.value == owner for t in assign.targets):
                    return True
    return False
