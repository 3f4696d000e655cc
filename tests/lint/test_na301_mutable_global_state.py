"""NA301 on whole agent modules, its options, and pylint's own `global` test file."""

from __future__ import annotations

import ast
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.lint.conftest import make_settings

SUPPORT_AGENT = '''\
"""Customer-support agent: tools, a registry, a memo and per-run state."""
import threading
from collections import defaultdict
from contextvars import ContextVar

from langchain_core.tools import tool

TOOLS = {}
REFUND_LIMITS = {"standard": 100, "gold": 500}
_schema_cache = {}
_last_payload = {}
_attempts = defaultdict(int)
_client = None
_run_id = ContextVar("run_id", default=None)
_local = threading.local()


def register(fn):
    TOOLS[fn.__name__] = fn
    return fn


@register
def lookup_order(order_id):
    return {"order": order_id}


def schema_for(name):
    if name not in _schema_cache:
        _schema_cache[name] = load_schema(name)
    return _schema_cache[name]


def client():
    global _client
    if _client is None:
        _client = make_client()
    return _client


@tool
def refund(order_id, amount, tier="standard"):
    """Refund an order."""
    if amount > REFUND_LIMITS[tier]:
        raise ValueError("over limit")
    _last_payload["refund"] = {"order": order_id, "amount": amount}
    _attempts[order_id] += 1
    _run_id.set(order_id)
    _local.order = order_id
    return client().refunds.create(order_id, amount)


def handle(request):
    payload = {}
    payload["user"] = request.user
    return TOOLS[request.tool](**request.args)


if __name__ == "__main__":
    _last_payload["boot"] = True
'''


def test_support_agent_module(lint):
    findings = lint(SUPPORT_AGENT, select=["NA301"]).findings
    assert [(f.line, f.message.split(" (defined")[0]) for f in findings] == [
        (30, "`schema_for()` mutates module-level dict `_schema_cache`"),
        (35, "`client()` rebinds module-level `_client`"),
        (46, "`refund()` mutates module-level dict `_last_payload`"),
        (47, "`refund()` keeps entries keyed by `order_id` in module-level defaultdict `_attempts`"),
    ]
    memo, lazy, payload, _ = (f.message for f in findings)
    assert "functools.lru_cache" in memo and "lru_cache" not in payload
    assert "defined at line 13; rebound at line 37" in lazy
    assert "(defined at line 11)" in payload


GRAPH_NODES = '''\
from langgraph.graph import StateGraph

conversation = []
seen_tools = set()
PLUGINS = []


class Plugin:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        PLUGINS.append(cls)


def plan(state):
    conversation.append(state["input"])
    return {"plan": llm.invoke(conversation)}


def act(state, seen_tools=None):
    seen_tools = seen_tools or set()
    seen_tools.add(state["tool"])
    return {"result": run_tool(state["tool"])}


def build():
    graph = StateGraph(dict)
    graph.add_node("plan", plan)
    graph.add_node("act", act)
    graph.add_node("log", lambda s: conversation.extend(s["messages"]))
    return graph.compile()


app = build()
'''


def test_graph_nodes_module(lint):
    findings = lint(GRAPH_NODES, select=["NA301"]).findings
    # The node and the lambda node mutate per run; `act` shadows the global with its
    # parameter; __init_subclass__ is a registry; build() only runs at import time.
    # One finding per global, at its first site; the lambda's is a related location.
    assert [(f.line, f.related) for f in findings] == [(15, ((29, 37),))]
    assert findings[0].message.endswith("(and 1 more)")
    assert findings[0].severity == "warning"  # a conversation: per-request data


def test_shared_state_is_ranked_by_what_it_holds(lint):
    code = (
        "_sessions = {}\n_schemas = {}\n_client = None\n"
        "def remember(session_id, turn):\n    _sessions.setdefault(session_id, []).append(turn)\n"
        "def schema(name):\n    _schemas[name] = build(name)\n"
        "def client():\n    global _client\n    _client = make()\n"
    )
    findings = lint(code, select=["NA301"]).findings
    assert [(f.line, f.severity) for f in findings] == [(5, "warning"), (7, "info"), (9, "info")]


