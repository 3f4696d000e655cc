"""The catalogue: one entry per rule module, and triggers that keep libcst away from
files no rule can fire on."""

from __future__ import annotations

import ast
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import nonatomic.rules.lint as rules_package
from nonatomic.rules.lint import all_rules
from nonatomic.rules.lint.catalogue import CATALOGUE, entry_for
from nonatomic.rules.lint.semantics.timeouts import UnboundedCallGate, load_specs
from nonatomic.rules.lint.semantics.tool_config import constructor_types
from nonatomic.rules.lint.triggers.gates import SyntaxIndex


def test_every_rule_module_is_in_the_catalogue_and_back():
    modules = {
        f"{rules_package.__name__}.{info.name}"
        for info in pkgutil.iter_modules(rules_package.__path__)
        if info.name.startswith("na")
    }
    assert modules == {entry.module for entry in CATALOGUE}
    for rule in all_rules():
        entry = entry_for(rule.code)
        assert (rule.name, rule.severity, rule.default_on) == (entry.name, entry.severity, entry.default_on)


GATE = UnboundedCallGate(load_specs(), constructor_types({}))


@pytest.mark.parametrize(
    "source",
    [
        "import requests\nrequests.post(url, json=body)\n",
        "from requests import post as p\np(url)\n",  # an alias keeps its spec
        "import requests\nrequests.get(url, timeout=None)\n",
        "import queue\nq = queue.Queue()\nq.get()\n",
        "import subprocess\nsubprocess.run(['ls'], check=True)\n",
        "import subprocess as sp\nsp.check_output(['ls'])\n",
        # A method of a type, on a receiver made by one of the type's constructors.
        "from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor() as ex:\n    ex.submit(f).result()\n",
        "class C:\n    def __init__(self):\n        self.http = requests.session()\n    def f(self):\n        self.http.get(u)\n",
    ],
)
def test_gate_passes_calls_that_may_lack_a_timeout(source):
    assert GATE(SyntaxIndex(ast.parse(source)))


@pytest.mark.parametrize(
    "source",
    [
        "import requests\nrequests.post(url, json=body, timeout=5)\n",
        "import requests\nrequests.get(url, **options)\n",  # the rule trusts **kwargs
        "import httpx\nhttpx.get(url)\n",  # httpx has a default: only None is flagged
        "import requests\nsession = requests.Session()\nsession.post(url, timeout=3)\n",
        "import urllib.request\nurllib.request.urlopen(url, None, 10)\n",  # positional timeout
        "def post(x):\n    return x\n",  # a definition is not a call
        # `get`, `result` and `run` of objects that no constructor of a timed type made
        "limit = LIMITS.get(tool)\nvalue = task.result()\nasyncio.run(main())\n",
        "import requests\nresponse = cache.get(url)\n",
        "import httpx\nClient = httpx.Client\nClient(timeout=None)\n",  # the rule follows imports, not assignments
    ],
)
def test_gate_skips_calls_that_are_settled(source):
    assert not GATE(SyntaxIndex(ast.parse(source)))


def test_gate_knows_the_constructors_a_user_adds():
    source = "from mylib import make_session\ns = make_session()\ns.get(url)\n"
    assert not GATE(SyntaxIndex(ast.parse(source)))
    users = UnboundedCallGate(load_specs(), constructor_types({"types": {"requests.Session": ["mylib.make_session"]}}))
    assert users(SyntaxIndex(ast.parse(source)))


def _modules_after_linting(tmp_path, source: str) -> set[str]:
    target = tmp_path / "tool.py"
    target.write_text(source)
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from nonatomic.lint import lint_paths, load_settings
        report = lint_paths([Path({str(target)!r})], load_settings(start=Path({str(tmp_path)!r})), jobs=1, use_cache=False)
        print(len(report.findings))
        print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in ("libcst", "nonatomic"))))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    count, modules = out.splitlines()
    return int(count), set(modules.split())


