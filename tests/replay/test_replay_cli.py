"""`nonatomic replay`: formats, exit codes, --strict, --output, filters, and lint start-up."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from nonatomic.cli import main


def write(path, *records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def ev(second, **fields):
    return {"ts": f"2024-05-01T10:00:{second:02d}Z", "task_id": "refund-1", "step": 1, "attempt": 1,
            "op": "call", "status": "ok", "tool": "refund_payment", "target": "order:1", **fields}


@pytest.fixture
def clean_log(tmp_path):
    return write(tmp_path / "clean.jsonl", ev(0, op="task_start", status="started", step=None, attempt=None),
                 ev(1, idempotency_key="k1"), ev(2, op="task_end", status="completed", step=None, attempt=None))


@pytest.fixture
def duplicate_refund(tmp_path):
    # A timeout, then a blind retry without a key: the refund happened twice.
    return write(tmp_path / "dup.jsonl",
                 ev(0, op="task_start", status="started", step=None, attempt=None),
                 ev(1, status="timeout"), ev(1, status="ok"), ev(4, attempt=2, status="ok"),
                 ev(5, op="task_end", status="completed", step=None, attempt=None), "not json")


def run(*args):
    return CliRunner().invoke(main, ["replay", *map(str, args)])


def test_json_report_has_the_contract_shape(clean_log):
    result = run("--format", "json", clean_log)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert set(report) == {"summary", "findings", "quarantine", "warnings"}
    assert report["summary"] == {"files": 1, "lines": 3, "events": 3, "quarantined": 0, "tasks": 1, "findings": 0}


def test_findings_exit_1_and_cite_file_and_line(duplicate_refund):
    result = run("--format", "json", duplicate_refund)
    report = json.loads(result.output)
    assert result.exit_code == 1
    assert report["findings"], "a duplicate refund after a timeout must be found"
    for finding in report["findings"]:
        assert {"code", "name", "severity", "task_id", "step", "message", "ts", "events"} <= set(finding)
        assert all(e["file"] == str(duplicate_refund) and 1 <= e["line"] <= 5 for e in finding["events"])
    assert report["quarantine"] == [{"file": str(duplicate_refund), "line": 6, "reason": "invalid JSON",
                                     "raw": "not json"}]


def test_fail_on_never_and_strict(duplicate_refund):
    assert run("--fail-on", "never", duplicate_refund).exit_code == 0
    strict = run("--fail-on", "never", "--strict", duplicate_refund)
    assert strict.exit_code == 2
    assert "1 line(s) quarantined" in strict.output


def test_task_and_time_filters_drop_findings(duplicate_refund):
    unknown = run("--task", "someone-else", duplicate_refund)  # a typo is not "no findings"
    assert unknown.exit_code == 2
    assert "no events of task(s) 'someone-else' in the logs" in unknown.stderr
    assert run("--task", "refund-1", duplicate_refund).exit_code == 1
    assert run("--since", "2024-05-02", duplicate_refund).exit_code == 0
    assert run("--until", "2024-05-01T10:00:00Z", duplicate_refund).exit_code == 0
    assert run("--since", "2024-05-01T09:00:00+00:00", duplicate_refund).exit_code == 1
    assert run("--since", "last tuesday", duplicate_refund).exit_code == 2


def test_text_and_markdown(duplicate_refund, tmp_path):
    text = run("--fail-on", "never", duplicate_refund).output
    assert f"{duplicate_refund}:6: invalid JSON" in text
    assert "6 line(s) = 5 event(s) + 1 quarantined" in text
    out = tmp_path / "report.md"
    assert run("--format", "md", "--output", out, "--fail-on", "never", duplicate_refund).exit_code == 0
    markdown = out.read_text()
    assert markdown.startswith("# nonatomic replay")
    assert f"| {md_text(duplicate_refund)} | 6 | invalid JSON |" in markdown


def md_text(value: object) -> str:
    """What a reader sees: the Markdown report escapes `_` (and the other specials) in log values."""
    return str(value).replace("_", "\\_")


HOSTILE = "evil\x1b[2J\x1b]0;pwned\x07\r\u202eline"
"""Terminal escapes (ESC, an OSC title, BEL, a carriage return) and a bidi override."""


@pytest.fixture
def hostile_log(tmp_path):
    # Every value a report prints comes from the log: task id, tool, target, the file name,
    # and a quarantined line whose reason quotes its bad timestamp.
    values = {"task_id": HOSTILE, "tool": f"refund{HOSTILE}", "target": f"order:{HOSTILE}"}
    return write(tmp_path / f"log{HOSTILE[4:9]}.jsonl", ev(1, status="timeout", **values), ev(4, attempt=2, **values),
                 {**ev(5, **values), "ts": f"noon{HOSTILE}"})


def test_text_report_cannot_drive_the_terminal(hostile_log):
    result = run("--fail-on", "never", hostile_log)
    assert result.exit_code == 0, result.output
    assert "NR303" in result.output and "Quarantined 1 line(s)" in result.output
    for unsafe in ("\x1b", "\x07", "\r", "\u202e"):
        assert unsafe not in result.output
    assert "evil\\x1b[2J\\x1b]0;pwned\\x07\\x0d\\u202eline" in result.output


def test_markdown_report_escapes_like_the_markdown_timeline(tmp_path):
    link = "[click](https://example.invalid/x) <img src=x> `code` *bold*"
    log = write(tmp_path / "log.jsonl", ev(1, status="timeout", task_id=link), ev(4, attempt=2, task_id=link))
    markdown = run("--format", "md", "--fail-on", "never", log).output
    assert "NR303" in markdown
    # the message and its "because" lines share the cell, one per line (<br>, the one markup written)
    cells = markdown.split("## Findings")[1].replace("|---", "")
    assert cells.count("<br>because ") == 3
    assert not re.search(r"(?<!\\)[\[<`*]", cells.replace("<br>", " "))
    assert "\\[click\\](https://example.invalid/x) \\<img src=x\\> \\`code\\` \\*bold\\*" in markdown


def test_unreadable_input_and_bad_mapping_exit_2(clean_log, tmp_path):
    missing = run(tmp_path / "nope.jsonl")
    assert missing.exit_code == 2 and "nope.jsonl" in missing.output
    bad_map = write(tmp_path / "map.yaml", "fields: {taskid: trace}")
    mapped = run("--mapping", bad_map, clean_log)
    assert mapped.exit_code == 2 and "not a canonical field" in mapped.output
    assert run("--memory-limit", "lots", clean_log).exit_code == 2


def test_db_keeps_events_across_runs(clean_log, tmp_path):
    db = tmp_path / "r.duckdb"
    first = json.loads(run("--format", "json", "--db", db, clean_log).output)
    again = json.loads(run("--format", "json", "--db", db, clean_log).output)
    assert first["summary"].pop("changes")["new"] == [str(clean_log)]
    assert again["summary"].pop("changes")["unchanged"] == [str(clean_log)]
    assert first["summary"] == again["summary"]


def test_lint_does_not_import_duckdb_or_pandas():
    probe = ("import sys; from click.testing import CliRunner; from nonatomic.cli import main; "
             "CliRunner().invoke(main, ['lint', '--help']); "
             "print(sorted(m for m in ('duckdb', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("command", ["replay", "timeline"])
def test_running_out_of_the_memory_given_is_exit_2_with_what_to_do(duplicate_refund, monkeypatch, command):
    """DuckDB fails a query it cannot fit in --memory-limit (seen at 10M events under 1GB):
    the run says so and how to go on, instead of a traceback and exit 1."""
    import duckdb

    from nonatomic.replay.api import Replay

    def exhausted(self, *args, **kwargs):
        raise duckdb.OutOfMemoryException("Out of Memory Error: failed to pin block of size 256.0 KiB\nPossible solutions")

    monkeypatch.setattr(Replay, "find", exhausted)
    result = CliRunner().invoke(main, [command, "--memory-limit", "1GB", str(duplicate_refund)])
    assert result.exit_code == 2, result.output
    assert "out of memory under --memory-limit 1GB (Out of Memory Error: failed to pin block" in result.output
    assert "raise --memory-limit" in result.output and "Possible solutions" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
