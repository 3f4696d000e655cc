"""OTLP/JSON trace exports: GenAI tool spans mapped to canonical call events, and every line accounted for."""

from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner

from nonatomic.cli.replay import replay as replay_command
from nonatomic.replay.api import open_logs
from nonatomic.replay.ingest.mapping import MappingError
from nonatomic.replay.ingest.schema import EVENT_ORDER

T0 = 1_715_677_200 * 10**9  # 2024-05-14T09:00:00Z in nanoseconds
SECOND = 10**9


def attrs(**values):
    def any_value(v):
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    return [{"key": k.replace("__", "."), "value": any_value(v)} for k, v in values.items()]


def span(name, start, end, trace="t" * 32, span_id="s1", parent="root", error=None, **attributes):
    record = {"traceId": trace, "spanId": span_id, "parentSpanId": parent, "name": name,
              "startTimeUnixNano": str(T0 + start * SECOND), "endTimeUnixNano": str(T0 + end * SECOND),
              "attributes": attrs(**attributes), "status": {"code": 2, "message": error} if error else {"code": 1}}
    return record


def tool(name, start, end, **kw):
    return span(f"execute_tool {name}", start, end, gen_ai__operation__name="execute_tool",
                gen_ai__tool__name=name, **kw)


def traces(*spans, resource=()):
    return json.dumps({"resourceSpans": [{"resource": {"attributes": attrs(**dict(resource))},
                                          "scopeSpans": [{"spans": list(spans)}]}]})


def write(tmp_path, *lines, name="traces.jsonl"):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def rows(replay, *columns):
    return replay.con.execute(f"SELECT {', '.join(columns)} FROM events ORDER BY task_id, {EVENT_ORDER}").fetchall()


def test_tool_spans_become_start_and_end_events_with_the_outcome(tmp_path):
    path = write(tmp_path, traces(
        span("invoke_agent support", 0, 30, span_id="root", parent="", gen_ai__conversation__id="conv-1"),
        span("chat gpt-4o", 0, 1, span_id="chat"),
        tool("refund_payment", 1, 11, span_id="a", error="TimeoutError", error__type="TimeoutError",
             gen_ai__tool__call__arguments='{"order_id": "8821"}'),
        tool("refund_payment", 12, 13, span_id="b", gen_ai__tool__call__arguments='{"order_id": "8821"}'),
        tool("send_email", 14, 15, span_id="c", error="upstream", error__type="503"),
    ))
    with open_logs(path, input_format="otlp") as replay:
        got = rows(replay, "task_id", "step", "attempt", "op", "phase", "status", "code", "tool", "line")
        assert [f["code"] for f in replay.detect()] == ["NR303"]
    assert got == [
        ("conv-1", 1, 1, "call", "start", "started", None, "refund_payment", 1),
        ("conv-1", 1, 1, "call", "end", "timeout", None, "refund_payment", 1),
        ("conv-1", 1, 2, "call", "start", "started", None, "refund_payment", 1),
        ("conv-1", 1, 2, "call", "end", "ok", None, "refund_payment", 1),
        ("conv-1", 2, 1, "call", "start", "started", None, "send_email", 1),
        ("conv-1", 2, 1, "call", "end", "error", 503, "send_email", 1),
    ]


def test_task_is_the_conversation_of_any_span_of_the_trace_else_the_trace(tmp_path):
    path = write(
        tmp_path,
        traces(tool("lookup_order", 1, 2, trace="a" * 32, span_id="x")),  # its conversation is on a later line
        traces(span("invoke_agent", 0, 9, trace="a" * 32, span_id="root", parent="", gen_ai__conversation__id="c-7")),
        traces(tool("lookup_order", 3, 4, trace="b" * 32, span_id="y")),
    )
    with open_logs(path, input_format="otlp") as replay:
        assert sorted(set(rows(replay, "task_id"))) == [("b" * 32,), ("c-7",)]


def test_attempts_come_from_the_resend_count_or_the_order_of_same_calls_wherever_their_parents_are(tmp_path):
    args = '{"to": "user:1"}'
    path = write(tmp_path, traces(
        tool("send_email", 1, 2, span_id="r0", http__request__resend_count=0, gen_ai__tool__call__arguments=args),
        tool("send_email", 3, 4, span_id="r1", http__request__resend_count=2, gen_ai__tool__call__arguments=args),
        tool("send_email", 5, 6, span_id="o1", gen_ai__tool__call__arguments='{"to": "user:2"}'),
        tool("send_email", 7, 8, span_id="p1", parent="other", gen_ai__tool__call__arguments=args),
    ))
    with open_logs(path, input_format="otlp") as replay:
        ends = [r[:2] for r in rows(replay, "step", "attempt", "phase") if r[2] == "end"]
    assert ends == [(1, 1), (1, 3), (2, 1), (1, 4)]  # a retry under another parent is the same step


