"""What `nonatomic lint` tells a CI log or a terminal: what it checked, fixes it held
back, code frames, statistics, standard input and colour."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nonatomic.cli import main

HAZARD = "import requests\n\ndef refund(order):\n    return requests.post(URL, json=order)\n"
TWO = HAZARD + "\ndef notify(user):\n    return requests.get(URL)\n"
CLEAN = "import requests\n\ndef refund(order):\n    return requests.post(URL, json=order, timeout=10)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(*args: str, **kwargs):
    return CliRunner().invoke(main, ["lint", "--no-cache", *args], **kwargs)


def nonatomic(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nonatomic", *args], capture_output=True, timeout=120, **kwargs)


def test_a_clean_run_says_what_it_checked(project):
    for i in range(3):
        (project / f"m{i}.py").write_text(CLEAN)
    result = lint(".")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "Checked 3 files, no findings.\n", "")
    (project / "m0.py").write_text(HAZARD)
    result = lint(".")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-2:] == ["Checked 3 files, 1 finding.",
                                               "(1 fix available with `--fix --unsafe-fixes`.)"]


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_machine_formats_say_it_on_stderr(project, fmt):
    (project / "tool.py").write_text(TWO)
    result = lint("--format", fmt, ".")
    assert result.exit_code == 1
    assert result.stderr == "Checked 1 file, 2 findings.\n"
    assert "Checked" not in result.stdout
    if fmt != "github":
        json.loads(result.stdout)


def test_a_directory_without_python_files_is_a_warning_not_a_silent_pass(project):
    (project / "docs").mkdir()
    (project / "docs" / "index.md").write_text("# hello\n")
    result = lint("docs")
    assert result.exit_code == 0
    assert result.stdout == "Checked 0 files, no findings.\n"
    assert result.stderr == "warning: no Python file under docs\n"


def test_fix_and_diff_alone_say_how_many_fixes_need_unsafe_fixes(project):
    path = project / "tool.py"
    path.write_text(HAZARD)
    fix = lint("--fix", "tool.py")
    assert path.read_text() == HAZARD  # no fix is safe: nothing changed
    assert "1 fix available with --unsafe-fixes." in fix.stderr
    assert fix.exit_code == 1
    path.write_text(TWO)
    diff = lint("--diff", "tool.py")
    assert (diff.exit_code, diff.stdout) == (0, "")
    assert "2 fixes available with --unsafe-fixes." in diff.stderr
    applied = lint("--fix", "--unsafe-fixes", "tool.py")
    assert applied.exit_code == 0
    assert "Fixed 2 findings in 1 file." in applied.stderr and "available" not in applied.stderr
    assert "timeout=30" in path.read_text()


def test_show_source_draws_ruffs_full_code_frame(project):
    (project / "tool.py").write_text(HAZARD.replace("order)\n", "order)  # \x1b[31mred\n"))
    result = lint("--show-source", "tool.py")
    frame = result.stdout.splitlines()[1:8]
    assert frame == [
        "  |",
        "2 |",
        "3 | def refund(order):",
        "4 |     return requests.post(URL, json=order)  # \ufffd[31mred",  # no escape reaches the terminal
        "  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ NA201",
        "  |",
        "Checked 1 file, 1 finding.",
    ]
    assert "  |" not in lint("tool.py").stdout


def test_statistics_honours_format_json(project):
    (project / "tool.py").write_text(TWO)
    (project / "broken.py").write_text("def f(:\n")
    result = lint("--statistics", "--format", "json", ".")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == [
        {"code": "NA201", "name": "call-without-timeout", "count": 2, "fixable": 2},
        {"code": "NA000", "name": "syntax-error", "count": 1, "fixable": 0},
    ]
    assert result.stderr == "Checked 2 files, 3 findings.\n"
    text = lint("--statistics", ".").stdout.splitlines()
    assert text[0].split() == ["2", "NA201", "call-without-timeout", "[fix]"]


def test_standard_input_is_linted_under_its_stdin_filename(project):
    (project / "pyproject.toml").write_text('[tool.nonatomic]\nper-file-ignores = { "tests/**" = ["NA201"] }\n')
    result = nonatomic("lint", "--no-cache", "-", "--stdin-filename", "src/tool.py", input=HAZARD.encode())
    assert result.returncode == 1
    assert result.stdout.decode().startswith("src/tool.py:4:12: NA201 ")
    ignored = nonatomic("lint", "--no-cache", "-", "--stdin-filename", "tests/test_tool.py", input=HAZARD.encode())
    assert (ignored.returncode, ignored.stdout.decode()) == (0, "Checked 1 file, no findings.\n")
    unnamed = nonatomic("lint", "--no-cache", "--format", "json", "-", input=HAZARD.encode())
    assert [f["path"] for f in json.loads(unnamed.stdout)] == ["-"]


def test_fix_of_standard_input_prints_the_fixed_source(project):
    result = nonatomic("lint", "--no-cache", "--fix", "--unsafe-fixes", "-", "--stdin-filename", "tool.py",
                       input=HAZARD.encode())
    assert result.returncode == 0
    assert result.stdout.decode() == HAZARD.replace("json=order)", "json=order, timeout=30)")
    assert "Fixed 1 finding in 1 file." in result.stderr.decode()


def test_standard_input_with_other_paths_is_a_usage_error(project):
    (project / "a.py").write_text(CLEAN)
    result = lint("-", "a.py", input=HAZARD)
    assert result.exit_code == 2
    assert "`-` (standard input) cannot be combined with other paths" in result.stderr


@pytest.mark.parametrize(
    ("args", "no_color", "coloured"),
    [
        ([], None, True),  # a terminal
        ([], "1", False),  # NO_COLOR
        (["--color", "always"], "1", True),  # an explicit choice wins
        (["--color", "never"], None, False),
    ],
)
def test_color_follows_the_terminal_no_color_and_the_option(project, on_a_terminal, without_no_color, args,
                                                          no_color, coloured):
    (project / "tool.py").write_text(HAZARD)
    env = dict(without_no_color)
    if no_color is not None:
        env["NO_COLOR"] = no_color
    out = on_a_terminal(["lint", "--no-cache", *args, "tool.py"], env)
    assert b"NA201" in out
    assert (b"\x1b[" in out) == coloured


def test_color_always_reaches_a_pipe(project):
    (project / "tool.py").write_text(HAZARD)
    assert b"\x1b[" not in nonatomic("lint", "--no-cache", "tool.py").stdout
    assert b"\x1b[" in nonatomic("lint", "--no-cache", "--color", "always", "tool.py").stdout


def test_output_file_gets_no_colour(project, on_a_terminal, without_no_color):
    (project / "tool.py").write_text(HAZARD)
    on_a_terminal(["lint", "--no-cache", "--output", "report.txt", "tool.py"], without_no_color)
    assert "\x1b[" not in Path("report.txt").read_text()


def test_write_baseline_creates_missing_parent_directories(project):
    (project / "tool.py").write_text(HAZARD)
    result = lint("--write-baseline", "ci/state/baseline.json", "tool.py")
    assert result.exit_code == 0, result.output
    assert "Wrote 1 finding to ci/state/baseline.json." in result.stderr
    assert lint("--baseline", "ci/state/baseline.json", "tool.py").exit_code == 0
