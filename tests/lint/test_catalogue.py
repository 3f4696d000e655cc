"""The catalogue: one entry per rule module, and triggers that keep libcst away from
files no rule can fire on."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import nonatomic.rules.lint as rules_package
from nonatomic.rules.lint import all_rules
from nonatomic.rules.lint.catalogue import CATALOGUE, entry_for
from nonatomic.rules.lint.semantics.timeouts import UnboundedCallGate, load_specs


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


GATE = UnboundedCallGate(load_specs())


@pytest.mark.parametrize(
    "source",
    [
        "import requests\nrequests.post(url, json=body)\n",
        "from requests import post as p\np(url)\n",  # an alias keeps its spec
        "import httpx\nClient = httpx.Client\nClient(timeout=None)\n",  # so does an assigned name
        "import requests\nrequests.get(url, timeout=None)\n",
        "import queue\nq = queue.Queue()\nq.get()\n",
        "import subprocess\nsubprocess.run(['ls'], check=True)\n",
    ],
)
def test_gate_passes_calls_that_may_lack_a_timeout(source):
    assert GATE(ast.parse(source))


@pytest.mark.parametrize(
    "source",
    [
        "import requests\nrequests.post(url, json=body, timeout=5)\n",
        "import requests\nrequests.get(url, **options)\n",  # the rule trusts **kwargs
        "import httpx\nhttpx.get(url)\n",  # httpx has a default: only None is flagged
        "import requests\nsession = requests.Session()\nsession.post(url, timeout=3)\n",
        "import urllib.request\nurllib.request.urlopen(url, None, 10)\n",  # positional timeout
        "def post(x):\n    return x\n",  # a definition is not a call
    ],
)
def test_gate_skips_calls_that_are_settled(source):
    assert not GATE(ast.parse(source))


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
