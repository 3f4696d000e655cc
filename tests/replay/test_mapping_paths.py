"""Mappings reach nested fields, set constants and derive a value from a field's presence."""

from __future__ import annotations

import json

import pytest

from nonatomic.replay.api import open_logs
from nonatomic.replay.ingest.mapping import MappingError, parse_mapping

# A gateway log of the user's own shape: one record per tool call, the outcome nested.
RECORDS = [
    {"at": "2024-05-01T10:00:00Z", "run": "r-1", "call": {"name": "refund_payment", "order": "8821"},
     "failure": {"kind": "ReadTimeout"}},
    {"at": "2024-05-01T10:00:02Z", "run": "r-1", "call": {"name": "refund_payment", "order": "8821"}},
    {"at": "2024-05-01T10:00:03Z", "run": "r-1", "call.name": "flat_key_wins", "call": {"name": "ignored"}},
]
MAPPING = {"fields": {"ts": "at", "task_id": "run", "tool": "call.name", "target": "call.order",
                      "op": {"const": "call"}, "step": {"const": 1},
                      "status": {"from": "failure", "present": "timeout", "absent": "ok"}}}


def test_nested_paths_constants_and_presence(tmp_path):
    path = tmp_path / "gateway.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    with open_logs(path, mapping=MAPPING) as replay:
        rows = replay.con.execute("SELECT tool, target, op, step, status FROM events ORDER BY line").fetchall()
        codes = [f["code"] for f in replay.detect(select=["NR303"])]
    assert rows == [("refund_payment", "8821", "call", 1, "timeout"), ("refund_payment", "8821", "call", 1, "ok"),
                    ("flat_key_wins", None, "call", 1, "ok")]
    assert codes == ["NR303"]


@pytest.mark.parametrize("entry", [{"const": [1]}, {"from": "x"}, {"from": "", "present": "a"}, {"other": 1}, 3])
def test_malformed_field_entries_are_refused(entry):
    with pytest.raises(MappingError, match="fields.status"):
        parse_mapping({"fields": {"status": entry}})


def test_a_nested_path_reads_the_last_of_a_key_given_twice(tmp_path):
    # as a flat key does: the last one counts, as in Python, JavaScript and jq
    path = tmp_path / "gateway.jsonl"
    path.write_text('{"at": "2024-05-01T10:00:00Z", "run": "r-1", "call": {"name": "first"}, '
                    '"call": {"name": "refund_payment", "order": "8821"}}\n')
    with open_logs(path, mapping={"fields": {"ts": "at", "task_id": "run", "tool": "call.name",
                                             "target": "call.order", "op": {"const": "call"}}}) as replay:
        rows = replay.con.execute("SELECT tool, target FROM events").fetchall()
        assert replay.quarantine_rows() == []
    assert rows == [("refund_payment", "8821")]
