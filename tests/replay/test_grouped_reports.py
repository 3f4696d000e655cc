"""Many findings, readable: text, Markdown and HTML group them by code, then tool, lock or task, with
counts and the first few of each group in full; JSON keeps every one; --max-findings caps every format."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from nonatomic.cli import main
from nonatomic.replay.report.model import GROUP_SHOWN, GROUPS_SHOWN


def _log(path, tasks: int):
    """Per task: a charge_card timeout retried without a verify (NR303 on charge_card), and a
    lock of the task never released (NR201 on the task's own lock)."""
    lines = []
    for n in range(tasks):
        def ev(ms, **fields):
            return {"ts": 1714557600000 + n * 10_000 + ms, "task_id": f"task-{n:04d}", **fields}

        lines += [ev(0, op="lock_acquire", target=f"lock:{n}", owner=f"w-{n}", step=1),
                  ev(100, op="call", step=2, attempt=1, status="timeout", tool="charge_card", target=f"order:{n}"),
                  ev(9000, op="call", step=2, attempt=2, status="ok", tool="charge_card", target=f"order:{n}"),
                  ev(9500, op="task_end", status="completed")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def run(*args):
    return CliRunner().invoke(main, ["replay", "--fail-on", "never", *map(str, args)])


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    return _log(tmp_path_factory.mktemp("grouped") / "gateway.jsonl", 30)


@pytest.fixture(scope="module")
def every(log):
    return json.loads(run("--format", "json", log).output)["findings"]


def test_json_keeps_every_finding(every):
    codes = {f["code"] for f in every}
    assert {"NR201", "NR303"} <= codes
    assert sum(f["code"] == "NR303" for f in every) == 30 and sum(f["code"] == "NR201" for f in every) == 30


def test_text_groups_by_code_then_tool_or_lock(log, every):
    text = run(log).output
    nr303 = sum(f["code"] == "NR303" for f in every)
    assert f"NR303 retry-without-verify: {nr303} finding(s) in 1 group(s)" in text
    assert f"  tool charge_card: {nr303} finding(s), " in text
    assert f"    ... and {nr303 - GROUP_SHOWN} more" in text
    # one group per lock: the first GROUPS_SHOWN listed, the rest counted
    assert "NR201 lock-leak: 30 finding(s) in 30 group(s)" in text
    assert len(re.findall(r"^  lock lock:\d+: 1 finding\(s\)", text, re.M)) == GROUPS_SHOWN
    assert f"  ... and {30 - GROUPS_SHOWN} more group(s) with {30 - GROUPS_SHOWN} finding(s)" in text
    shown = re.findall(r"^    \S+:\d+: (NR\d+) ", text, re.M)
    assert shown.count("NR303") == GROUP_SHOWN and shown.count("NR201") == GROUPS_SHOWN
    # the first of a group are the first in the findings' order
    first = [f for f in every if f["code"] == "NR303"][:GROUP_SHOWN]
    assert all(f["message"] in text for f in first)


def test_markdown_groups(log, every):
    md = run("--format", "md", log).output
    assert "### NR303 retry-without-verify (30)" in md
    assert "| tool charge\\_card | 30 | " in md
    assert f"... and {30 - GROUP_SHOWN} more" in md
    assert f"| {30 - GROUPS_SHOWN} more group(s) | {30 - GROUPS_SHOWN} | | 0 |" in md


def test_html_groups(log, tmp_path):
    out = tmp_path / "r.html"
    run("--format", "html", "--output", out, log)
    html = out.read_text(encoding="utf-8")
    assert 'id="groups"' in html and f"… and {30 - GROUP_SHOWN} more" in html
    assert html.count("<tr data-severity=") == GROUP_SHOWN + GROUPS_SHOWN
    assert f"{GROUP_SHOWN + GROUPS_SHOWN} of 60 findings are listed" in html


@pytest.mark.parametrize("fmt", ["text", "md", "html", "json"])
def test_max_findings_caps_every_format(log, every, fmt, tmp_path):
    out = tmp_path / f"r.{fmt}"
    result = run("--format", fmt, "--max-findings", 3, "--output", out, log)
    assert result.exit_code == 0, result.output
    report = out.read_text(encoding="utf-8")
    if fmt == "json":
        document = json.loads(report)
        assert document["findings"] == every[:3] and document["summary"]["findings"] == len(every)
        return
    listed = {"text": r"^    \S+:\d+: NR\d+ ", "md": r"^\| task-\d+ \|", "html": r"<tr data-severity="}[fmt]
    assert len(re.findall(listed, report, re.M)) == 3


def test_max_findings_zero_still_counts_and_fails(log):
    result = CliRunner().invoke(main, ["replay", "--format", "json", "--max-findings", "0", str(log)])
    document = json.loads(result.output)
    assert document["findings"] == [] and document["summary"]["findings"] == 60 and result.exit_code == 1
