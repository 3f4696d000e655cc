"""The `nonatomic lint` command end to end: exit codes, formats, config, suppression."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from nonatomic.cli import main

HAZARD = "import requests\n\ndef refund(order):\n    return requests.post(URL, json=order)\n"
CLEAN = "import requests\n\ndef refund(order):\n    return requests.post(URL, json=order, timeout=10)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(main, ["lint", "--no-cache", *args], catch_exceptions=False)


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_exit_codes_follow_the_spec(project):
    write(project, "clean.py", CLEAN)
    assert run("clean.py").exit_code == 0
    write(project, "tool.py", HAZARD)
    result = run(".")
    assert result.exit_code == 1
    assert "tool.py:4:12: NA201" in result.output
    assert run("--exit-zero", ".").exit_code == 0
    assert run("--select", "NA999", ".").exit_code == 2
    assert run("missing_dir").exit_code == 2


def test_json_has_every_spec_field(project):
    write(project, "tool.py", HAZARD)
    (finding,) = json.loads(run("--format", "json", "tool.py").stdout)
    assert {"code", "name", "severity", "path", "line", "col", "end_line", "end_col", "message", "fix"} <= set(finding)
    assert (finding["code"], finding["name"], finding["severity"]) == ("NA201", "call-without-timeout", "error")
    assert (finding["line"], finding["col"], finding["end_line"]) == (4, 12, 4)
    assert finding["fix"] == "Add `timeout=30`"


def test_syntax_error_is_a_finding_and_other_files_are_still_linted(project):
    write(project, "broken.py", "def refund(order)\n    pass\n")
    write(project, "legacy.py", "print 'hello'\n")
    write(project, "tool.py", HAZARD)
    result = run("--format", "json", ".")
    found = {(f["path"], f["code"], f["line"]) for f in json.loads(result.stdout)}
    assert found == {("broken.py", "NA000", 1), ("legacy.py", "NA000", 1), ("tool.py", "NA201", 4)}
    assert result.exit_code == 1


def test_encoding_declaration_and_bom_are_read(project):
    (project / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nimport requests\nNAME = '\xe9t\xe9'\nrequests.get(NAME)\n"
    )
    (project / "bom.py").write_bytes(b"\xef\xbb\xbfimport requests\nrequests.get(u)\n")
    found = {(f["path"], f["line"]) for f in json.loads(run("--format", "json", ".").stdout)}
    assert found == {("latin.py", 4), ("bom.py", 2)}


def test_noqa_and_ignore_file(project):
    write(project, "a.py", "import requests\nrequests.get(u)  # noqa: NA201\nrequests.get(u)  # noqa\n"
                           "requests.get(u)  # noqa: E501\nrequests.get(u)  # noqa:NA101,NA201\n")
    write(project, "b.py", "# generated\n# nonatomic: ignore-file\nimport requests\nrequests.get(u)\n")
    lines = [f["line"] for f in json.loads(run("--format", "json", ".").stdout)]
    assert lines == [4]


def test_select_ignore_and_prefixes(project):
    write(project, "tool.py", HAZARD)
    assert run("--ignore", "NA2", "tool.py").exit_code == 0
    assert run("--select", "NA2", "tool.py").exit_code == 1
    assert run("--select", "NA201", "--ignore", "NA201", "tool.py").exit_code == 0


def test_select_all_takes_the_rules_that_are_off_by_default(project):
    # NA202 is off by default: a prefix leaves it off, ALL (as in ruff) turns it on.
    write(project, "agent.py", "from agents import Runner\n\nasync def main(agent):\n    return await Runner.run(agent, 'hi')\n")

    def codes(*args):
        return {f["code"] for f in json.loads(run("--format", "json", *args, "agent.py").stdout)}

    assert codes() == set() and codes("--select", "NA2") == set()
    assert codes("--select", "ALL") == {"NA202"}
    assert codes("--select", "all", "--ignore", "NA202") == set()


def test_config_in_pyproject_is_found_walking_up(project):
    write(project, "pyproject.toml", textwrap.dedent("""
        [tool.nonatomic]
        exclude = ["generated/"]
        per-file-ignores = {"tests/**" = ["NA201"]}

        [tool.nonatomic.call-without-timeout]
        extra-calls = ["crm.client.fetch"]
    """))
    write(project, "generated/a.py", HAZARD)
    write(project, "tests/test_a.py", HAZARD)
    write(project, "src/app.py", "from crm.client import fetch\nfetch('orders')\n")
    found = {(f["path"], f["code"]) for f in json.loads(run("--format", "json", ".").stdout)}
    assert found == {("src/app.py", "NA201")}
    # An excluded file named explicitly is still linted (as in ruff).
    assert run("generated/a.py").exit_code == 1


@pytest.mark.parametrize(
    "config",
    [
        "[tool.nonatomic]\nselect = [\"NA9\"]\n",
        "[tool.nonatomic]\nunknown-key = 1\n",
        "[tool.nonatomic]\nselect = \"NA2\nbroken",
        "[tool.nonatomic]\nper-file-ignores = {\"a.py\" = [\"XX1\"]}\n",
    ],
)
def test_bad_config_is_a_clear_error_and_exit_2(project, config):
    write(project, "pyproject.toml", config)
    write(project, "tool.py", HAZARD)
    result = CliRunner().invoke(main, ["lint", "--no-cache", "."])
    assert result.exit_code == 2
    assert "pyproject.toml" in result.output or "unknown rule code" in result.output


def test_gitignore_is_respected(project):
    write(project, ".gitignore", "build_out/\n*.gen.py\n!keep.gen.py\n")
    write(project, "build_out/a.py", HAZARD)
    write(project, "x.gen.py", HAZARD)
    write(project, "keep.gen.py", HAZARD)
    write(project, "sub/.gitignore", "local.py\n")
    write(project, "sub/local.py", HAZARD)
    write(project, "sub/kept.py", HAZARD)
    write(project, ".venv/lib/site.py", HAZARD)
    paths = {f["path"] for f in json.loads(run("--format", "json", ".").stdout)}
    assert paths == {"keep.gen.py", "sub/kept.py"}


def test_parallel_results_equal_serial(project):
    for i in range(30):
        write(project, f"pkg/m{i:02}.py", HAZARD * (i % 3 + 1) + ("def broken(:\n" if i == 7 else ""))
    serial = run("--jobs", "1", "--format", "json", ".").stdout
    parallel = run("--jobs", "2", "--format", "json", ".").stdout
    assert serial == parallel
    expected = sum(i % 3 + 1 for i in range(30) if i != 7) + 1  # every call, and one NA000
    assert len(json.loads(serial)) == expected


def test_cache_keeps_the_other_sites_of_a_grouped_finding(project):
    write(project, "memory.py", (
        "_sessions = {}\n"
        "def remember(session_id, turn):\n    _sessions.setdefault(session_id, []).append(turn)\n"
        "def forget(session_id):\n    _sessions.pop(session_id, None)\n"
    ))
    cli = CliRunner()
    first = cli.invoke(main, ["lint", "--select", "NA301", "--format", "json", "."])
    again = cli.invoke(main, ["lint", "--select", "NA301", "--format", "json", "."])
    assert json.loads(first.stdout)[0]["related"] == [{"line": 5, "col": 5}]
    assert again.exit_code == first.exit_code == 1 and again.stdout == first.stdout


def test_cache_reuses_results_and_notices_changes(project):
    path = write(project, "tool.py", HAZARD)
    cli = CliRunner()
    first = cli.invoke(main, ["lint", "--format", "json", "."]).stdout
    assert (project / ".nonatomic_cache").is_dir()
    assert cli.invoke(main, ["lint", "--format", "json", "."]).stdout == first
    path.write_text(CLEAN)
    assert cli.invoke(main, ["lint", "--format", "json", "."]).stdout == "[]\n"
    # Same bytes again, new mtime: the content hash finds the old entry.
    path.write_text(HAZARD)
    os.utime(path, (1, 1))
    assert cli.invoke(main, ["lint", "--format", "json", "."]).stdout == first


def test_github_format_escapes_properties(project):
    write(project, "a,b.py", HAZARD)
    line = run("--format", "github", ".").output.strip()
    assert line.startswith("::error file=a%2Cb.py,line=4,col=12,endLine=4,endColumn=")
    assert ",title=NA201::NA201 `requests.post(...)` has no timeout" in line


def test_statistics_and_output_file(project):
    write(project, "tool.py", HAZARD + "requests.get(u)\n")
    result = run("--statistics", "--output", "report.txt", ".")
    assert result.exit_code == 1
    assert (project / "report.txt").read_text().split() == ["2", "NA201", "call-without-timeout", "[fix]"]


def test_fix_and_diff(project):
    path = write(project, "tool.py", HAZARD)
    diff = run("--diff", "--unsafe-fixes", "tool.py")
    assert "+    return requests.post(URL, json=order, timeout=30)" in diff.output
    assert path.read_text() == HAZARD  # --diff changes nothing
    safe_only = run("--fix", "tool.py")
    assert path.read_text() == HAZARD and "--unsafe-fixes" in safe_only.output
    assert run("--fix", "--unsafe-fixes", "tool.py").exit_code == 0
    assert path.read_text() == HAZARD.replace("json=order)", "json=order, timeout=30)")


def test_baseline_reports_only_new_findings_across_line_shifts(project):
    path = write(project, "tool.py", HAZARD)
    assert run("--write-baseline", "baseline.json", ".").exit_code == 0
    assert run("--baseline", "baseline.json", ".").exit_code == 0
    # Unrelated lines above shift the old finding; one new finding appears.
    path.write_text("# a comment\n\n" + HAZARD + "\ndef cancel(order):\n    return requests.delete(URL)\n")
    result = run("--baseline", "baseline.json", "--format", "json", ".")
    assert [(f["line"], f["message"].split("`")[1]) for f in json.loads(result.stdout)] == [(9, "requests.delete(...)")]


def test_rules_and_explain(project):
    cli = CliRunner()
    table = cli.invoke(main, ["rules"]).output
    assert "NA201   call-without-timeout" in table
    text = cli.invoke(main, ["explain", "na201"]).output
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert section in text
    assert cli.invoke(main, ["explain", "NA999"]).exit_code == 2


def test_rule_crash_is_reported_with_file_and_rule_and_exit_2(project, monkeypatch):
    from nonatomic.rules.lint import na201_call_without_timeout as na201

    def visit_Call(self, node):  # libcst dispatches on the method's own name
        raise RuntimeError("boom")

    monkeypatch.setattr(na201.CallWithoutTimeout, "visit_Call", visit_Call)
    write(project, "tool.py", HAZARD)
    write(project, "broken.py", "def x(:\n")
    result = CliRunner().invoke(main, ["lint", "--no-cache", "--jobs", "1", "."])
    assert result.exit_code == 2
    assert "tool.py: rule NA201 failed: RuntimeError: boom" in result.stderr
    assert "broken.py:1:7: NA000" in result.output


def test_lint_does_not_import_duckdb_or_pandas(tmp_path):
    (tmp_path / "a.py").write_text(CLEAN)
    code = (
        "import sys\nfrom nonatomic.cli import main\n"
        "try:\n    main(['lint', '--no-cache', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('duckdb', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_pathological_files_never_crash_the_run(project):
    # Deep but legal nesting is linted; deeper than CPython allows is NA000 (libcst's
    # native parser would overflow its stack on it, so it never sees such a file).
    write(project, "deep_ok.py", "import requests\nx = " + "[" * 199 + "1" + "]" * 199 + "\nrequests.get(u)\n")
    write(project, "too_deep.py", "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n")
    # A generated 20000-term expression: libcst would take minutes; CPython checks it.
    write(project, "long_chain.py", "import requests\nx = " + " + ".join(["1"] * 20000) + "\nrequests.get(u)\n")
    result = run("--format", "json", ".")
    found = {(f["path"], f["code"], f["line"]) for f in json.loads(result.stdout)}
    assert found == {("deep_ok.py", "NA201", 3), ("too_deep.py", "NA000", 1)}
    assert "note: long_chain.py: a line over 20000 bytes: only its syntax was checked" in result.stderr


def test_files_over_the_size_limit_are_only_syntax_checked(project):
    write(project, "pyproject.toml", "[tool.nonatomic]\nmax-file-bytes = 2000\n")
    write(project, "generated.py", "import requests\nTABLE = [\n" + "    1,\n" * 500 + "]\nrequests.get(u)\n")
    write(project, "generated_broken.py", "TABLE = [\n" + "    1,\n" * 500 + "\n")
    write(project, "tool.py", HAZARD)
    result = run("--format", "json", ".")
    found = {(f["path"], f["code"]) for f in json.loads(result.stdout)}
    assert found == {("generated_broken.py", "NA000"), ("tool.py", "NA201")}
    assert "note: generated.py: larger than max-file-bytes (2000)" in result.stderr


def test_an_unparsable_file_of_a_test_tree_is_info(project):
    # A parser's tests keep broken files on purpose; the same file elsewhere is an error.
    write(project, "tests/test_files/syntax_error_script.py", "def broken(\n")
    write(project, "tests/test_loader.py", "print 'hello'\n")
    write(project, "contests/broken.py", "def refund(order)\n    pass\n")
    found = {(f["path"], f["severity"], f["message"].endswith("(in a test tree)"))
             for f in json.loads(run("--format", "json", ".").stdout)}
    assert found == {("tests/test_files/syntax_error_script.py", "info", True),
                     ("tests/test_loader.py", "info", True),
                     ("contests/broken.py", "error", False)}


def test_findings_in_a_test_tree_are_info(project):
    # A test's helper that calls a sandbox hangs one test run, not a service.
    write(project, "tests/helpers/sandbox.py", HAZARD)
    write(project, "tests/test_refund.py", "from tenacity import retry\n\n" + HAZARD)
    write(project, "contests/tool.py", HAZARD)
    found = {(f["path"], f["code"], f["severity"]) for f in json.loads(run("--format", "json", ".").stdout)}
    assert found == {("tests/helpers/sandbox.py", "NA201", "info"), ("tests/test_refund.py", "NA201", "info"),
                     ("contests/tool.py", "NA201", "error")}


def test_findings_in_a_project_template_are_info(project):
    # A scaffolding tool ships templates whose placeholders are filled in before they are Python.
    write(project, "cli/templates/{{ toolkit_name }}/{{ package_name }}/__main__.py",
          "from {{ package_name }} import app\n")
    write(project, "cli/templates/{{cookiecutter.slug}}/tool.py", HAZARD)
    write(project, "cli/templates/render.py", HAZARD)
    found = {(f["path"], f["code"], f["severity"], f["message"].endswith("(in a project template)"))
             for f in json.loads(run("--format", "json", ".").stdout)}
    assert found == {("cli/templates/{{ toolkit_name }}/{{ package_name }}/__main__.py", "NA000", "info", True),
                     ("cli/templates/{{cookiecutter.slug}}/tool.py", "NA201", "info", True),
                     ("cli/templates/render.py", "NA201", "error", False)}


def test_findings_in_vendored_code_are_info(project):
    # A vendored copy is replaced by upstream's next release, never fixed in place.
    write(project, "pkg/_vendor/jwt/jwks.py", HAZARD)
    write(project, "pkg/third_party/broken.py", "def refund(order)\n    pass\n")
    write(project, "pkg/vendors/tool.py", HAZARD)
    found = {(f["path"], f["code"], f["severity"], f["message"].endswith("(in vendored code)"))
             for f in json.loads(run("--format", "json", ".").stdout)}
    assert found == {("pkg/_vendor/jwt/jwks.py", "NA201", "info", True),
                     ("pkg/third_party/broken.py", "NA000", "info", True),
                     ("pkg/vendors/tool.py", "NA201", "error", False)}
