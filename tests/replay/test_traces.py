"""Traces real agent stacks write: the twice-booked refund is found in each, with no mapping and no flag.

Every trace here is written by the real instrumentation around a real
framework (tests/replay/traces/): LangGraph under OpenInference and under
OpenLLMetry, the OpenAI Agents SDK under OpenInference, pydantic-ai's own
instrumentation (versions 2 and 5).  Each run has a conversation whose refund
the provider booked, lost the answer of, and booked again when the framework
retried, and a clean conversation refunding two other orders.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from nonatomic.cli.replay import replay as replay_command
from nonatomic.replay.api import open_logs
from tests.replay.traces import export, pipelines

INCIDENT_TARGET = f"order_id={pipelines.INCIDENT_ORDER}"


def run(*args: str):
    return CliRunner().invoke(replay_command, [*args], catch_exceptions=False)


def report(path, *args: str) -> dict:
    result = run("--format", "json", "--fail-on", "never", *args, str(path))
    return json.loads(result.stdout)


def tasks_by_target(path) -> dict[str, set[str]]:
    with open_logs(path) as replay:
        rows = replay.con.execute("SELECT DISTINCT target, task_id FROM events").fetchall()
    found: dict[str, set[str]] = {}
    for target, task in rows:
        found.setdefault(target, set()).add(task)
    return found


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    directory = tmp_path_factory.mktemp("traces")
    return lambda name, shape="collector": (pipelines.record(name), pipelines.record(name).write(directory, shape))


@pytest.mark.parametrize("pipeline", list(pipelines.PIPELINES))
def test_the_double_refund_is_an_error_found_by_replay_alone(traces, pipeline):
    recording, path = traces(pipeline)
    assert recording.doubles == 1  # the provider's ledger: one refund booked twice

    plain = run(str(path))
    assert plain.exit_code == 1, plain.output

    document = report(path)
    targets = tasks_by_target(path)
    incident_tasks = targets[INCIDENT_TARGET]
    errors = [f for f in document["findings"] if f["severity"] == "error"]
    incidents = {(f["task_id"], f["step"]) for f in errors}
    assert len(incidents) == recording.doubles
    assert {task for task, _ in incidents} == incident_tasks
    assert {f["code"] for f in errors} == {"NR303"}
    for finding in errors:
        assert "refund_payment" in finding["message"]
        assert len(finding["events"]) >= 2
        assert all(e["trace_id"] and e["span_id"] for e in finding["events"])

    clean_tasks = set().union(*(tasks for target, tasks in targets.items() if target != INCIDENT_TARGET))
    assert clean_tasks and not clean_tasks & incident_tasks
    assert not [f for f in document["findings"] if f["task_id"] in clean_tasks]


@pytest.mark.parametrize("pipeline", list(pipelines.PIPELINES))
def test_every_span_is_accounted_for(traces, pipeline):
    recording, path = traces(pipeline)
    summary = report(path)["summary"]
    tool = len(recording.tool_spans)
    assert summary["spans"]["read"] == len(recording.spans)
    assert summary["spans"]["tool"] == tool and tool > 0
    assert summary["spans"]["ignored"] == len(recording.spans) - tool == sum(summary["spans"]["ignored_by_kind"].values())
    assert summary["events"] == 2 * tool  # each tool span: its start and its end
    assert summary["lines"] == summary["events"] + summary["quarantined"]


@pytest.mark.parametrize("pipeline", list(pipelines.PIPELINES))
def test_two_orders_refunded_in_one_turn_are_two_steps_never_a_retry(traces, pipeline):
    _, path = traces(pipeline)
    with open_logs(path) as replay:
        rows = replay.con.execute(
            "SELECT target, step, attempt FROM events WHERE phase = 'end' AND target IN ('order_id=7001', 'order_id=7002')"
        ).fetchall()
    assert sorted(r[0] for r in rows) == ["order_id=7001", "order_id=7002"]
    assert len({r[1] for r in rows}) == 2 and {r[2] for r in rows} == {1}


@pytest.mark.parametrize("shape", [s for s in export.SHAPES if s != "collector"])
@pytest.mark.parametrize("pipeline", ["langgraph-openllmetry", "pydantic-ai-v5"])
def test_every_export_shape_reads_the_same(traces, pipeline, shape):
    if shape == "collector.zst":
        pytest.importorskip("zstandard")
    _, reference = traces(pipeline)
    _, path = traces(pipeline, shape)

    def found(document):
        return sorted((f["code"], f["task_id"], f["step"], f["severity"]) for f in document["findings"])

    expected, got = report(reference), report(path)
    assert found(got) == found(expected)
    assert got["summary"]["spans"] == expected["summary"]["spans"]
    assert run(str(path)).exit_code == 1
    positions = [(e["line"], e["span_id"]) for f in got["findings"] for e in f["events"]]
    if shape in ("pretty", "console"):  # spans of one document... each start on their own line
        assert len({line for line, _ in set(positions)}) == len({span for _, span in positions})


def test_a_mapping_path_into_the_arguments_names_the_target(traces):
    _, path = traces("pydantic-ai-v5")
    with open_logs(path, mapping={"fields": {"target": "args.order_id"}}) as replay:
        targets = {t for (t,) in replay.con.execute("SELECT DISTINCT target FROM events").fetchall()}
    assert targets == {"8821", "7001", "7002"}


def test_a_trace_without_tool_spans_is_a_warning_and_strict_fails(tmp_path):
    recording = pipelines.record("langgraph-openinference")
    without_tools = [[s for s in batch if s not in recording.tool_spans] for batch in recording.batches]
    path = tmp_path / "agent-only.jsonl"
    path.write_bytes(export.render(without_tools, "collector"))
    document = report(path)
    assert document["summary"]["spans"]["tool"] == 0
    [warning] = document["warnings"]
    assert warning["file"] == str(path) and "none of them a tool call" in warning["message"]
    assert "openinference" in warning["message"]
    result = run("--strict", str(path))
    assert result.exit_code == 2 and "none of them a tool call" in result.stderr


def test_the_resend_count_numbers_attempts_and_the_key_argument_is_the_idempotency_key(tmp_path):
    pytest.importorskip("opentelemetry.sdk")
    pytest.importorskip("opentelemetry.exporter.otlp.proto.common")
    from opentelemetry.trace import Status, StatusCode

    tracer_provider, sink = export.provider()
    tracer = tracer_provider.get_tracer("gateway")
    arguments = json.dumps({"idempotency_key": "welcome-1", "to": "user:1"})
    with tracer.start_as_current_span("invoke_agent mailer", attributes={"gen_ai.conversation.id": "c-1"}):
        for resend, failed in ((0, True), (2, False)):
            with tracer.start_as_current_span("execute_tool send_email", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "send_email",
                    "gen_ai.tool.call.arguments": arguments, "http.request.resend_count": resend}) as span:
                if failed:
                    span.set_attribute("error.type", "TimeoutError")
                    span.set_status(Status(StatusCode.ERROR, "deadline exceeded"))
    path = tmp_path / "genai.jsonl"
    path.write_bytes(export.render(sink.batches, "collector"))
    with open_logs(path) as replay:
        rows = replay.con.execute(
            "SELECT task_id, step, attempt, status, target, idempotency_key FROM events "
            "WHERE phase = 'end' ORDER BY ts").fetchall()
        assert [(f["code"], f["severity"]) for f in replay.detect(select=["NR303"])] == [("NR303", "error")]
    assert rows == [("c-1", 1, 1, "timeout", "to=user:1", "welcome-1"), ("c-1", 1, 3, "ok", "to=user:1", "welcome-1")]


def test_the_spans_of_each_kind_are_counted(traces):
    recording, path = traces("langgraph-openinference")
    ignored = report(path)["summary"]["spans"]["ignored_by_kind"]
    kinds = Counter(s.attributes["openinference.span.kind"] for s in recording.spans if s not in recording.tool_spans)
    assert ignored == dict(kinds)


def test_a_damaged_export_keeps_every_good_span_and_quarantines_the_rest_by_line(tmp_path):
    recording = pipelines.record("pydantic-ai-v5")
    lines = export.render(recording.batches, "collector").decode().splitlines()
    damaged = [*lines[:2], "{not json", "[" * 100_000, '{"resourceSpans": [{"scopeSpans": "oops"}]}', *lines[2:]]
    damaged[-1] = damaged[-1][: len(damaged[-1]) // 2]  # the last line cut off mid-write
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(damaged))
    document = report(path)
    reasons = [(q["line"], q["reason"].split(":")[0]) for q in document["quarantine"]]
    assert reasons == [(3, "invalid JSON"), (4, "nested too deeply to read"), (5, "malformed TracesData"),
                       (len(damaged), "truncated last line")]
    summary = document["summary"]
    assert summary["lines"] == summary["events"] + summary["quarantined"]
    cut = json.loads(lines[-1])["resourceSpans"]
    lost_tools = sum(1 for r in cut for s in r["scopeSpans"] for sp in s["spans"]
                     if any(a["key"] == "gen_ai.operation.name" and a["value"].get("stringValue") == "execute_tool"
                            for a in sp["attributes"]))
    assert summary["events"] == 2 * (len(recording.tool_spans) - lost_tools)


def test_a_growing_export_kept_in_a_database_counts_each_span_once(tmp_path):
    recording = pipelines.record("pydantic-ai-v5")
    lines = export.render(recording.batches, "collector").decode().splitlines(keepends=True)
    path, db = tmp_path / "traces.jsonl", tmp_path / "replay.duckdb"
    path.write_text("".join(lines[:3]))
    report(path, "--db", str(db))
    with path.open("a") as fh:
        fh.write("".join(lines[3:]))
    grown = report(path, "--db", str(db))
    whole = report(recording.write(tmp_path, "collector"))
    assert grown["summary"]["spans"] == whole["summary"]["spans"]
    assert grown["summary"]["events"] == whole["summary"]["events"]
    assert sorted((f["code"], f["task_id"], f["step"]) for f in grown["findings"]) == \
        sorted((f["code"], f["task_id"], f["step"]) for f in whole["findings"])
