"""The replay and timeline paths a CI script or a notebook takes: logs from pipes,
reports into new directories, typos that must not pass, and the Python API."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from nonatomic.cli import main
from nonatomic.replay import open_logs

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "duplicate_refund.jsonl"
TASK = "support-7f3a21"


def nonatomic(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nonatomic", *args], capture_output=True, timeout=120, **kwargs)


def findings_of(stdout: bytes) -> list[tuple]:
    report = json.loads(stdout)
    return [(f["code"], f["task_id"], f["events"][0]["file"], f["events"][0]["line"]) for f in report["findings"]]


def feed(fd: int, data: bytes) -> threading.Thread:
    """Write `data` into the pipe's write end from another thread, then close it."""
    def write():
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)

    thread = threading.Thread(target=write)
    thread.start()
    return thread


@pytest.mark.parametrize("name", ["-", "/dev/stdin"])
def test_replay_reads_standard_input_from_a_pipe(name):
    read, write = os.pipe()
    writer = feed(write, SAMPLE.read_bytes())
    with os.fdopen(read, "rb") as stdin:
        result = nonatomic("replay", "--format", "json", "--fail-on", "never", name, stdin=stdin)
    writer.join()
    assert result.returncode == 0, result.stderr
    assert findings_of(result.stdout) == [("NR303", TASK, name, 4)]  # cited as given
    assert json.loads(result.stdout)["summary"]["lines"] == 10


def test_replay_reads_a_process_substitution(tmp_path):
    # what bash's `<(zcat log.jsonl.gz)` passes: /dev/fd/N, the read end of a pipe
    read, write = os.pipe()
    writer = feed(write, gzip.compress(SAMPLE.read_bytes()))
    try:
        result = nonatomic("replay", "--format", "json", "--fail-on", "never", f"/dev/fd/{read}", pass_fds=(read,))
    finally:
        os.close(read)
        writer.join()
    assert result.returncode == 0, result.stderr
    assert [code for code, *_ in findings_of(result.stdout)] == ["NR303"]


def test_two_pipes_given_one_name_into_a_kept_database_are_two_files(tmp_path):
    # `<(zcat monday.gz)` and, the next day, `<(zcat tuesday.gz)`: the same /dev/fd/N name, other
    # pipes; each keeps its events, under a name a report can show (not the pipe's /proc path).
    db = tmp_path / "r.duckdb"
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    for day in (lines[:3], lines[3:]):
        read, write = os.pipe()
        fixed = os.dup2(read, 60)  # both days' pipes at one descriptor number
        os.close(read)
        writer = feed(write, b"".join(day))
        try:
            result = nonatomic("replay", "--format", "json", "--fail-on", "never", "--db", str(db), "/dev/fd/60",
                               pass_fds=(fixed,))
        finally:
            os.close(fixed)
            writer.join()
        assert result.returncode == 0, result.stderr
    with open_logs([], db=db) as kept:
        files = kept.con.execute("SELECT file, count(*) FROM events GROUP BY file ORDER BY file").fetchall()
    assert files == [("/dev/fd/60", 3), ("/dev/fd/60 (2)", len(lines) - 3)]


def test_replay_reads_a_named_pipe_once_without_hanging(tmp_path):
    fifo = tmp_path / "gateway.jsonl"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as pipe:  # blocks until the replay opens it
            pipe.write(SAMPLE.read_bytes())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    result = nonatomic("replay", "--format", "json", "--fail-on", "never", str(fifo))
    writer.join(timeout=10)
    assert result.returncode == 0, result.stderr
    assert findings_of(result.stdout) == [("NR303", TASK, str(fifo), 4)]


def test_timeline_reads_standard_input():
    result = nonatomic("timeline", "-", "--task", TASK, "--color", "never", input=SAMPLE.read_bytes())
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().startswith(f"task {TASK}: 10 event(s)")


@pytest.mark.parametrize(
    "command",
    [
        ["lint", "--no-cache", "--exit-zero", "--format", "sarif", "{src}"],
        ["replay", "--fail-on", "never", "--format", "json", "{log}"],
        ["timeline", "--format", "html", "{log}"],
    ],
    ids=lambda command: command[0],
)
def test_output_creates_missing_parent_directories(tmp_path, command):
    (tmp_path / "tool.py").write_text("import requests\nrequests.post(u, json={})\n")
    report = tmp_path / "reports" / "ci" / "out.txt"
    args = [a.format(src=tmp_path / "tool.py", log=SAMPLE) for a in command]
    result = CliRunner().invoke(main, [*args, "--output", str(report)])
    assert result.exit_code == 0, result.output
    assert report.stat().st_size > 0


def test_output_that_cannot_be_written_is_exit_2_not_a_traceback(tmp_path):
    (tmp_path / "taken").write_text("a file, not a directory")
    result = CliRunner().invoke(main, ["replay", "--output", str(tmp_path / "taken" / "r.json"), str(SAMPLE)])
    assert result.exit_code == 2
    assert "cannot write:" in result.stderr
    assert not isinstance(result.exception, OSError)


