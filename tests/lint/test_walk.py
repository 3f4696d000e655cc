"""The read-only walk must see exactly what libcst's own traversals see."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from nonatomic.rules.lint import all_rules
from nonatomic.rules.lint.semantics.callees import CalleeProvider
from nonatomic.rules.lint.tree import walk

PACKAGE = Path(__file__).resolve().parents[2] / "nonatomic"

EDGE_CASES = '''
x = f"{value!r:>{width}} {other=}" f'{a:{b}{c}}'
match command:
    case {"op": "charge", **rest} | [_, *others]:
        pass
async def f(*, key: int = 1, **kw) -> None:
    async with lock as held, other:  # a comment
        await g(a, *b, c=(d), **e)[1:2, ::3]
lambda q=(1,): q
from . import (a as b, c,)
try:
    pass
except* (ValueError, TypeError) as group:
    raise
del a[0], b.c; global_ = not a is not b
'''


def sources() -> list[str]:
    """Real code (this package) and every rule's own test cases."""
    found = [EDGE_CASES]
    found += [path.read_text("utf-8") for path in sorted(PACKAGE.rglob("*.py"))[:40]]
    for rule in all_rules():
        found += [*rule.VALID, *(case.code for case in rule.INVALID)]
    return found


@pytest.fixture(scope="module")
def modules() -> list[cst.Module]:
    parsed = []
    for source in sources():
        try:
            parsed.append(cst.parse_module(source))
        except cst.ParserSyntaxError:  # NA000's cases
            continue
    return parsed


def every_node(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from every_node(child)


def test_children_are_libcsts_in_the_same_order(modules):
    for module in modules:
        for node in every_node(module):
            assert [id(c) for c in walk.children(node)] == [id(c) for c in node.children]


def test_trivia_hold_nothing_but_trivia(modules):
    for module in modules:
        for node in every_node(module):
            if type(node).__name__ in walk.TRIVIA:
                inner = {type(n).__name__ for n in every_node(node)}
                assert inner <= walk.TRIVIA, (type(node).__name__, inner - walk.TRIVIA)


class Recorder(cst.BatchableCSTVisitor):
    """Records the events of the node types rules listen to, attributes included."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, str]] = []

    def visit_Call(self, node):
        self.events.append(("visit", type(node).__name__))

    def leave_Call(self, original_node):
        self.events.append(("leave", type(original_node).__name__))

    def visit_FunctionDef_body(self, node):
        self.events.append(("visit body", node.name.value))

    def leave_FunctionDef_body(self, node):
        self.events.append(("leave body", node.name.value))

    visit_Name = visit_Attribute = visit_Call
    leave_Name = leave_Attribute = leave_Call


class TriviaRecorder(Recorder):
    def visit_Comma(self, node):
        self.events.append(("visit", "Comma"))

    def visit_Comment(self, node):
        self.events.append(("visit", node.value))


@pytest.mark.parametrize("recorder", [Recorder, TriviaRecorder])
def test_batched_walk_calls_what_libcst_calls(modules, recorder):
    for module in modules:
        ours, theirs = recorder(), recorder()
        walk.visit_batched(module, [ours])
        MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([theirs])
        assert ours.events == theirs.events


class Pruning(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def visit_FunctionDef(self, node):
        self.events.append("def " + node.name.value)
        return False  # not into the body

    def leave_FunctionDef(self, original_node):
        self.events.append("end " + original_node.name.value)

    def visit_Call(self, node):
        self.events.append("call")


def test_visit_prunes_like_libcst(modules):
    for module in modules:
        ours, theirs = Pruning(), Pruning()
        walk.visit(module, ours)
        module.visit(theirs)
        assert ours.events == theirs.events


def test_metadata_matches_libcsts_wrapper(modules):
    for module in modules[:10]:
        ours = walk.Metadata(module).resolve_many([CalleeProvider, PositionProvider])
        theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve_many([CalleeProvider, PositionProvider])
        assert dict(ours[CalleeProvider]) == dict(theirs[CalleeProvider])
        assert dict(ours[PositionProvider]) == dict(theirs[PositionProvider])


def test_subtree_is_the_node_and_its_descendants(modules):
    module = modules[0]
    assert [id(n) for n in walk.subtree(module)] == [id(n) for n in every_node(module)]
