"""Where lint reads its configuration, and that every value is checked when it is read."""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from nonatomic.cli import main
from nonatomic.rules.lint import all_rules
from nonatomic.rules.lint.catalogue import CATALOGUE

HAZARD = "import requests\n\ndef refund(order):\n    return requests.post(URL, json=order)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "tool.py").write_text(HAZARD)
    return tmp_path


def lint(*args: str):
    return CliRunner().invoke(main, ["lint", "--no-cache", *args])


def codes(result) -> list[str]:
    return [f["code"] for f in json.loads(result.stdout)]


@pytest.mark.parametrize("name", ["nonatomic.toml", ".nonatomic.toml"])
def test_a_standalone_config_with_top_level_keys_is_found_walking_up(project, name):
    (project / name).write_text('ignore = ["NA201"]\n\n[call-without-timeout]\nfix-timeout = 5\n')
    result = lint("--format", "json", "src/tool.py")
    assert result.exit_code == 0, result.output
    assert codes(result) == []


def test_in_one_directory_the_standalone_file_wins_over_pyproject(project):
    (project / "pyproject.toml").write_text('[tool.nonatomic]\nselect = ["NA3"]\n')
    (project / "nonatomic.toml").write_text('select = ["NA201"]\n')
    assert codes(lint("--format", "json", "src")) == ["NA201"]
    (project / ".nonatomic.toml").write_text('select = ["NA3"]\n')
    assert codes(lint("--format", "json", "src")) == []


def test_a_pyproject_without_a_nonatomic_table_is_passed_over(project):
    (project / "src" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    (project / "nonatomic.toml").write_text('ignore = ["NA201"]\n')
    assert lint("src/tool.py").exit_code == 0


def test_a_given_config_with_top_level_keys_is_read(project):
    (project / "ci-lint.toml").write_text('ignore = ["NA2"]\n')
    result = lint("--config", "ci-lint.toml", "src")
    assert result.exit_code == 0
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", "pyproject.toml holds no [tool.nonatomic] table"),
        ("empty.toml", "", "empty.toml holds no nonatomic settings"),
    ],
)
def test_a_given_config_without_nonatomic_settings_is_said(project, name, text, said):
    (project / name).write_text(text)
    result = lint("--config", name, "src")
    assert result.exit_code == 1  # the defaults apply: the finding stands
    assert f"warning: {said}: the defaults apply" in result.stderr


@pytest.mark.parametrize(
    ("table", "option", "value", "expected"),
    [
        ("call-without-timeout", "fix-timeout", '"ten"', "must be a positive number, not 'ten'"),
        ("call-without-timeout", "fix-timeout", "0", "must be a positive number, not 0"),
        ("call-without-timeout", "ignore-calls", '"a.b"', "must be a list of strings"),
        ("call-without-timeout", "extra-calls", "[{ keyword = \"t\" }]", "names = [...]"),
        ("retry-write-without-idempotency-key", "min-level", '"medium"', "one of 'low', 'high', 'irreversible'"),
        ("lock-without-ttl", "fix-ttl-ms", "1.5", "must be a positive integer, not 1.5"),
        ("NA105", "fix-attempts", "true", "must be a positive integer, not True"),
        ("state-without-ttl", "state-words", "[1, 2]", "must be a list of strings"),
    ],
)
def test_a_rule_option_of_the_wrong_type_is_exit_2_naming_the_key(project, table, option, value, expected):
    (project / "pyproject.toml").write_text(f"[tool.nonatomic.{table}]\n{option} = {value}\n")
    result = lint("src")
    assert result.exit_code == 2, result.output
    assert f"pyproject.toml: `{table}.{option}` {expected}" in result.stderr if expected.startswith("must") else (
        f"`{table}.{option}` must be" in result.stderr and expected in result.stderr)
    assert "Traceback" not in result.output


def test_an_unknown_rule_option_is_exit_2_listing_the_known_ones(project):
    (project / "nonatomic.toml").write_text("[call-without-timeout]\nfix-timout = 5\n")
    result = lint("src")
    assert result.exit_code == 2
    assert ("nonatomic.toml: unknown option `fix-timout` in [call-without-timeout] "
            "(known: extra-calls, ignore-calls, fix-timeout)") in result.stderr


def test_good_option_values_lint_with_them(project):
    (project / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.nonatomic.call-without-timeout]
        fix-timeout = 7.5
        ignore-calls = []
        extra-calls = ["our_http.fetch", { names = ["our_http.send"], keyword = "deadline" }]
    """))
    result = lint("--format", "json", "src")
    assert result.exit_code == 1
    assert [f["fix"] for f in json.loads(result.stdout)] == ["Add `timeout=7.5`"]


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_every_option_a_rule_reads_is_declared_with_its_type(rule):
    read = set(re.findall(r"options\.get\(\s*\"([a-z-]+)\"", inspect.getsource(inspect.getmodule(rule))))
    if rule.code == "NA201":  # its trigger (in the catalogue) reads `extra-calls` too
        read |= set(re.findall(r"options\.get\(\s*\"([a-z-]+)\"", Path(inspect.getfile(CATALOGUE[0].__class__)).read_text()))
    entry = next(e for e in CATALOGUE if e.code == rule.code)
    assert read == set(entry.options)
