"""The JSON-reader path gives exactly what the line-by-line reader gives, or steps aside."""

from __future__ import annotations

import json

import pytest

from nonatomic.replay.api import open_logs
from nonatomic.replay.ingest import ndjson

BASE = {"ts": "2024-05-01T10:00:00Z", "task_id": "refund-8821", "op": "call"}
LOGS = {
    "clean with extras": [
        {**BASE, "step": "4", "attempt": " 2 ", "host": {"a": [1, 2.50, None]}, "x": 1e3},
        {**BASE, "ts": 1714557600.25, "task_id": 't\u00e9"q\\', "step_no": 3, "op": "rollback", "big": 2**70},
        {**BASE, "ts": 1714557600250, "op": "verify", "target": 1e20, "status": 1.5e-7, "seq": None},
    ],
    "an extra field that is null": [{**BASE, "host": None}, {**BASE, "host": "w1"}],
    "a bad value": [BASE, {**BASE, "attempt": 2.5}],
    "bad values and extras in order": [
        {**BASE, "host": "w1", "pid": 7}, {**BASE, "ts": "soon", "host": "w2" * 600, "pid": 8},
        {**BASE, "task_id": " ", "pid": 9}, {**BASE, "attempt": 0, "host": {"pid": 1}},
    ],
    "bad values and extras out of order": [{**BASE, "host": "w1", "pid": 7}, {"pid": 8, **BASE, "host": "w2", "step": "x"}],
    "bad values and an escaped extra": [{**BASE, "host": "w1", "pid": 7}, {**BASE, "host": "w\\2", "pid": 8, "step": "x"}],
    "a key the sample did not see": [{**BASE, "seq": i} for i in range(25_000)] + [{**BASE, "late": "x"}],
    "duplicate keys": ['{"ts": "2024-05-01T10:00:00Z", "task_id": "t", "op": "call", "op": "verify"}'],
    "a blank line": [BASE, "", BASE],
}
FAST = {"clean with extras", "a bad value", "bad values and extras in order"}


def ingested(path, monkeypatch, fast: bool):
    taken = []
    convert = ndjson.convert_file if fast else (lambda *args: False)
    monkeypatch.setattr(ndjson, "convert_file", lambda *args: taken.append(convert(*args)) or taken[-1])
    with open_logs(path) as replay:
        events = replay.con.execute(
            "SELECT * EXCLUDE (event_id, extra), CAST(extra AS VARCHAR) FROM events ORDER BY line").fetchall()
        quarantine = replay.con.execute("SELECT * FROM quarantine ORDER BY line").fetchall()
    return taken == [True], events, quarantine


@pytest.mark.parametrize("name", sorted(LOGS))
def test_the_json_reader_path_matches_the_line_reader_or_is_not_taken(tmp_path, monkeypatch, name):
    path = tmp_path / "log.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in LOGS[name]))
    fast_taken, *fast = ingested(path, monkeypatch, fast=True)
    _, *lines = ingested(path, monkeypatch, fast=False)
    assert fast_taken == (name in FAST)
    assert fast == lines
