"""Which calls need a timeout (the `timeouts.yaml` pack plus the user's), and a
cheap test on CPython's syntax tree of whether a file has a call that may lack one.

No libcst here: the test decides whether NA201 needs the file parsed by libcst at
all.  It over-approximates the rule (positions, `ignore-calls` and types are left to
the rule), so it can only skip files the rule would not flag.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nonatomic.rules.lint.gates import SyntaxIndex, last_name
from nonatomic.rules.lint.semantics.packs import load_pack


@dataclass(frozen=True)
class TimeoutSpec:
    keywords: tuple[str, ...]
    position: int | None
    when: str  # "missing" or "none"
    why: str
    fixable: bool = False
    nonblocking: tuple[str, int | None] | None = None


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
            nonblocking=(nonblocking["keyword"], nonblocking.get("position"))
            if nonblocking
            else None,
        )
        for name in entry["names"]:
            specs[name] = spec
    return specs


class UnboundedCallGate:
    """Whether a module may hold a call of `specs` without its timeout: a call that
    names a spec through an imported module (`httpx.get`), or whose last name is a
    spec's (`session.post`, or an alias: `from requests import post as p`,
    `Client = httpx.Client`), and whose arguments do not settle it."""

    def __init__(self, specs: dict[str, TimeoutSpec]) -> None:
        self.specs = specs
        self.by_last: dict[str, list[TimeoutSpec]] = {}
        for name, spec in specs.items():
            self.by_last.setdefault(name.rsplit(".", 1)[-1], []).append(spec)

    def __call__(self, index: SyntaxIndex) -> bool:
        modules: dict[str, str] = {}  # `import a.b as c`: local name -> module
        for node in index.of(ast.Import):
            modules.update(
                (alias.asname, alias.name) if alias.asname else (alias.name.split(".")[0],) * 2 for alias in node.names
            )
        aliases = dict(index.aliases)  # local name -> a spec's last name
        for node in index.of(ast.Assign, ast.AnnAssign):
            value = last_name(node.value) if node.value is not None else None
            if value in self.by_last:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                aliases.update((t.id, value) for t in targets if isinstance(t, ast.Name))
        return any(
            _may_lack(call, spec) for call in index.of(ast.Call) for spec in self._candidates(call, modules, aliases)
        )

    def _candidates(self, call: ast.Call, modules: dict[str, str], aliases: dict[str, str]) -> list[TimeoutSpec]:
        dotted = _dotted(call.func)
        if dotted is not None and "." in dotted:
            root, rest = dotted.split(".", 1)
            if root in modules:  # a module's function or class: its name says which spec
                spec = self.specs.get(f"{modules[root]}.{rest}")
                return [spec] if spec else []
        name = last_name(call.func)
        return self.by_last.get(name or "") or self.by_last.get(aliases.get(name or "", ""), [])


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base else None
    return None


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
