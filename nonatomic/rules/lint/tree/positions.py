"""Where nodes are, as libcst's `PositionProvider` says, without generating the module.

`PositionProvider` generates the code of the whole module to learn every node's
position; in a big module with one finding that pass costs more than the parse.
A `Locator` generates only the statement around each node asked for: CPython's
tree (built by the syntax check) knows where that statement starts, and code
generation from there, with the statement's indentation, gives the same positions
the whole pass would.  Nodes it cannot place that way (in a decorator or a
function's signature, in a module CPython could not parse) fall back to the whole pass.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

from nonatomic.rules.lint.tree import walk

# Compound statements whose CPython node starts where libcst's syntactic position does
# (at the keyword, after any decorators): a node in their header is placed by
# generating the statement.  (An `elif` is an If that is neither.)
_ANCHORS = (cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar, cst.Match, cst.FunctionDef, cst.ClassDef)


class Locator:
    """node -> CodeRange for one module, computed a statement at a time on first need."""

    def __init__(self, module: cst.Module, tree: ast.Module | None, data: bytes,
                 everything: Callable[[], Mapping[cst.CSTNode, CodeRange]]) -> None:
        self.module = module
        self.everything = everything  # the whole-module pass, for what cannot be placed
        self.lines = data.splitlines()
        # CPython's columns count UTF-8 bytes of the decoded text: only then do they map
        # to libcst's characters line by line.
        placeable = tree is not None and module.encoding.lower() in ("utf-8", "utf8") and not data.startswith(
            b"\xef\xbb\xbf"
        )
        self.statements = _paired(module, tree) if placeable else None
        self.known: dict[cst.CSTNode, CodeRange] = {}

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self.known.get(node)
        if found is None:
            self.place([node])
            found = self.known.get(node)
        if found is None:
            found = self.everything()[node]
        return found

    def place(self, nodes: Iterable[cst.CSTNode]) -> None:
        """Computes the positions of `nodes` (and of everything in their statements)."""
        wanted = {id(node): node for node in nodes if node not in self.known}
        if not wanted or self.statements is None:
            return
        for node, anchor in _anchors(self.module, wanted, self.statements).items():
            if node not in self.known and anchor is not None:
                self._generate(anchor)

    def _generate(self, anchor: cst.CSTNode) -> None:
        syntax = self.statements[id(anchor)]
        if not 0 < syntax.lineno <= len(self.lines):
            return  # CPython counts lines some other way here: left to the whole pass
        first = self.lines[syntax.lineno - 1]
        column = len(first[: syntax.col_offset].decode("utf-8", "replace"))
        indent = first[: len(first) - len(first.lstrip(b" \t\f"))].decode("utf-8", "replace")
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=provider,
            indent_tokens=[indent] if indent else [],
        )
        anchor._codegen(state)
        computed = provider._computed
        start = computed[anchor.body[0] if isinstance(anchor, cst.SimpleStatementLine) else anchor].start
        generated = NEWLINE_RE.split("".join(state.tokens))
        if start.column != column or generated[start.line - 1] != first.decode("utf-8", "replace"):
            return  # CPython starts it elsewhere (`(\n    call()\n)`): left to the whole pass
        shift = syntax.lineno - start.line
        for node, where in computed.items():
            self.known[node] = CodeRange((where.start.line + shift, where.start.column),
                                         (where.end.line + shift, where.end.column))


def _paired(module: cst.Module, tree: ast.Module) -> dict[int, ast.stmt] | None:
    """id(libcst statement) -> CPython's statement, for simple statement lines (by their
    first small statement) and the compound statements of `_ANCHORS`."""
    pairs: dict[int, ast.stmt] = {}
    try:
        _pair_block(module.body, tree.body, pairs)
    except _Mismatch:
        return None
    return pairs


class _Mismatch(Exception):
    """The two trees do not line up (a construct this pairing does not know)."""


def _pair_block(statements, nodes: list[ast.stmt], pairs: dict[int, ast.stmt]) -> None:
    at = 0
    for statement in statements:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if at >= len(nodes):
                raise _Mismatch
            if isinstance(statement, cst.SimpleStatementLine):
                pairs[id(statement)] = nodes[at]
            at += len(statement.body)
            continue
        if at >= len(nodes):
            raise _Mismatch
        _pair_compound(statement, nodes[at], pairs)
        at += 1
    if at != len(nodes):
        raise _Mismatch


def _body(suite) -> list:
    return list(suite.body) if isinstance(suite, cst.IndentedBlock) else [suite]


_SAME = {
    cst.If: (ast.If,), cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith), cst.Try: (ast.Try,), cst.TryStar: (getattr(ast, "TryStar", ast.Try),),
    cst.Match: (ast.Match,), cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef), cst.ClassDef: (ast.ClassDef,),
}


def _pair_compound(statement: cst.BaseCompoundStatement, node: ast.stmt, pairs: dict[int, ast.stmt]) -> None:
    if not isinstance(node, _SAME.get(type(statement), ())):
        raise _Mismatch
    if isinstance(statement, _ANCHORS):
        pairs[id(statement)] = node
    if isinstance(statement, cst.Match):
        if len(statement.cases) != len(node.cases):
            raise _Mismatch
        for case, syntax in zip(statement.cases, node.cases):
            _pair_block(_body(case.body), syntax.body, pairs)
        return
    _pair_block(_body(statement.body), node.body, pairs)
    if isinstance(statement, cst.If):
        _pair_else(statement, node, pairs)
    elif isinstance(statement, (cst.For, cst.While)) and statement.orelse is not None:
        _pair_block(_body(statement.orelse.body), node.orelse, pairs)
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        if len(statement.handlers) != len(node.handlers):
            raise _Mismatch
        for handler, syntax in zip(statement.handlers, node.handlers):
            _pair_block(_body(handler.body), syntax.body, pairs)
        if statement.orelse is not None:
            _pair_block(_body(statement.orelse.body), node.orelse, pairs)
        if statement.finalbody is not None:
            _pair_block(_body(statement.finalbody.body), node.finalbody, pairs)


def _pair_else(statement: cst.If, node: ast.If, pairs: dict[int, ast.stmt]) -> None:
    orelse = statement.orelse
    if isinstance(orelse, cst.If):  # elif: an If in CPython's orelse, never an anchor
        if len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.If):
            raise _Mismatch
        _pair_block(_body(orelse.body), node.orelse[0].body, pairs)
        _pair_else(orelse, node.orelse[0], pairs)
    elif orelse is not None:
        _pair_block(_body(orelse.body), node.orelse, pairs)


def _anchors(module: cst.Module, wanted: dict[int, cst.CSTNode],
             statements: dict[int, ast.stmt]) -> dict[cst.CSTNode, cst.CSTNode | None]:
    """For each wanted node, the innermost paired statement around it (None: none)."""
    found: dict[cst.CSTNode, cst.CSTNode | None] = {}
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(module, None)]
    while stack and len(found) < len(wanted):
        node, anchor = stack.pop()
        if id(node) in statements:
            anchor = node
        if id(node) in wanted:
            found[node] = anchor
        children = walk.children(node)
        stack.extend((child, anchor) for child in reversed(children) if type(child).__name__ not in walk.TRIVIA)
    return found