def test_a_clean_file_is_linted_without_libcst_or_any_rule(tmp_path):
    count, modules = _modules_after_linting(
        tmp_path, "import requests\n\ndef refund(o):\n    return requests.post(URL, json=o, timeout=5)\n"
    )
    assert count == 0
    assert not any(m == "libcst" or m.startswith("libcst.") for m in modules)
    assert not any(m.startswith("nonatomic.rules.lint.na") for m in modules)


def test_a_file_a_rule_may_fire_on_loads_only_that_rule(tmp_path):
    count, modules = _modules_after_linting(
        tmp_path, "import requests\n\ndef refund(o):\n    return requests.post(URL, json=o)\n"
    )
    assert count == 1
    assert "libcst" in modules
    assert {m for m in modules if m.startswith("nonatomic.rules.lint.na")} == {
        "nonatomic.rules.lint.na201_call_without_timeout"
    }


def test_every_retry_construct_of_the_pack_passes_the_retry_gate():
    from nonatomic.rules.lint.semantics.packs import load_pack
    from nonatomic.rules.lint.triggers.gates import retry_construct

    pack = load_pack("retry")
    sources = []
    for construct in pack["constructs"]:
        for name in construct["names"]:
            module, _, last = name.rpartition(".")
            imported = f"from {module} import {last}\n" if module else ""
            sources += [f"{imported}@{last}\ndef f(): pass\n", f"{imported}{last}(f)\n"]
    sources += [f"call_with_{word}(send)\n" for word in pack["name_words"]]
    sources += [f"chain.{pack['with_retry']['method']}()\n"]
    assert [s for s in sources if not retry_construct(SyntaxIndex(ast.parse(s)))] == []