def test_a_mapping_names_the_attributes_to_read_and_maps_values(tmp_path):
    path = write(tmp_path, traces(
        tool("create_booking", 1, 2, span_id="a", session__id="s-1", app__trip="trip:9"),
        tool("create_booking", 5, 6, span_id="b", session__id="s-1", app__trip="trip:9"),
        resource={"service.name": "gateway"},
    ))
    mapping = {"fields": {"task_id": "session.id", "target": "app.trip"}, "values": {"tool": {"create_booking": "book"}}}
    with open_logs(path, mapping=mapping, input_format="otlp") as replay:
        assert set(rows(replay, "task_id", "tool", "target")) == {("s-1", "book", "trip:9")}
        assert [(f["code"], f["task_id"]) for f in replay.detect()] == [("NR301", "s-1")]


def test_times_and_outcomes_cannot_be_remapped(tmp_path):
    path = write(tmp_path, traces(tool("send_email", 1, 2)))
    with pytest.raises(MappingError, match="ts"):
        open_logs(path, mapping={"fields": {"ts": "app.time"}}, input_format="otlp")


def test_every_line_is_read_and_bad_ones_are_quarantined_with_their_line(tmp_path):
    path = tmp_path / "traces.jsonl"
    bad_span = tool("send_email", 1, 2, span_id="bad")
    del bad_span["endTimeUnixNano"]
    path.write_text("\n".join([
        traces(tool("send_email", 1, 2, span_id="ok")),          # 1: two events
        "",                                                       # 2: blank, not counted
        "{not json",                                              # 3
        json.dumps({"spans": []}),                                # 4: not TracesData
        traces(bad_span, tool("lookup_order", 3, 4, span_id="good")),  # 5: one bad span, one good
        traces(span("chat gpt-4o", 0, 1)),                        # 6: no tool span: adds nothing
        json.dumps({"resourceSpans": [{"scopeSpans": "oops"}]}),  # 7: malformed
        '{"resourceSpans": [',                                    # 8: cut off mid-write
    ]))
    with open_logs(path, input_format="otlp") as replay:
        summary = replay.summary()
        quarantine = [(q["line"], q["reason"]) for q in replay.quarantine_rows()]
        lines = sorted(set(rows(replay, "line")))
    assert lines == [(1,), (5,)]
    assert quarantine == [
        (3, "invalid JSON"),
        (4, "not an OTLP TracesData object (no resourceSpans list)"),
        (5, "tool span bad: endTimeUnixNano missing or not a time: None"),
        (7, "malformed TracesData: scopeSpans is not a list"),
        (8, "truncated last line: invalid JSON"),
    ]
    assert summary["lines"] == summary["events"] + summary["quarantined"] == 4 + 5


def test_a_document_without_spans_is_counted_and_a_file_of_nothing_else_is_a_warning(tmp_path):
    mixed = write(tmp_path, traces(tool("send_email", 1, 2)), traces(), json.dumps({"resourceSpans": []}),
                  traces(span("chat gpt-4o", 0, 1)), name="mixed.jsonl")
    empty = write(tmp_path, json.dumps({"resourceSpans": []}), "", traces(), name="empty.jsonl")
    with open_logs(mixed, input_format="otlp") as replay:
        spans = replay.summary()["spans"]
        assert (spans["read"], spans["tool"], spans["ignored"]) == (2, 1, 1)
        assert spans["documents_without_spans"] == 2  # lines 2 and 3: read, and said so
        assert replay.warnings() == []
    result = CliRunner().invoke(replay_command, ["--input-format", "otlp", str(mixed), str(empty)])
    assert result.exit_code == 0, result.output
    assert "2 span(s) read = 1 tool span(s) + 1 ignored (span 1); 4 trace document(s) without spans" in result.stdout
    assert f"warning: {empty}: its 2 trace document(s) hold no span at all, so nothing was read" in result.stderr
    assert str(mixed) not in result.stderr


def test_gzip_exports_and_the_command_line(tmp_path):
    path = tmp_path / "traces.jsonl.gz"
    timed_out = tool("transfer_funds", 1, 11, span_id="a", error="deadline exceeded")
    path.write_bytes(gzip.compress((traces(timed_out, tool("transfer_funds", 12, 13, span_id="b")) + "\n").encode()))
    result = CliRunner().invoke(replay_command, ["--input-format", "otlp", "--fail-on", "warning", str(path)])
    assert result.exit_code == 1, result.output
    assert "NR303" in result.output and "traces.jsonl.gz:1" in result.output
