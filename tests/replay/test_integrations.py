"""The tracing hooks that write guard logs: run inside the real frameworks, replayed like any guard log."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from nonatomic.cli.replay import replay as replay_command
from tests.replay.traces import agents_app, pipelines
from tests.replay.traces.provider import Provider


def replayed(path) -> tuple[int, dict]:
    runner = CliRunner()
    exit_code = runner.invoke(replay_command, [str(path)]).exit_code
    document = json.loads(runner.invoke(replay_command, ["--format", "json", "--fail-on", "never", str(path)]).stdout)
    return exit_code, document


def test_the_agents_sdk_processor_logs_the_double_refund_under_its_conversation(tmp_path):
    pytest.importorskip("agents")
    from agents.tracing import set_trace_processors

    from nonatomic.integrations.openai_agents import GuardLogProcessor

    path = tmp_path / "guard.jsonl"
    processor = GuardLogProcessor(path)
    set_trace_processors([processor])
    try:
        provider = Provider({pipelines.INCIDENT_ORDER})
        agents_app.run(provider)
    finally:
        set_trace_processors([])
        processor.shutdown()
    exit_code, document = replayed(path)
    assert exit_code == 1
    errors = [(f["code"], f["task_id"]) for f in document["findings"] if f["severity"] == "error"]
    assert errors == [("NR303", "conv-incident")] and provider.doubles() == 1
    assert {f["task_id"] for f in document["findings"]} == {"conv-incident"}  # the clean conversation: nothing
    assert document["summary"]["events"] == 2 * 4  # four tool calls, each a start and an end
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert {e["status"] for e in events if e["phase"] == "end"} == {"unknown", "ok"}  # the SDK's own timeout


def test_the_otel_span_processor_logs_the_tool_calls_of_any_known_instrumentation(tmp_path):
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider

    from nonatomic.integrations.otel import GuardLogSpanProcessor
    from tests.replay.traces import pydantic_ai_app

    path = tmp_path / "guard.jsonl"
    processor = GuardLogSpanProcessor(path)
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(processor)
    provider = Provider({pipelines.INCIDENT_ORDER})
    pydantic_ai_app.run(provider, tracer_provider, 5)
    tracer_provider.shutdown()
    exit_code, document = replayed(path)
    assert exit_code == 1
    errors = [(f["code"], f["task_id"]) for f in document["findings"] if f["severity"] == "error"]
    assert errors == [("NR303", "conv-incident")] and provider.doubles() == 1
    assert {f["task_id"] for f in document["findings"]} == {"conv-incident"}


def test_the_integrations_import_no_framework_until_used():
    import subprocess
    import sys

    code = ("import sys, nonatomic.integrations, nonatomic.cli; "
            "print(sorted(m for m in ('agents', 'opentelemetry') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"
