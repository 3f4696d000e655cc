"""Hostile values in every field of a log, through every output format of `replay` and
`timeline`: nothing reaches a terminal raw, nothing becomes markup, nothing is lost
from JSON.  (A fuzzing kind: `make fuzz` runs it with more examples.)"""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from nonatomic.cli import main

FUZZ_EXAMPLES = int(os.environ.get("NONATOMIC_FUZZ_EXAMPLES", "0"))
ATTACKS = [
    "\x1b[2J\x1b[31mred",  # clear the screen, recolour
    "done\rNo findings",  # overwrite the line
    "\x07bell",
    "\u202eevil\u202c",  # bidi override
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "[click](javascript:alert(1))",
    "| cell | break |",
    "`code` **bold**",
    "line\nbreak",
]
# What must never reach a terminal: C0 controls but tab and LF, DEL, C1 controls, bidi controls.
_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
FIELDS = ("task_id", "tool", "target", "owner", "idempotency_key", "error", "note")


def _log(values: dict[str, str]) -> str:
    task = values["task_id"]
    base = {"task_id": task, "op": "call", "step": 1, "tool": values["tool"], "target": values["target"],
            "owner": values["owner"], "error": values["error"], "note": values["note"]}
    lines = [
        {"ts": "2024-05-01T10:00:00Z", "task_id": task, "op": "task_start"},
        {**base, "ts": "2024-05-01T10:00:01Z", "attempt": 1, "status": "ok"},
        {**base, "ts": "2024-05-01T10:00:02Z", "attempt": 2, "status": "ok", "idempotency_key": values["idempotency_key"]},
        {"ts": "2024-05-01T10:00:03Z", "task_id": task, "op": "task_end", "status": "completed"},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines) + "not json " + values["error"] + "\n"


def _assert_safe(fmt: str, out: str) -> None:
    if fmt in ("text", "md"):
        assert not _RAW_CONTROL.search(out), f"{fmt}: raw control character"
    if fmt == "html":
        assert "<img" not in out and "<script>alert" not in out, "html: a value became markup"
    if fmt == "md":  # Markdown escapes with a backslash: an unescaped `<` or `](` would be live
        assert not re.search(r"(?<!\\)<(?:img|script)", out), "md: a value became markup"
        assert not re.search(r"(?<!\\)\]\(javascript:", out), "md: a value became a link"


@pytest.mark.skipif(sys.platform == "win32", reason="needs any bytes in file names")
@settings(max_examples=FUZZ_EXAMPLES or 3, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.fixed_dictionaries({field: st.sampled_from(ATTACKS) for field in FIELDS}),
       noise=st.text(alphabet=st.characters(max_codepoint=0x2070), max_size=8))
def test_hostile_values_in_every_field_of_every_output_format(tmp_path_factory, values, noise):
    values = {field: value + noise for field, value in values.items()}
    values["task_id"] = values["task_id"].replace("\n", " ") or "t"
    directory = tmp_path_factory.mktemp("hostile")
    log = directory / "log\x1b[2J.jsonl"  # the file name is shown too
    log.write_text(_log(values))
    runner = CliRunner()
    for fmt in ("text", "json", "md", "html"):
        result = runner.invoke(main, ["replay", "--fail-on", "never", "--format", fmt, str(log)])
        assert result.exit_code == 0, result.output
        _assert_safe(fmt, result.stdout)
        if fmt == "json":  # JSON is the lossless format: every value comes back as it was
            report = json.loads(result.stdout)
            assert report["summary"]["findings"] >= 1 and report["quarantine"]
            text = json.dumps(report, ensure_ascii=False)
            for field in ("task_id", "tool", "target"):
                assert json.dumps(values[field], ensure_ascii=False)[1:-1] in text
    for fmt in ("text", "md", "html"):
        result = runner.invoke(main, ["timeline", "--task", values["task_id"], "--format", fmt, str(log)])
        assert result.exit_code == 0, result.output
        _assert_safe(fmt, result.stdout)


@pytest.mark.skipif(sys.platform == "win32", reason="needs any bytes in file names")
@pytest.mark.parametrize("fmt", ["text", "md", "html"])
def test_hostile_file_names_in_what_a_run_did_to_a_kept_database(tmp_path, fmt):
    """The summary's `changes` (files new, grown, replaced) names files: escaped like every value."""
    grown = tmp_path / "<img src=x onerror=alert(1)>\x1b[2J.jsonl"
    replaced = tmp_path / "[click](javascript:alert(1))\u202e.jsonl"
    db = tmp_path / "kept.duckdb"
    values = dict.fromkeys(FIELDS, "v")
    grown.write_text(_log(values))
    replaced.write_text(_log({**values, "task_id": "u"}))
    runner = CliRunner()
    assert runner.invoke(main, ["replay", "--fail-on", "never", "--db", str(db), str(grown), str(replaced)]).exit_code == 0
    grown.write_text(grown.read_text() + json.dumps({"ts": "2024-05-01T10:00:04Z", "task_id": "v", "op": "note"}) + "\n")
    replaced.write_text(_log({**values, "task_id": "w"}))
    result = runner.invoke(main, ["replay", "--fail-on", "never", "--format", fmt, "--db", str(db),
                                  str(grown), str(replaced)])
    assert result.exit_code == 0, result.output
    assert "grown 1" in result.stdout and "replaced 1" in result.stdout
    _assert_safe(fmt, result.stdout)
    if fmt == "md":
        assert r"\<img src=x onerror=alert(1)\>" in result.stdout and r"\[click\](javascript:alert(1))" in result.stdout
