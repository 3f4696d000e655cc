"""Findings built in the engine equal, field for field, those shaped in Python from the detectors' rows.

The Python shaping (`detect.shape_findings`) is what the Spark driver runs and
what the DuckDB engine did before its findings were built in SQL; here it
gets the detectors' rows and the evidence straight from DuckDB, and the two
results must be identical, order included: on the sample logs, on generated
logs of many tasks, on every detector's fixtures and on the benchmarks'
synthetic log.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from nonatomic.replay.api import open_logs
from nonatomic.replay.detect import build_findings, choose, shape_findings, stages_for, witness_ids
from nonatomic.replay.ingest import ingest
from nonatomic.replay.ingest.database import connect
from nonatomic.replay.ingest.inputs import discover
from nonatomic.replay.ingest.schema import EVENT_ORDER
from nonatomic.replay.settings import DEFAULT_SETTINGS
from nonatomic.rules.replay import DETECTORS
from nonatomic.rules.replay.views import events_stage
from nonatomic.rules.write_levels import NameLevels

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"


def shaped_in_python(con, levels: NameLevels | None = None) -> list[dict]:
    """Every default detector's rows fetched from DuckDB and shaped by detect.shape_findings."""
    detectors = choose(None, None)
    stages = stages_for(detectors, lambda: events_stage(EVENT_ORDER))
    for stage in stages:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {stage.name} AS {stage.sql}")
    raw = []
    for detector in detectors:
        cursor = con.execute(detector.sql, {p: DEFAULT_SETTINGS[p] for p in detector.parameters()})
        columns = [c[0] for c in cursor.description]
        raw += [(detector, dict(zip(columns, row))) for row in cursor.fetchall()]
    for stage in reversed(stages):
        con.execute(f"DROP TABLE {stage.name}")
    ids = sorted({i for _, row in raw for i in witness_ids(row)})
    rows = con.execute("SELECT event_id, file, line, strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%gZ'), "
                       "json_extract_string(extra, '$.trace_id'), json_extract_string(extra, '$.span_id') "
                       "FROM events WHERE event_id IN (SELECT unnest($ids))", {"ids": ids}).fetchall()
    # an event read from a trace also cites its trace and span
    evidence = {r[0]: {"event_id": r[0], "file": r[1], "line": r[2], "ts": r[3],
                       **({"trace_id": r[4], "span_id": r[5]} if r[5] is not None else {})} for r in rows}
    return shaped(raw, evidence, levels)


def shaped(raw, evidence, levels: NameLevels | None = None) -> list[dict]:
    # through JSON, as a report carries them
    return json.loads(json.dumps(shape_findings(raw, evidence, levels)))


def assert_same(con, levels: NameLevels | None = None) -> list[dict]:
    expected = shaped_in_python(con, levels)
    streamed = [json.loads(text) for text in build_findings(con, levels=levels).json_texts()]
    assert streamed == expected
    return expected


@pytest.mark.parametrize("logs, mapping, input_format", [
    (sorted(str(p) for p in SAMPLES.glob("*.jsonl")), None, "auto"),
    ([str(SAMPLES / "foreign")], SAMPLES / "foreign" / "mapping.yaml", "auto"),
    ([str(SAMPLES / "otlp")], None, "otlp"),
], ids=["guard-logs", "foreign", "otlp"])
def test_sample_logs(logs, mapping, input_format):
    with open_logs(logs, mapping=mapping, input_format=input_format) as replay:
        assert assert_same(replay.con)


def test_the_tool_registry_grades_the_findings_of_writes_alike():
    # the shipped registry: a card charge is a high write, a subscription update an ordinary one
    logs = sorted(str(p) for p in SAMPLES.glob("*.jsonl"))

    def graded(levels=None) -> dict[str, str]:
        with open_logs(logs) as replay:
            return {f["message"].split("`")[1]: f["severity"] for f in assert_same(replay.con, levels)
                    if f["code"] in ("NR303", "NR402")}

    assert graded() == {"charge_card": "error", "refund_payment": "error", "update_subscription": "warning"}
    # a project's registry (`[tool.nonatomic.tools]`) reverses both
    assert graded(NameLevels({"levels": {"update_subscription": "irreversible"}, "read": ["charge"]})) == {
        "charge_card": "warning", "refund_payment": "error", "update_subscription": "error"}


def test_generated_logs_of_many_tasks(tmp_path):
    from tests.replay.test_detectors_e2e import generate

    generate(tmp_path, tasks=400)
    con = connect()
    ingest(con, discover([str(tmp_path)]))
    assert len(assert_same(con)) > 100


def test_every_detector_fixture():
    from tests.replay.test_detectors import load

    for detector in DETECTORS.values():
        for case in detector.cases:
            assert_same(load(list(case.events)))


def test_the_benchmarks_synthetic_log(tmp_path):
    spec = importlib.util.spec_from_file_location("synthetic", ROOT / "benchmarks" / "synthetic.py")
    synthetic = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(synthetic)
    con = connect()
    synthetic.write_jsonl(con, str(tmp_path / "synthetic.jsonl"), 20_000)
    ingest(con, discover([str(tmp_path / "synthetic.jsonl")]))
    assert len(assert_same(con)) > 1000


def test_streamed_in_batches_and_capped(tmp_path, monkeypatch):
    from nonatomic.replay import findings

    from tests.replay.test_detectors_e2e import generate

    generate(tmp_path, tasks=100)
    con = connect()
    ingest(con, discover([str(tmp_path)]))
    table = build_findings(con)
    every = list(table.json_texts())
    monkeypatch.setattr(findings, "BATCH", 7)
    assert list(table.json_texts()) == every and len(every) > 7
    assert list(table.json_texts(limit=5)) == every[:5]
    assert table.count() == len(every)


def test_one_task_restricted_before_the_stages_gives_its_findings(tmp_path):
    from tests.replay.test_detectors_e2e import generate

    generate(tmp_path, tasks=120)
    with open_logs([str(tmp_path)]) as replay:
        every = replay.detect()
        summary = replay.summary()
    by_task: dict[str, list] = {}
    for finding in every:
        by_task.setdefault(finding["task_id"], []).append(finding)
    # one task of each code, lock findings (other tasks' leases of the same lock) included
    chosen = sorted({f["code"]: f["task_id"] for f in every}.values())
    with open_logs([str(tmp_path)]) as replay:
        for task in chosen:
            assert replay.restrict([task]) == []
            assert replay.detect(tasks=[task]) == by_task[task]
            # the counts are of what was read, not of what the detectors saw
            assert {**replay.summary(), "findings": 0} == {**summary, "findings": 0}
        assert replay.restrict(["no-such-task"]) == ["no-such-task"]
