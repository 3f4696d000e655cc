"""Which calls need a timeout (the `timeouts.yaml` pack plus the user's), and a
cheap test on CPython's syntax tree of whether a file has a call that may lack one.

No libcst here: the test decides whether NA201 needs the file parsed by libcst at
all.  It over-approximates the rule (positions, `ignore-calls` and types are left to
the rule), so it can only skip files the rule would not flag.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.triggers.gates import SyntaxIndex, last_name


@dataclass(frozen=True)
class TimeoutSpec:
    keywords: tuple[str, ...]
    position: int | None
    when: str  # "missing" or "none"
    why: str
    fixable: bool = False
    nonblocking: tuple[str, int | None] | None = None
    severity: str | None = None  # below the rule's own, for calls that rarely hang (see the pack)
    bounded_by: tuple[str, ...] = ()  # other keywords that, given and not None, settle it
    value: bool = False  # builds a timeout value: compared, it bounds nothing


def in_process_transports() -> frozenset[str]:
    """Class names of the transports that answer in the process (see the pack)."""
    return frozenset(load_pack("timeouts")["in_process_transports"])


def load_specs(extra: list | None = None) -> dict[str, TimeoutSpec]:
    """Callee name -> what makes the call bounded; the shipped pack plus `extra`."""
    specs: dict[str, TimeoutSpec] = {}
    for entry in [*load_pack("timeouts")["calls"], *(extra or [])]:
        if isinstance(entry, str):  # a user's bare "module.func": needs `timeout=`
            entry = {"names": [entry]}
        keywords = entry.get("keyword", "timeout")
        nonblocking = entry.get("nonblocking")
        spec = TimeoutSpec(
            keywords=tuple([keywords] if isinstance(keywords, str) else keywords),
            position=entry.get("position"),
            when=entry.get("when", "missing"),
            why=entry.get("why", "it can block forever"),
            fixable=bool(entry.get("fixable", False)),
            severity=entry.get("severity"),
            bounded_by=tuple(entry.get("bounded_by", ())),
            value=bool(entry.get("value", False)),
            nonblocking=(nonblocking["keyword"], nonblocking.get("position"))
            if nonblocking
            else None,
        )
        for name in entry["names"]:
            specs[name] = spec
    return specs


class UnboundedCallGate:
    """Whether a module may hold a call of `specs` without its timeout, resolved as
    NA201's callee resolution can resolve it: a module's function or class through
    its import (`httpx.get`, `from requests import post as p`), or a method of a
    type (`requests.Session.get`) on any receiver, in a file that calls one of the
    type's constructors or annotates something with it (the ways a receiver gets a
    type: `queue.Queue()`, not `asyncio.Queue()`); and whose arguments do not settle it."""

    def __init__(self, specs: dict[str, TimeoutSpec], constructors: dict[str, str]) -> None:
        self.specs = specs
        makers: dict[str, set[str]] = {}  # type -> what a call to one of its constructors is named
        for ctor, type_name in constructors.items():
            owner, _, method = ctor.rpartition(".")
            # A constructor that is a method of a typed object (`Executor.submit`) is
            # called on any receiver: its method name is all a file shows.
            makers.setdefault(type_name, set()).add(method if owner in constructors.values() else ctor)
        # method name -> (the spec, the constructor calls its receiver needs)
        self.methods: dict[str, list[tuple[TimeoutSpec, set[str]]]] = {}
        for name, spec in specs.items():
            owner, _, method = name.rpartition(".")
            if owner in makers:
                self.methods.setdefault(method, []).append((spec, makers[owner]))

    def __call__(self, index: SyntaxIndex) -> bool:
        called = {name for call in index.of(ast.Call) for name in (last_name(call.func), *index.qualified(call.func))}
        # A receiver gets its type from an annotation too (`http: requests.Session`).
        called |= {
            name
            for node in index.of(ast.arg, ast.AnnAssign)
            if isinstance(node.annotation, (ast.Name, ast.Attribute))
            for name in index.qualified(node.annotation)
        }
        # A module held in a variable or attribute (`self.urllibrequest = urllib.request`).
        held = {
            name
            for node in index.of(ast.Assign)
            if isinstance(node.value, ast.Attribute) and _root(node.value) in index.imports
            for name in index.qualified(node.value)
        }
        return any(
            _may_lack(call, spec) for call in index.of(ast.Call) for spec in self._candidates(call, index, called, held)
        )

    def _candidates(self, call: ast.Call, index: SyntaxIndex, called: set[str | None], held: set[str]
                    ) -> list[TimeoutSpec]:
        found = [self.specs[name] for name in index.qualified(call.func) if name in self.specs]
        if isinstance(call.func, ast.Attribute):
            found += [spec for spec, makers in self.methods.get(call.func.attr, ()) if makers & called]
            found += [self.specs[name] for name in (f"{module}.{call.func.attr}" for module in held) if name in self.specs]
        return found


def _root(expr: ast.expr) -> str | None:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _may_lack(call: ast.Call, spec: TimeoutSpec) -> bool:
    """NA201's test of one call, on CPython's tree."""
    if any(keyword.arg is None for keyword in call.keywords):
        return False  # `**kwargs` may carry it
    if spec.nonblocking is not None:
        flag = _argument(call, (spec.nonblocking[0],), spec.nonblocking[1])
        if isinstance(flag, ast.Constant) and (flag.value is False or (type(flag.value) is int and flag.value == 0)):
            return False
    given = _argument(call, spec.keywords, spec.position)
    if given is None and spec.position is not None and any(isinstance(a, ast.Starred) for a in call.args):
        return False  # `*args` may reach the position
    explicit_none = isinstance(given, ast.Constant) and given.value is None
    return explicit_none if spec.when == "none" else given is None or explicit_none


def _argument(call: ast.Call, names: tuple[str, ...], position: int | None) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in names:
            return keyword.value
    if position is not None:
        plain = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                break
            plain.append(arg)
        if position < len(plain):
            return plain[position]
    return None
