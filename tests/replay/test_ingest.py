"""Ingest: every input form, every kind of bad line (exact file:line and reason), line accounting."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone

import duckdb
import pytest
import zstandard

from nonatomic.replay.api import open_logs
from nonatomic.replay.ingest.inputs import InputError


def event(i: int, **fields) -> dict:
    base = {"ts": f"2024-05-01T10:00:{i:02d}Z", "task_id": "refund-8821", "step": 1, "attempt": 1,
            "op": "call", "status": "ok", "tool": "refund_payment", "target": "order:8821"}
    return {**base, **fields}


def jsonl(*records) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records)


def quarantine(replay) -> list[tuple]:
    return [tuple(r) for r in replay.con.execute("SELECT file, line, reason FROM quarantine ORDER BY file, line").fetchall()]


def accounted(replay) -> dict:
    summary = replay.summary(findings=[])
    assert summary["lines"] == summary["events"] + summary["quarantined"]
    return summary


def test_every_kind_of_bad_line_is_quarantined_with_its_line_and_reason(tmp_path):
    log = tmp_path / "gateway.jsonl"
    log.write_bytes(
        jsonl(event(1))                                            # 1 good
        + b'{"ts": "2024-05-01T10:00:02Z", "task_id": \n'          # 2 invalid JSON
        + jsonl(event(3, task_id=None))                            # 3 missing task_id
        + jsonl(event(4, ts="yesterday"))                          # 4 bad timestamp
        + jsonl(event(5, attempt=2.5))                             # 5 attempt not integer
        + b'{"ts": "2024-05-01T10:00:06Z", "task_id": "t\xff"}\n'  # 6 not UTF-8
        + jsonl({"ts": "2024-05-01T10:00:07Z", "task_id": "t", "error": "x" * 5000})  # 7 too long
        + b"\n"                                                    # 8 blank: not a record
        + jsonl([1, 2], event(10, attempt=0), event(11))           # 9 array, 10 attempt 0, 11 good
        + b'{"ts": "2024-05-01T10:00:12Z", "task_id": "refund-8'   # 12 cut off mid-write
    )
    with open_logs(log, max_line_bytes=4096) as replay:
        assert quarantine(replay) == [
            (str(log), 2, "invalid JSON"),
            (str(log), 3, "missing task_id"),
            (str(log), 4, "ts does not parse: yesterday"),
            (str(log), 5, "attempt is not an integer: 2.5"),
            (str(log), 6, "bytes that are not UTF-8"),
            (str(log), 7, "line longer than 4096 bytes"),
            (str(log), 9, "not a JSON object"),
            (str(log), 10, "attempt must be >= 1: 0"),
            (str(log), 12, "truncated last line: invalid JSON"),
        ]
        assert replay.con.execute("SELECT line FROM events ORDER BY line").fetchall() == [(1,), (11,)]
        assert accounted(replay) == {"files": 1, "lines": 11, "events": 2, "quarantined": 9, "tasks": 1,
                                     "findings": 0}


def test_a_bad_line_before_many_good_ones_keeps_their_numbers(tmp_path):
    # Rejected lines never reach the converted table; later lines must still get their own numbers.
    records = [event(i % 60, seq=i) for i in range(1, 3001)]
    lines = [json.dumps(r).encode() for r in records]
    for n in (5, 6, 1500, 2999):
        lines[n - 1] = b'{"task_id": "\xfe"}'
    log = tmp_path / "many.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    with open_logs(log, threads=2) as replay:
        assert [r[1] for r in quarantine(replay)] == [5, 6, 1500, 2999]
        mismatched = replay.con.execute("SELECT count(*) FROM events WHERE seq <> line").fetchone()[0]
        assert mismatched == 0


def test_line_numbers_follow_the_file_on_a_parallel_scan_of_many_row_groups(tmp_path):
    log = tmp_path / "big.jsonl"
    log.write_text("".join(json.dumps(event(i % 60, seq=i)) + "\n" for i in range(1, 300_001)))
    with open_logs(log, threads=2) as replay:
        assert replay.con.execute("SELECT count(*), count(*) FILTER (WHERE seq <> line) FROM events").fetchone() \
            == (300_000, 0)


@pytest.mark.parametrize("compress", ["plain", "gz", "zst"])
def test_jsonl_plain_and_compressed(tmp_path, compress):
    data = jsonl(event(1), event(2, attempt="2"), b"oops")
    name = {"plain": "a.jsonl", "gz": "a.jsonl.gz", "zst": "a.jsonl.zst"}[compress]
    packed = {"plain": lambda b: b, "gz": gzip.compress, "zst": zstandard.ZstdCompressor().compress}[compress]
    (tmp_path / name).write_bytes(packed(data))
    with open_logs(tmp_path / name) as replay:
        assert replay.con.execute("SELECT line, attempt FROM events ORDER BY line").fetchall() == [(1, 1), (2, 2)]
        assert quarantine(replay) == [(str(tmp_path / name), 3, "invalid JSON")]


def test_csv_with_bad_rows(tmp_path):
    log = tmp_path / "audit.csv"
    log.write_bytes(
        b"ts,task_id,step_no,attempt,op,status,code,region\n"
        b"2024-05-01T10:00:00Z,book-1,1,1,call,timeout,,eu\n"
        b"2024-05-01T10:00:05Z,book-1,1,x,call,ok,200,eu\n"
        b"2024-05-01T10:00:06Z,book-1,1\n"
        b"1714557607,book-1,2,1,call,ok,200,eu\n"
    )
    with open_logs(log) as replay:
        rows = replay.con.execute(
            "SELECT line, ts, step, attempt, code, extra->>'region' FROM events ORDER BY line").fetchall()
        assert rows == [
            (2, datetime(2024, 5, 1, 10, 0, tzinfo=timezone.utc), 1, 1, None, "eu"),
            (5, datetime(2024, 5, 1, 10, 0, 7, tzinfo=timezone.utc), 2, 1, 200, "eu"),
        ]
        assert quarantine(replay) == [
            (str(log), 3, "attempt is not an integer: x"),
            (str(log), 4, "CSV row has too few columns"),
        ]
        accounted(replay)


def test_csv_records_spanning_lines_keep_their_line_numbers(tmp_path):
    # A quoted value with line breaks (a model's multi-line reply) moves every later
    # record down; the reader's own rejects count records, not lines.
    log = tmp_path / "audit.csv"
    log.write_bytes(
        b"ts,task_id,attempt,op,status,note\n"
        b'2024-05-01T10:00:00Z,t1,1,call,timeout,"I will retry\nthe refund\r\nnow"\n'
        b"2024-05-01T10:00:01Z,t1,2,call,ok,plain\n"
        b"2024-05-01T10:00:02Z,t1\n"
        b'2024-05-01T10:00:03Z,t1,3,call,ok,"a\nb"\n'
        b"yesterday,t1,4,call,ok,x\n"
        b"2024-05-01T10:00:05Z,t1,5,call,ok,y\n"
    )
    with open_logs(log) as replay:
        assert replay.con.execute("SELECT line, attempt FROM events ORDER BY line").fetchall() == [
            (2, 1), (5, 2), (7, 3), (10, 5)]
        assert quarantine(replay) == [
            (str(log), 6, "CSV row has too few columns"),
            (str(log), 9, "ts does not parse: yesterday"),
        ]
        assert replay.con.execute("SELECT extra->>'note' FROM events WHERE line = 2").fetchone() == (
            "I will retry\nthe refund\r\nnow",)
        accounted(replay)


def test_parquet_with_native_types_and_rows_as_lines(tmp_path):
    log = str(tmp_path / "events.parquet")
    con = duckdb.connect()
    con.sql(
        "SELECT * FROM (VALUES "
        "(TIMESTAMPTZ '2024-05-01 10:00:00+00', 'deploy-7', 1, 'call', 'w1'), "
        "(NULL, 'deploy-7', 2, 'call', 'w2'), "
        "(TIMESTAMPTZ '2024-05-01 10:00:09+00', 'deploy-7', 0, 'call', 'w1')"
        ") t(ts, task_id, attempt, op, host)").write_parquet(log)  # COPY ... TO $path needs DuckDB >= 1.4
    with open_logs(log) as replay:
        assert replay.con.execute("SELECT line, attempt, extra->>'host' FROM events").fetchall() == [(1, 1, "w1")]
        assert quarantine(replay) == [(log, 2, "missing ts"), (log, 3, "attempt must be >= 1: 0")]


def test_several_files_and_formats_in_one_run_from_a_directory_and_a_glob(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.jsonl").write_bytes(jsonl(event(1)))
    (tmp_path / "a" / "two.csv").write_text("ts,task_id\n2024-05-01T10:00:00Z,t2\n")
    (tmp_path / "a" / "notes.txt").write_text("not a log")
    (tmp_path / "b.ndjson").write_bytes(jsonl(event(3, task_id="t3")))
    with open_logs([tmp_path / "a", str(tmp_path / "*.ndjson"), tmp_path / "a" / "one.jsonl"]) as replay:
        assert sorted(replay.ingested.files) == sorted(
            [str(tmp_path / "a" / "one.jsonl"), str(tmp_path / "a" / "two.csv"), str(tmp_path / "b.ndjson")])
        assert accounted(replay)["events"] == 3


def test_input_format_overrides_the_name(tmp_path):
    log = tmp_path / "export.txt"
    log.write_text("ts,task_id\n2024-05-01T10:00:00Z,t1\n")
    with open_logs(log, input_format="csv") as replay:
        assert accounted(replay)["events"] == 1
    with open_logs(log, input_format="jsonl") as replay:
        assert accounted(replay)["quarantined"] == 2


def test_missing_and_unreadable_inputs_name_the_file(tmp_path):
    with pytest.raises(InputError, match="nowhere.jsonl"):
        open_logs(tmp_path / "nowhere.jsonl")
    with pytest.raises(InputError, match=r"\*.jsonl: no file matches"):
        open_logs(str(tmp_path / "*.jsonl"))
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError, match="broken.parquet"):
        open_logs(broken)


def test_unknown_fields_are_kept_as_extra(tmp_path):
    log = tmp_path / "x.jsonl"
    log.write_bytes(jsonl(event(1, host="worker-3", latency_ms=812, headers={"retry-after": "2"}), event(2)))
    with open_logs(log) as replay:
        extras = [json.loads(e) if e else None for (e,) in
                  replay.con.execute("SELECT extra FROM events ORDER BY line").fetchall()]
        assert extras == [{"host": "worker-3", "latency_ms": 812, "headers": {"retry-after": "2"}}, None]


def test_events_come_back_in_task_order_not_file_order(tmp_path):
    log = tmp_path / "workers.jsonl"
    log.write_bytes(jsonl(
        event(5, attempt=2), event(1, attempt=1),
        event(5, attempt=1, seq=None), event(5, attempt=1, op="verify"),
    ))
    with open_logs(log) as replay:
        assert list(replay.events()["line"]) == [2, 3, 4, 1]
