"""A read-only walk over libcst trees, for analysis.

libcst's traversals (`node.visit`, `node.children`, `MetadataWrapper.visit_batched`)
rebuild every node they pass, since the same code serves transformers; on agent
code that rebuilding was most of a lint's time.  This walk reads children in
place, in the lexical order libcst itself visits them, and calls the same visitor
methods (`visit_Call`, `leave_Call`, `visit_FunctionDef_body`, ...), so rules,
metadata providers and helper visitors are written exactly as for libcst.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import libcst as cst
import libcst._nodes.op as cst_op
import libcst._nodes.whitespace as cst_whitespace
from libcst import CSTNode
from libcst.metadata import BatchableMetadataProvider, CodeRange, PositionProvider

_FIELDS: dict[type, tuple[str, ...]] = {}


class _FieldRecorder(cst.CSTVisitor):
    """Records the child attributes one node's libcst visit goes through, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[str] = []

    def on_visit(self, node: CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: CSTNode, attribute: str) -> None:
        self.fields.append(attribute)

    def on_leave_attribute(self, original_node: CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node: CSTNode) -> None:
        pass


def child_fields(node: CSTNode) -> tuple[str, ...]:
    """The attributes that hold `node`'s children, in lexical order (learnt once per
    node type from libcst's own visit; a field libcst skips when it is None, such as an
    f-string's `format_spec`, is added after)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        recorder = _FieldRecorder()
        node._visit_and_replace_children(recorder)
        rest = [f.name for f in dataclasses.fields(node) if f.name not in recorder.fields]
        fields = _FIELDS[type(node)] = (*recorder.fields, *rest)
    return fields


# Whitespace, comments, operators, commas and brackets: two thirds of a tree's nodes,
# and nothing under them but more of the same.  A walk whose visitors look at none of
# them skips them.  (tests/lint/test_walk.py checks that they hold only each other.)
TRIVIA = frozenset(
    name
    for module in (cst_whitespace, cst_op)
    for name, value in vars(module).items()
    if isinstance(value, type) and issubclass(value, CSTNode)
) | {"LeftParen", "RightParen", "LeftSquareBracket", "RightSquareBracket", "LeftCurlyBrace", "RightCurlyBrace"}

_OTHER, _NODE, _TRIVIA = 0, 1, 2
# type -> kind (CSTNode is an ABC: a dict lookup is many times faster than its
# isinstance check, and the walk asks for every field of every node).
_KINDS: dict[type, int] = {}


def _kind(value: Any) -> int:
    kind = _KINDS.get(type(value))
    if kind is None:
        if not isinstance(value, CSTNode):
            kind = _OTHER
        else:
            kind = _TRIVIA if type(value).__name__ in TRIVIA else _NODE
        _KINDS[type(value)] = kind
    return kind


def _nodes(value: Any, skip: int) -> Iterator[CSTNode]:
    """The nodes a field holds, but not those of kind `skip`."""
    kind = _kind(value)
    if kind:
        if kind != skip:
            yield value
    elif type(value) is tuple or type(value) is list:
        for item in value:
            kind = _kind(item)
            if kind and kind != skip:
                yield item


def children(node: CSTNode) -> list[CSTNode]:
    """`node.children`, without rebuilding `node`."""
    return [child for name in child_fields(node) for child in _nodes(getattr(node, name), _OTHER)]


def subtree(node: CSTNode) -> Iterator[CSTNode]:
    """`node` and every node under it, in lexical order."""
    yield node
    for child in children(node):
        yield from subtree(child)


def visit(node: CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a read-only visitor: `visit_X` returning False skips
    the children, `leave_X` is called either way."""
    cls = type(visitor)
    names = _method_names(cls)
    attributes = any(name.count("_") > 1 for name in names)
    looks_at_trivia = cls.on_visit is not cst.CSTVisitor.on_visit or any(
        name.split("_")[1] in TRIVIA for name in names
    )
    _visit(node, visitor, attributes, _OTHER if looks_at_trivia else _TRIVIA)


def _visit(node: CSTNode, visitor: cst.CSTVisitor, attributes: bool, skip: int) -> None:
    if visitor.on_visit(node):
        for name in child_fields(node):
            if attributes:
                visitor.on_visit_attribute(node, name)
            for child in _nodes(getattr(node, name), skip):
                _visit(child, visitor, attributes, skip)
            if attributes:
                visitor.on_leave_attribute(node, name)
    visitor.on_leave(node)


_Method = Callable[[CSTNode], Any]
_METHOD_NAMES: dict[type, tuple[str, ...]] = {}