GATE_CASES = {
    "retry_construct": (
        [
            "from tenacity import retry as r\n@r\ndef f(): pass\n",  # an alias still imports the name
            "for attempt in range(3):\n    try:\n        return send()\n    except OSError:\n        pass\n",
            "import time\nwhile not done:\n    try:\n        done = send()\n    except OSError:\n        time.sleep(1)\n",
            "graph.add_node('charge', charge, retry_policy=policy)\n",
            "chain = llm.with_retry(stop_after_attempt=3)\n",
            "from backoff import on_exception as retrying\n@retrying(expo, OSError)\ndef f(): pass\n",
            "@task(retry_policy=RetryPolicy(max_attempts=3))\ndef charge(order): pass\n",
            "while True:\n    r = post()\n    if r.ok:\n        break\n    time.sleep(1)\n",  # no try
            "while True:\n    try:\n        send()\n    except OSError:\n        log()\n    else:\n        break\n",
        ],
        [
            "docs = retriever.retrieve(query)\nmodel = Model.from_pretrained(name)\n",  # `retr`, not retry
            "client = OpenAI(max_retries=5)\nif should_retry(e):\n    pass\n",  # settings and predicates
            "while True:\n    line = f.readline()\n    if not line:\n        break\n    handle(line)\n",
            "while not done:\n    done = poll()\n    time.sleep(1)\n",  # nothing tests the round
            "while True:\n    try:\n        item = q.get_nowait()\n    except Empty:\n        break\n    handle(item)\n",
            "for user in users:\n    try:\n        send(user)\n    except OSError:\n        pass\n",  # over items
            "client = OpenAI()\nprint(client.max_retries)\n",  # reads a setting
            "while queue:\n    handle(queue.pop())\n",
        ],
    ),
    "mutated_global": (
        [
            "_last = {}\ndef refund(order):\n    _last['refund'] = order\n",
            "SESSIONS = {}\nasync def f(u):\n    SESSIONS.get(u).clear()\n",
            "results = []\non_done = lambda r: results.append(r)\n",
            "a = b = []\ndef f():\n    del b[0]\n",
            "def connect():\n    global conn\n",
        ],
        [
            "LIMITS = {'refund': 500}\ndef limit(tool):\n    return LIMITS.get(tool, 0)\n",  # only read
            "SEEN = set()\nSEEN.add('boot')\n",  # import time
            "def f():\n    seen = []\n    seen.append(1)\n",  # a local
            "TOOLS = ('a', 'b')\ndef f(x):\n    TOOLS.count(x)\n",  # not a container
        ],
    ),
    "failure_store": (
        [
            "try:\n    r = charge()\nexcept Exception as e:\n    CACHE[key] = e\n",
            "try:\n    r = charge()\nexcept Exception:\n    r = {'error': 1}\ncache.set(key, r)\n",
        ],
        [
            "try:\n    r = charge()\nexcept Exception:\n    log(r)\nCACHE[key] = r\n",  # the handler assigns nothing
            "CACHE[key] = charge()\n",
        ],
    ),
    "class_container": (
        [
            "class A:\n    seen = []\n    def add(self, x):\n        self.seen.append(x)\n",
            "from collections import defaultdict as dd\nclass A:\n    if X:\n        by_id = dd(list)\n"
            "    def put(me, k, v):\n        me.by_id[k].append(v)\n",
            "class A:\n    a, b = [], {}\n    @classmethod\n    def f(cls):\n        cls.b['k'] = 1\n",
        ],
        [
            "class A:\n    def __init__(self):\n        self.seen = []\n",
            "class A:\n    name = 'a'\n    limits = (1, 2)\n",
            "class A:\n    seen = []\n    def size(self):\n        return len(A)\n",  # never used through a name
        ],
    ),
    "lock_command": (
        [
            "r.set(key, token, nx=True)\n",
            "r.set(key, token, None, None, True)\n",
            "client.setnx(key, 1)\n",
            "with conn.lock('report'):\n    pass\n",
            "from redis_lock import Lock as RLock\n",
            "import redis_lock\nlock = redis_lock.Lock(conn, 'k')\n",
        ],
        [
            "r.set(key, token, ex=10)\n",  # no NX: a plain write
            "r.delete(key)\nr.get(key)\n",
            "cache.set(key, value)\n",
        ],
    ),
    "bounded_wait": (
        [
            "done, pending = await asyncio.wait(tasks, timeout=5)\n",
            "try:\n    fut.result(timeout=3)\nexcept TimeoutError:\n    pass\n",
            "from asyncio import shield as keep\ntry:\n    await asyncio.wait_for(keep(t), 5)\nexcept TimeoutError:\n    pass\n",
        ],
        [
            "done, _ = await asyncio.wait(tasks)\n",
            "value = fut.result(timeout=3)\n",  # no handler to judge
            # the ones without a timeout: they wait on or cancel the work
            "try:\n    value = task.result()\n    await asyncio.wait_for(run(), 5)\nexcept TimeoutError:\n    pass\n",
        ],
    ),
}


@pytest.mark.parametrize(
    ("gate", "source", "expected"),
    [(gate, source, True) for gate, (yes, _) in GATE_CASES.items() for source in yes]
    + [(gate, source, False) for gate, (_, no) in GATE_CASES.items() for source in no],
)
def test_gates(gate, source, expected):
    from nonatomic.rules.lint.triggers import gates

    assert getattr(gates, gate)(gates.SyntaxIndex(ast.parse(source))) is expected


def test_readme_table_of_what_is_recognised_is_generated_from_the_packs():
    from pathlib import Path

    from nonatomic.rules.lint.semantics.recognised import END, START, table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    shown = readme[readme.index(START): readme.index(END) + len(END)]
    assert shown == table(), (
        "README.md is out of date: replace its table with the output of "
        "`python -c 'from nonatomic.rules.lint.semantics.recognised import table; print(table())'`"
    )


def test_rule_test_files_are_named_for_one_rule_and_cover_it_only():
    # test_<rule module>.py; tests of several rules together are named for the code they lint
    modules = {entry.module.rpartition(".")[2]: entry.code for entry in CATALOGUE}
    files = sorted(Path(__file__).parent.glob("test_na*.py"))
    assert files
    for path in files:
        rule = path.stem.removeprefix("test_")
        assert rule in modules, f"{path.name}: name it test_<rule module>.py"
        assert set(re.findall(r"\bNA\d{3}\b", path.read_text("utf-8"))) == {modules[rule]}, path.name
