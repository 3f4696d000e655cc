"""Nothing silent: input that hides events from the detectors is a warning naming the likely cause."""

from __future__ import annotations

import json

from click.testing import CliRunner

from nonatomic.cli.replay import replay as replay_command


def run(*args):
    return CliRunner().invoke(replay_command, [str(a) for a in args], catch_exceptions=False)


def jsonl(tmp_path, name, *records):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def call(ts, attempt, status, **fields):
    return {"ts": ts, "task_id": "t1", "op": "call", "attempt": attempt, "status": status,
            "tool": "refund_payment", "target": "order:1", **fields}


def test_a_wholly_quarantined_file_says_why_and_strict_fails(tmp_path):
    pretty = json.dumps(call("2024-05-01T10:00:00Z", 1, "ok", step=1), indent=2)  # one event spread over lines
    path = jsonl(tmp_path, "pretty.jsonl", pretty)
    report = json.loads(run("--format", "json", path).stdout)
    [warning] = report["warnings"]
    assert warning["file"] == str(path)
    lines = pretty.count("\n") + 1
    assert f"every one of its {lines} line(s) was quarantined (first: invalid JSON)" in warning["message"]
    assert "JSON Lines" in warning["message"]
    strict = run("--strict", path)
    assert strict.exit_code == 2 and "every one of its" in strict.stderr


def test_a_log_without_steps_names_the_detectors_it_switches_off(tmp_path):
    path = jsonl(tmp_path, "nostep.jsonl", call("2024-05-01T10:00:00Z", 1, "timeout"),
                 call("2024-05-01T10:00:01Z", 2, "ok"))
    result = run("--format", "json", path)
    [warning] = json.loads(result.stdout)["warnings"]
    assert warning["file"] is None
    assert "NR101, NR102, NR302, NR303, NR304, NR402, NR403" in warning["message"]
    assert "fields: {step: ...}" in warning["message"]
    assert "nonatomic: warning: no call or rollback carries a step" in result.stderr


def test_a_clean_log_with_steps_warns_of_nothing(tmp_path):
    path = jsonl(tmp_path, "clean.jsonl", call("2024-05-01T10:00:00Z", 1, "ok", step=1))
    result = run("--format", "json", path)
    assert json.loads(result.stdout)["warnings"] == [] and result.stderr == ""


def test_a_mapped_field_no_record_has_is_a_warning(tmp_path):
    path = jsonl(tmp_path, "mine.jsonl", call("2024-05-01T10:00:00Z", 1, "ok", step=1))
    mapping = tmp_path / "map.yaml"
    mapping.write_text("fields:\n  idempotency_key: idem_key\n")
    [warning] = json.loads(run("--format", "json", "--mapping", mapping, path).stdout)["warnings"]
    assert warning["message"].startswith("mapped field idempotency_key ('idem_key') is in none of the 1 event(s)")
