"""The statement-by-statement locator gives exactly libcst's whole-module positions."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from nonatomic.rules.lint.tree import walk
from nonatomic.rules.lint.tree.positions import Locator

TRICKY = {
    "decorated": (
        "import functools\n\n\nclass Gateway:\n    # the client\n    @functools.cache\n"
        "    @retry(stop=stop_after_attempt(3),\n           wait=wait_fixed(1))\n"
        "    async def charge(self, order, key=make_key()) -> dict:\n        return await self.pay(order)\n"
    ),
    "elif_and_else": (
        "def route(x):\n    if x == 1:\n        a = post(x)\n    elif x == 2:\n        b = put(x)\n"
        "    elif check(x): c = 3\n    else:\n        d = delete(\n            x,\n        )\n"
    ),
    "try_forms": (
        "try:\n    r = send()\nexcept (OSError, ValueError) as exc:\n    cache[k] = exc\nelse:\n    done()\n"
        "finally:\n    close()\n"
        "try:\n    work()\nexcept* TimeoutError:\n    pass\n"
    ),
    "loops_and_with": (
        "async def f(s, urls):\n    async with s.get(u) as r, lock:\n        async for chunk in r.content:\n"
        "            buf.append(chunk)\n    for i in range(3):\n        pass\n    else:\n        log()\n"
        "    while not done:\n        done = poll()\n"
    ),
    "match": "match event:\n    case {'op': 'call', **rest}:\n        handle(rest)\n    case _:\n        pass\n",
    "one_line_suites": "if x: a = 1; b = call(2)\nfor i in y: total += i\nclass K: pass\n",
    "semicolons_and_continuations": (
        "a = 1; b = f(a)\nc = g(1,\n      2) + \\\n    h(3)\nd = {\n    'k': [1, 2],\n}\n"
    ),
    "parenthesised_start": "(\n    requests.post(url)\n)\n(yield_value) = 3\n",
    "unicode_before_node": "x = 'ünïcödé ✓'; y = post(x)\nz = '€' + call('日本')\n",
    "tabs": "def f():\n\tif x:\n\t\treturn g(\n\t\t\t1)\n",
    "crlf": "def f():\r\n    return post(\r\n        url)\r\n",
    "comments_and_blank_lines": "\n\n# header\n\nx = 1  # trailing\n\n\n    # odd indent comment\ny = [\n    1,  # one\n]\n",
}


def _compare(source: str) -> tuple[int, int]:
    data = source.encode()
    module = cst.parse_module(data)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    locator = Locator(module, ast.parse(data), data, lambda: full)
    nodes = [node for node in walk.subtree(module) if type(node).__name__ not in walk.TRIVIA]
    locator.place(nodes)
    placed = [node for node in nodes if node in locator.known]
    assert [(node, locator.known[node]) for node in placed if locator.known[node] != full[node]] == []
    assert all(locator[node] == full[node] for node in nodes)  # the rest from the whole pass
    return len(placed), len(nodes)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_locator_matches_the_whole_module_pass(name):
    placed, total = _compare(TRICKY[name])
    assert placed > 0


def test_locator_places_nodes_in_statements_without_the_whole_pass():
    source = TRICKY["decorated"] + TRICKY["elif_and_else"]
    data = source.encode()
    module = cst.parse_module(data)
    calls = [node for node in walk.subtree(module) if isinstance(node, cst.Call)]

    def whole_pass():
        raise AssertionError("every call sits in a statement CPython places")

    locator = Locator(module, ast.parse(data), data, whole_pass)
    assert [locator[call].start.line for call in calls] == [7, 7, 8, 9, 10, 13, 15, 16, 18]


def test_locator_falls_back_without_cpythons_tree():
    data = b"x = post(url)\n"
    module = cst.parse_module(data)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    locator = Locator(module, None, data, lambda: full)
    call = next(node for node in walk.subtree(module) if isinstance(node, cst.Call))
    assert locator[call] == full[call] and call not in locator.known


def test_locator_on_this_project_source():
    root = Path(__file__).resolve().parents[2] / "nonatomic" / "rules" / "lint"
    placed = total = 0
    for path in sorted(root.glob("na*.py"))[:6]:
        done, count = _compare(path.read_text("utf-8"))
        placed, total = placed + done, total + count
    assert placed > 0.95 * total