@pytest.mark.parametrize("command", ["replay", "timeline"])
@pytest.mark.parametrize(
    ("option", "code", "said"),
    [
        ("--select", "NR999", "unknown detector code or prefix: 'NR999' (see `nonatomic rules`)"),
        ("--ignore", "NR9", "unknown detector code or prefix: 'NR9'"),
        ("--select", "NA101", "'NA101' is a lint rule code: replay runs the NR detectors"),
    ],
)
def test_unknown_codes_are_a_usage_error(command, option, code, said):
    result = CliRunner().invoke(main, [command, option, code, str(SAMPLE)])
    assert result.exit_code == 2
    assert said in result.stderr


@pytest.mark.parametrize("command", ["replay", "timeline"])
def test_a_task_typo_is_the_same_clear_error_in_replay_and_timeline(command):
    result = CliRunner().invoke(main, [command, "--task", "support-7f3a2", str(SAMPLE)])
    assert result.exit_code == 2
    assert result.stderr == "nonatomic: error: no events of task(s) 'support-7f3a2' in the logs\n"


def test_replay_colours_only_when_asked_or_on_a_terminal(on_a_terminal, without_no_color):
    assert b"\x1b[" not in nonatomic("replay", str(SAMPLE)).stdout
    assert b"\x1b[" in nonatomic("replay", "--color", "always", str(SAMPLE)).stdout
    assert b"\x1b[" in on_a_terminal(["replay", str(SAMPLE)], without_no_color)
    assert b"\x1b[" not in on_a_terminal(["replay", str(SAMPLE)], {**without_no_color, "NO_COLOR": "1"})
    assert b"\x1b[" not in on_a_terminal(["timeline", str(SAMPLE)], {**without_no_color, "NO_COLOR": "1"})
    assert b"\x1b[" in on_a_terminal(["timeline", "--color", "always", str(SAMPLE)],
                                     {**without_no_color, "NO_COLOR": "1"})


def test_the_text_report_escapes_log_values(tmp_path):
    log = tmp_path / "hostile.jsonl"
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    log.write_text("".join(json.dumps({**row, "task_id": "t\x1b[2J"}) + "\n" for row in rows))
    out = nonatomic("replay", "--color", "always", str(log)).stdout.decode()
    assert "task t\\x1b[2J step" in out and "\x1b[2J" not in out


@pytest.mark.parametrize("db", [False, True])
def test_the_connection_stays_usable_after_every_api_call(tmp_path, db):
    with open_logs(SAMPLE, db=tmp_path / "x.duckdb" if db else None) as replay:
        for call in (replay.summary, replay.quarantine_rows, replay.detect, replay.findings,
                     lambda: replay.missing_tasks(["nobody"]), lambda: replay.timeline(TASK)):
            call()
            assert replay.con.sql("SELECT count(*) FROM events").fetchall() == [(10,)]


def test_findings_give_ts_as_a_timestamp_like_events():
    with open_logs(SAMPLE) as replay:
        findings, events = replay.findings(), replay.events()
    for column in (findings["ts"], events["ts"]):
        assert pd.api.types.is_datetime64_any_dtype(column) and str(column.dt.tz) == "UTC"
    assert findings["ts"][0] in set(events["ts"])  # the witness event's own time


def test_one_tasks_timeline_displays_in_a_notebook():
    with open_logs(SAMPLE) as replay:
        view = replay.timeline(TASK)
        with pytest.raises(KeyError, match="no events of task"):
            replay.timeline("nobody")
    html = view._repr_html_()  # what Jupyter calls
    assert html.startswith('<iframe sandbox="" srcdoc="&lt;!DOCTYPE html&gt;')
    assert "<svg" not in html and "&lt;svg" in html  # the page is an attribute, escaped
    assert "refund_payment" in view.html() and "<svg" in view.html()
    assert str(view).startswith(f"task {TASK}: 10 event(s)")


def test_public_api_functions_have_docstrings():
    from nonatomic.replay import api

    public = [getattr(api.Replay, name) for name in vars(api.Replay) if not name.startswith("_")]
    public += [api.open_logs, api.keep, api.TimelineView.html]
    assert [f.__name__ for f in public if not (f.__doc__ or "").strip()] == []


def test_replay_settings_are_read_from_a_standalone_nonatomic_toml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nonatomic.toml").write_text('[replay]\nmin-backoff-ms = "x"\n')
    result = CliRunner().invoke(main, ["replay", str(SAMPLE)])
    assert result.exit_code == 2
    assert "nonatomic.toml: min-backoff-ms must be a whole number of milliseconds" in result.stderr

    def storms() -> list[str]:
        report = CliRunner().invoke(main, ["replay", "--format", "json", "--select", "NR304", str(SAMPLE)]).stdout
        return [f["code"] for f in json.loads(report)["findings"]]

    (tmp_path / "nonatomic.toml").unlink()
    assert storms() == []  # the retry came 2 s later: slower than the default minimum of 100 ms
    (tmp_path / "nonatomic.toml").write_text("[replay]\nmin-backoff-ms = 5000\n")
    assert storms() == ["NR304"]
