"""A nested function its enclosing function never names cannot run: no rule reports in it.
Every way of naming it keeps it live: a call, a return, a decorator, `locals()`."""

from __future__ import annotations

import pytest

_DEAD = """
import requests

def outer(url):
    if url:
        def probe():
            return requests.get(url)
    return None
"""

_LIVE = {
    "called": "def outer(url):\n    def probe():\n        return requests.get(url)\n    return probe()\n",
    "returned": "def outer(url):\n    def probe():\n        return requests.get(url)\n    return probe\n",
    "handed on": "def outer(url, pool):\n    def probe():\n        return requests.get(url)\n    pool.submit(probe)\n",
    "decorated": "def outer(app, url):\n    @app.route('/probe')\n    def probe():\n        return requests.get(url)\n",
    "seen through locals()": "def outer(url):\n    def probe():\n        return requests.get(url)\n    return locals()['probe']()\n",
    "named in a sibling": "def outer(url):\n    def probe():\n        return requests.get(url)\n    def run():\n        return probe()\n    return run\n",
}


def test_a_never_named_nested_function_holds_no_findings(lint):
    assert [f.code for f in lint(_DEAD, select=["NA201"]).findings] == []


@pytest.mark.parametrize("how", sorted(_LIVE))
def test_a_named_nested_function_is_linted(lint, how):
    findings = lint("import requests\n\n" + _LIVE[how], select=["NA201"]).findings
    assert [f.code for f in findings] == ["NA201"]


def test_module_level_functions_are_always_linted(lint):
    # Nobody in the module calls it, but another module may: only nested functions are judged.
    findings = lint("import requests\n\ndef probe(url):\n    return requests.get(url)\n", select=["NA201"]).findings
    assert [f.code for f in findings] == ["NA201"]
