"""Timestamp normalisation, integer strictness and field/value mappings."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from nonatomic.replay.api import open_logs
from nonatomic.replay.ingest.mapping import MappingError, load_mapping

UTC = timezone.utc


def ingest_ts(tmp_path, values):
    log = tmp_path / "ts.jsonl"
    log.write_text("".join(json.dumps({"ts": v, "task_id": "t", "seq": i}) + "\n" for i, v in enumerate(values)))
    with open_logs(log) as replay:
        good = dict(replay.con.execute("SELECT seq, ts FROM events").fetchall())
        bad = dict(replay.con.execute("SELECT line - 1, reason FROM quarantine").fetchall())
    return [good.get(i, bad.get(i)) for i in range(len(values))]


def test_timestamps_are_normalised_to_utc(tmp_path):
    moment = datetime(2024, 5, 1, 8, 30, 15, 250000, tzinfo=UTC)
    assert ingest_ts(tmp_path, [
        "2024-05-01T08:30:15.25Z",
        "2024-05-01T10:30:15.250+02:00",
        "2024-05-01 03:30:15.25-05:00",
        moment.timestamp(),                 # epoch seconds, float
        int(moment.timestamp()),            # epoch seconds, int
        int(moment.timestamp() * 1000),     # epoch milliseconds
        str(int(moment.timestamp() * 1000)),  # epoch milliseconds as text
        "2024-05-01T08:30:15.25",           # no offset: UTC
    ]) == [moment, moment, moment, moment, moment.replace(microsecond=0), moment, moment, moment]


def test_timestamps_that_do_not_parse(tmp_path):
    assert ingest_ts(tmp_path, ["yesterday", "2024-13-01T00:00:00Z", "infinity", True, 1e20, None]) == [
        "ts does not parse: yesterday",
        "ts does not parse: 2024-13-01T00:00:00Z",
        "ts does not parse: infinity",
        "ts does not parse: true",
        "ts does not parse: 100000000000000000000.0",  # as DuckDB renders the number
        "missing ts",
    ]


def test_epoch_seconds_and_milliseconds_are_told_apart_by_magnitude(tmp_path):
    old_seconds = 86_400 * 365 * 3           # 1973 in seconds
    new_millis = 99_999_999_999 + 1           # 1e11: milliseconds (1973 again)
    got = ingest_ts(tmp_path, [old_seconds, new_millis])
    assert got == [datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=old_seconds),
                   datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=new_millis)]


def test_integers_accept_digits_and_refuse_guesses(tmp_path):
    log = tmp_path / "ints.jsonl"
    rows = [3, "4", " 5 ", 2.0, "7.00", "2.5", "1e3", "0x10", "2.", True, 2**70]
    log.write_text("".join(
        json.dumps({"ts": "2024-05-01T00:00:00Z", "task_id": "t", "step": v}) + "\n" for v in rows))
    with open_logs(log) as replay:
        assert replay.con.execute("SELECT line, step FROM events ORDER BY line").fetchall() == [
            (1, 3), (2, 4), (3, 5), (4, 2), (5, 7)]  # a zero fraction is the integer (pandas writes 2.0)
        reasons = [r for (r,) in replay.con.execute("SELECT reason FROM quarantine ORDER BY line").fetchall()]
    assert reasons == [f"step is not an integer: {v}" for v in ("2.5", "1e3", "0x10", "2.", "true", 2**70)]


def test_a_csv_written_by_pandas_is_read_whole(tmp_path):
    import pandas as pd

    log = tmp_path / "exported.csv"
    # An integer column with a gap is float in pandas, and to_csv writes its integers as 1.0.
    pd.DataFrame({
        "ts": ["2024-05-01T00:00:00Z", "2024-05-01T00:00:01Z", "2024-05-01T00:00:02Z"],
        "task_id": ["t", "t", "t"], "op": ["task_start", "call", "call"],
        "step": [None, 2, 2], "attempt": [None, 1, 2], "code": [None, 504, None],
    }).to_csv(log, index=False)
    assert "2.0,1.0,504.0" in log.read_text()
    with open_logs(log) as replay:
        rows = replay.con.execute("SELECT step, attempt, code FROM events ORDER BY line").fetchall()
        assert replay.quarantine_rows() == []
    assert rows == [(None, None, None), (2, 1, 504), (2, 2, None)]


def test_mapping_renames_fields_and_values(tmp_path):
    mapping = tmp_path / "map.yaml"
    mapping.write_text(
        "fields:\n  task_id: trace_id\n  step: step_no\n  ts: timestamp\n"
        "values:\n  op: {invoke: call, compensate: rollback}\n  status: {success: ok, timed_out: timeout}\n")
    log = tmp_path / "theirs.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in [
        {"timestamp": "2024-05-01T00:00:00Z", "trace_id": "tr-1", "step_no": 2, "op": "invoke", "status": "timed_out"},
        {"timestamp": "2024-05-01T00:00:01Z", "trace_id": "tr-1", "step_no": 2, "op": "compensate", "status": "odd",
         "task_id": "kept as an extra"},
        {"timestamp": "2024-05-01T00:00:02Z", "task_id": "no trace id"},
    ]))
    with open_logs(log, mapping=mapping) as replay:
        rows = replay.con.execute("SELECT task_id, step, op, status, extra FROM events ORDER BY line").fetchall()
        assert rows == [("tr-1", 2, "call", "timeout", None),
                        ("tr-1", 2, "rollback", "odd", '{"task_id":"kept as an extra"}')]
        assert replay.con.execute("SELECT line, reason FROM quarantine").fetchall() == [
            (3, "missing task_id (field 'trace_id')")]


@pytest.mark.parametrize("text, message", [
    ("fields: [a, b]", "fields must be a mapping"),
    ("fields:\n  taskid: trace", "'taskid' is not a canonical field"),
    ("fields:\n  task_id: 7", "must name one field"),
    ("fields:\n  task_id: x\n  target: x", "'x' mapped to more than one canonical field"),
    ("values:\n  attempt: {first: 1}", "only text fields"),
    ("values:\n  op: {invoke: [call]}", "is not a single value"),
    ("feilds:\n  task_id: x", "unknown section"),
    ("fields: {task_id: [", "invalid YAML"),
])
def test_bad_mappings_are_clear_errors(tmp_path, text, message):
    path = tmp_path / "map.yaml"
    path.write_text(text)
    with pytest.raises(MappingError, match=message):
        load_mapping(path)


def test_mapping_file_that_cannot_be_read(tmp_path):
    with pytest.raises(MappingError, match="cannot read mapping"):
        load_mapping(tmp_path / "absent.yaml")