def _method_names(cls: type) -> tuple[str, ...]:
    """The `visit_*`/`leave_*` methods a class really defines (libcst's typed stubs are
    marked no-op), as libcst's batched visitor collects them."""
    names = _METHOD_NAMES.get(cls)
    if names is None:
        found = {
            name
            for klass in cls.__mro__
            for name, value in vars(klass).items()
            if name.startswith(("visit_", "leave_")) and callable(value) and not getattr(value, "_is_no_op", False)
        }
        names = _METHOD_NAMES[cls] = tuple(sorted(found))
    return names


def visit_batched(module: cst.Module, visitors: Iterable[cst.BatchableCSTVisitor]) -> None:
    """One walk calling every visitor's methods, in list order (libcst's batched visit)."""
    table: dict[str, list[_Method]] = {}
    for visitor in visitors:
        for name in _method_names(type(visitor)):
            table.setdefault(name, []).append(getattr(visitor, name))
    if not table:
        return
    enter: dict[str, list[_Method]] = {}
    leave: dict[str, list[_Method]] = {}
    on_attribute: dict[str, dict[str, tuple[list[_Method], list[_Method]]]] = {}
    for name, methods in table.items():
        kind, _, rest = name.partition("_")
        node_type, _, attribute = rest.partition("_")
        if not attribute:
            (enter if kind == "visit" else leave)[node_type] = methods
        else:
            pair = on_attribute.setdefault(node_type, {}).setdefault(attribute, ([], []))
            pair[kind == "leave"].extend(methods)

    skip = _OTHER if TRIVIA & {*enter, *leave, *on_attribute} else _TRIVIA
    kinds, fields_of = _KINDS, _FIELDS

    def walk(node: CSTNode) -> None:
        node_type = type(node).__name__
        for method in enter.get(node_type, ()):
            method(node)
        attributes = on_attribute.get(node_type)
        for name in fields_of.get(type(node)) or child_fields(node):
            calls = attributes.get(name) if attributes else None
            if calls:
                for method in calls[0]:
                    method(node)
            value = getattr(node, name)
            kind = kinds.get(type(value))
            if kind is None:
                kind = _kind(value)
            if kind:
                if kind != skip:
                    walk(value)
            elif type(value) is tuple or type(value) is list:
                for item in value:
                    kind = kinds.get(type(item))
                    if kind is None:
                        kind = _kind(item)
                    if kind and kind != skip:
                        walk(item)
            if calls:
                for method in calls[1]:
                    method(node)
        for method in leave.get(node_type, ()):
            method(node)

    walk(module)


class Metadata:
    """Metadata for one module, each provider computed once on first need: visitor
    providers batched on this walk, others (positions) by their own pass.  (libcst's
    wrapper would also walk the whole tree once for no provider at all.)"""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._computed: dict[type, Mapping[CSTNode, Any]] = {}
        self.positions: Any = None  # a `positions.Locator`, set by the engine

    def position(self, node: CSTNode) -> CodeRange:
        """Where `node` is: from `positions`, else from libcst's whole-module pass."""
        return (self.positions or self.resolve(PositionProvider))[node]

    def place(self, nodes: Iterable[CSTNode]) -> None:
        """Positions of `nodes` computed together (the whole-module pass does them all anyway)."""
        if self.positions is not None:
            self.positions.place(nodes)

    def resolve(self, provider: type) -> Mapping[CSTNode, Any]:
        return self.resolve_many([provider])[provider]

    def resolve_many(self, providers: Iterable[type]) -> dict[type, Mapping[CSTNode, Any]]:
        wanted = set()
        _gather(providers, wanted)
        while pending := wanted - self._computed.keys():
            ready = [p for p in pending if set(p.METADATA_DEPENDENCIES) <= self._computed.keys()]
            if not ready:
                raise ValueError("circular metadata dependencies: " + ", ".join(p.__name__ for p in pending))
            providers = [p() for p in ready]
            for provider in providers:
                self.attach(provider)
            visit_batched(self.module, [p for p in providers if isinstance(p, BatchableMetadataProvider)])
            for provider in providers:
                if not isinstance(provider, BatchableMetadataProvider):
                    provider._gen_impl(self.module)  # e.g. positions: one code generation pass
                self._computed[type(provider)] = provider._computed
        return {p: self._computed[p] for p in wanted}

    def attach(self, dependent: cst.MetadataDependent) -> None:
        """Gives a visitor the metadata it declares (what libcst's `resolve` does)."""
        dependent.metadata = self.resolve_many(dependent.get_inherited_dependencies())


def _gather(providers: Iterable[type], into: set[type]) -> None:
    for provider in providers:
        if provider not in into:
            into.add(provider)
            _gather(provider.METADATA_DEPENDENCIES, into)