def test_shared_on_purpose_is_not_reported(lint):
    code = (
        "import signal\n_WARNED = set()\n_cache = {}\n_exiting = False\n_models = {}\n"
        "def warn_once(key):\n    _WARNED.add(key)\n"
        "def _reset_cache_for_tests():\n    _cache.clear()\n"
        "def _handle(signum, frame):\n    global _exiting\n    _exiting = True\n"
        "def __getattr__(name):\n    _models[name] = load(name)\n    return _models[name]\n"
        "def _store(key, value):\n    \"\"\"The caller must hold the lock.\"\"\"\n    _cache[key] = value\n"
    )
    assert lint(code, select=["NA301"]).findings == []


def test_several_global_statements_give_one_finding_per_function(lint):
    code = "a = b = 0\ndef f():\n    global a\n    global b\n    a = b = 1\ndef g():\n    global a\n    print(a)\n"
    findings = lint(code, select=["NA301"]).findings
    assert [f.line for f in findings] == [3]
    assert "`a` (defined at line 1; rebound at line 5), `b` (defined at line 1; rebound at line 5)" in findings[0].message


def test_ignore_names_option(lint):
    code = "_SCHEMA_CACHE = {}\nRUNS = {}\ndef f(k):\n    _SCHEMA_CACHE[k] = 1\n    RUNS[k] = 1\n"
    findings = lint(code, select=["NA301"], rule_options={"NA301": {"ignore-names": ["*_CACHE"]}}).findings
    assert [f.line for f in findings] == [5]


def test_noqa_suppresses(lint):
    code = "RUNS = {}\ndef f(k):\n    RUNS[k] = 1  # noqa: NA301\n"
    assert lint(code, select=["NA301"]).findings == []


PYLINT_VERSION = "4.1.4"
PYLINT_GLOBALS = f"pylint-{PYLINT_VERSION}/tests/functional/g/globals"


def _expected_messages(text: str) -> dict[int, str]:
    """`symbol:line:col:...` lines of a pylint functional test -> {line: symbol}."""
    found = {}
    for row in text.splitlines():
        symbol, line, *_ = row.split(":")
        found[int(line)] = symbol
    return found


@pytest.mark.network
def test_pylint_globals_functional_file(lint, tmp_path: Path):
    """Every `global-statement` pylint expects is a rebinding NA301 reports; the
    `global` lines that only read (`global-variable-not-assigned`) are not."""
    download = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         f"pylint=={PYLINT_VERSION}", "-d", str(tmp_path), "--quiet"],
        capture_output=True, text=True, timeout=300,
    )
    archives = list(tmp_path.glob("pylint-*.tar.gz"))
    if download.returncode != 0 or not archives:
        pytest.skip(f"cannot download pylint's sdist (no registry?): {download.stderr.strip()[-200:]}")
    with tarfile.open(archives[0]) as archive:
        source = archive.extractfile(f"{PYLINT_GLOBALS}.py").read().decode()
        expected = _expected_messages(archive.extractfile(f"{PYLINT_GLOBALS}.txt").read().decode())

    # A global rebound in several functions is one finding; the other `global`
    # statements are its related locations.
    found = lint(source, select=["NA301"]).findings
    flagged = {f.line for f in found} | {line for f in found for line, _ in f.related}
    rebinding = {line for line, symbol in expected.items() if symbol == "global-statement"}
    read_only = {line for line, symbol in expected.items() if symbol == "global-variable-not-assigned"}
    assert len(rebinding) == 9 and rebinding <= flagged
    assert len(read_only) == 4 and not flagged & read_only
    # The rest: `global SOMEVAR` creates a global from a function, and the two
    # mutations under `global RAN_DB_SET`/`RAN_DB_DICT` (which do not rebind).
    assert sorted(flagged - rebinding) == [33, 103, 104]


def test_trigger_skips_modules_whose_containers_no_function_touches():
    from nonatomic.lint.runner import RulePlan

    plan = RulePlan(make_settings())

    def triggered(source: bytes) -> bool:
        return "NA301" in plan.codes_for("m.py", source, ast.parse(source))

    assert not triggered(b"__all__ = ['a']\nLIMITS = {'refund': 500}\n\ndef limit(tool):\n    return LIMITS.get(tool)\n")
    assert not triggered(b"SEEN = set()\nSEEN.add('boot')\n")  # at import time
    for touched in (
        b"SEEN = set()\ndef f(x):\n    SEEN.add(x)\n",
        b"CACHE: dict[str, int] = {}\ndef f(k):\n    CACHE [k] = 1\n",
        b"results = []\non_done = lambda r: results.append(r)\n",
        b"FLAG = None\ndef f():\n    global FLAG\n",
    ):
        assert triggered(touched), touched
