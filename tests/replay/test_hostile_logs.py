"""Logs and databases as a careless user or a hostile one hands them to `nonatomic replay`:
each case is the minimal reproducer of a defect found by fuzzing, and the properties
are the fuzzing kinds themselves at a small size (`make fuzz` runs them large:
NONATOMIC_FUZZ_EXAMPLES sets the number of examples)."""

from __future__ import annotations

import gzip
import io
import json
import os
import sqlite3
import subprocess
import sys

import duckdb
import pytest
import zstandard
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nonatomic.cli import main
from nonatomic.config import usable_cpus
from nonatomic.replay.api import open_logs
from nonatomic.replay.ingest import compression
from nonatomic.replay.ingest.compression import check_whole
from nonatomic.replay.ingest.database import DatabaseError
from nonatomic.replay.ingest.inputs import InputError, discover

FUZZ_EXAMPLES = int(os.environ.get("NONATOMIC_FUZZ_EXAMPLES", "0"))


def examples(small: int) -> int:
    return FUZZ_EXAMPLES or small


def record(i: int, task: str = "pay-1", **fields) -> dict:
    return {"ts": f"2024-05-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z", "task_id": task, "seq": i, "op": "call",
            "status": "ok", "tool": "refund_payment", "step": i, "attempt": 1, **fields}


def jsonl(records) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def replay(*args: str):
    return CliRunner().invoke(main, ["replay", *map(str, args)], catch_exceptions=False)


def state(replay_) -> tuple:
    """What the database holds: events and quarantine by file and line, and the summary counts."""
    events = sorted(replay_.con.execute("SELECT file, line, task_id, seq FROM events").fetchall())
    quarantine = sorted(replay_.con.execute("SELECT file, line, reason FROM quarantine").fetchall())
    summary = replay_.summary(findings=[])
    assert summary["lines"] == summary["events"] + summary["quarantined"]
    return events, quarantine, (summary["lines"], summary["events"], summary["quarantined"])


# --- compressed logs that lost their end -----------------------------------------------

ZSTD = zstandard.ZstdCompressor().compress
BIG = jsonl(record(i, task=f"t{i % 7}") for i in range(2000))


@pytest.mark.parametrize(("suffix", "compress"), [(".zst", ZSTD), (".gz", gzip.compress)])
@pytest.mark.parametrize("cut", ["5000 bytes", "half"])
def test_a_truncated_compressed_log_is_exit_2_even_without_strict(tmp_path, suffix, compress, cut):
    data = compress(BIG)
    log = tmp_path / f"audit.jsonl{suffix}"
    log.write_bytes(data[:5000] if cut == "5000 bytes" else data[: len(data) // 2])
    db = tmp_path / "r.duckdb"
    result = replay("--db", db, log)
    assert result.exit_code == 2
    assert f"truncated {'zstd' if suffix == '.zst' else 'gzip'} stream" in result.output
    with duckdb.connect(str(db), read_only=True) as con:  # nothing of it was kept
        assert con.execute("SELECT count(*) FROM event_rows").fetchone() == (0,)


def test_a_gzip_member_whose_crc_does_not_match_is_exit_2(tmp_path):
    data = bytearray(gzip.compress(BIG))
    data[len(data) // 3] ^= 0xFF  # DuckDB decodes the damaged deflate data without a word
    log = tmp_path / "audit.jsonl.gz"
    log.write_bytes(bytes(data))
    result = replay(log)
    assert result.exit_code == 2 and "corrupt gzip stream" in result.output


def test_a_gzip_of_several_members_is_whole(tmp_path):
    log = tmp_path / "audit.jsonl.gz"
    log.write_bytes(gzip.compress(jsonl([record(1)])) + gzip.compress(jsonl([record(2)])))
    with open_logs(log) as replayed:
        assert replayed.summary(findings=[])["events"] == 2


SMALL = jsonl(record(i) for i in range(12))


@pytest.mark.parametrize(("suffix", "compress"), [(".zst", ZSTD), (".gz", gzip.compress),
                                                  (".zst", zstandard.ZstdCompressor(write_checksum=True).compress)])
def test_a_small_compressed_log_cut_at_every_offset_is_refused(tmp_path, suffix, compress):
    data = compress(SMALL)
    log = tmp_path / f"audit.jsonl{suffix}"
    for size in range(len(data)):
        log.write_bytes(data[:size])
        with pytest.raises(InputError):
            check_whole(discover([str(log)])[0])
    log.write_bytes(data)
    check_whole(discover([str(log)])[0])
    # End to end at a few of those offsets: exit 2, nothing ingested.
    for size in (1, len(data) // 2, len(data) - 1):
        log.write_bytes(data[:size])
        assert replay(log).exit_code == 2


# --- a file's identity across --db runs ------------------------------------------------


def test_a_repaired_line_replaces_the_file_instead_of_adding_it_again(tmp_path):
    log, db = tmp_path / "audit.jsonl", tmp_path / "r.duckdb"
    good = [record(i) for i in range(16)]
    log.write_bytes(jsonl(good[:7]) + b"oops\n" + jsonl(good[8:]))
    with open_logs(log, db=db) as first:
        assert state(first)[2] == (16, 15, 1)
    log.write_bytes(jsonl(good))  # the bad line repaired: same size class, other bytes
    with open_logs(log, db=db) as again:
        events, quarantine, counts = state(again)
        assert counts == (16, 16, 0) and quarantine == []
        assert again.summary(findings=[])["changes"]["replaced"] == [str(log)]
        assert again.detect() == []  # no false NR301/NR304/NR403 from a second copy


def test_a_log_cut_back_to_what_it_once_held_is_loaded_again(tmp_path):
    # The ledger still remembers the first version of the log: that is this path's past, not a copy
    # of the content held elsewhere, so the cut-back log replaces the grown one and keeps its events.
    log, db = tmp_path / "audit.jsonl", tmp_path / "r.duckdb"
    first = [record(i) for i in range(4)]
    log.write_bytes(jsonl(first))
    open_logs(log, db=db).close()
    log.write_bytes(jsonl(first + [record(4)]))
    open_logs(log, db=db).close()
    log.write_bytes(jsonl(first))
    with open_logs(log, db=db) as again:
        assert again.ingested.changes == {str(log): "replaced"}
        assert state(again)[2] == (4, 4, 0)
        assert sorted(again.con.execute("SELECT seq FROM events").fetchall()) == [(i,) for i in range(4)]


@pytest.mark.parametrize("change", ["gzip grown by a member", "recompressed gzip", "rewritten parquet"])
def test_a_changed_compressed_or_parquet_file_is_counted_once(tmp_path, change):
    db = tmp_path / "r.duckdb"
    first, more = [record(i) for i in range(10)], [record(i) for i in range(10, 16)]
    if change == "rewritten parquet":
        log = tmp_path / "audit.parquet"
        _parquet(tmp_path, log, first)
        open_logs(log, db=db).close()
        _parquet(tmp_path, log, first + more)
    else:
        log = tmp_path / "audit.jsonl.gz"
        log.write_bytes(gzip.compress(jsonl(first), compresslevel=6))
        open_logs(log, db=db).close()
        if change == "gzip grown by a member":
            log.write_bytes(log.read_bytes() + gzip.compress(jsonl(more)))
        else:
            log.write_bytes(gzip.compress(jsonl(first + more), compresslevel=1))
    with open_logs(log, db=db) as again:
        assert state(again)[2] == (16, 16, 0)
        assert sorted(again.con.execute("SELECT seq FROM events").fetchall()) == [(i,) for i in range(16)]
        assert again.ingested.changes == {str(log): "replaced"}


def _parquet(tmp_path, path, records) -> None:
    source = tmp_path / "source.json"
    source.write_bytes(jsonl(records))
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT * FROM read_json('{source}')) TO '{path}' (FORMAT parquet)")


def test_the_summary_says_what_each_run_did_to_each_file(tmp_path):
    grown, same, db = tmp_path / "live.jsonl", tmp_path / "done.jsonl", tmp_path / "r.duckdb"
    grown.write_bytes(jsonl([record(1)]))
    same.write_bytes(jsonl([record(2, task="b")]))
    first = replay("--db", db, "--format", "json", grown, same)
    assert json.loads(first.stdout)["summary"]["changes"]["new"] == [str(grown), str(same)]
    with open(grown, "ab") as fh:
        fh.write(jsonl([record(3)]))
    again = replay("--db", db, grown, same)
    assert f"This run: grown 1 ({grown}); unchanged 1" in again.stdout


# The random sequences of edits between --db runs: after every run, the database holds
# exactly what a fresh ingest of the files as they now are holds.
FILES = {"a.jsonl": ("jsonl", "none"), "b.jsonl.gz": ("jsonl", "gzip"), "c.csv": ("csv", "none"),
         "d.parquet": ("parquet", "none")}
ACTIONS = st.sampled_from(["append", "append partial line", "edit", "truncate", "recompress", "nothing"])


def _render(name: str, records: list[dict], compression: str, partial: bool, tmp_path) -> bytes:
    fmt = FILES[name][0]
    if fmt == "parquet":
        _parquet(tmp_path, tmp_path / name, records or [record(0, task=name)])
        return (tmp_path / name).read_bytes()
    if fmt == "csv":
        keys = list(record(0))
        data = ("\n".join([",".join(keys)] + [",".join(str(r[k]) for k in keys) for r in records]) + "\n").encode()
    else:
        data = jsonl(records)
        if partial and records:
            data = data[: -len(json.dumps(records[-1])) // 2]  # the writer was cut off mid-line
    if compression == "gzip":
        return gzip.compress(data)
    if compression == "zstd":
        return ZSTD(data)
    return data


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(sorted(FILES)), ACTIONS, st.integers(0, 1000)),
                      min_size=1, max_size=5))
def test_random_edits_between_db_runs_count_each_line_once(tmp_path_factory, steps):
    tmp_path = tmp_path_factory.mktemp("db-runs")
    db = tmp_path / "r.duckdb"
    content = {name: [record(i, task=f"{name}-{i % 3}") for i in range(4)] for name in FILES}
    compression = {name: FILES[name][1] for name in FILES}
    partial = dict.fromkeys(FILES, False)
    serial = 100
    for name, action, number in [(None, "nothing", 0), *steps]:
        if action == "append" or action == "append partial line":
            serial += 1
            content[name].append(record(serial, task=f"{name}-x"))
            partial[name] = action == "append partial line" and name == "a.jsonl"
        elif action == "edit" and content[name]:
            content[name][number % len(content[name])] = record(number, task=f"{name}-edited")
        elif action == "truncate":
            content[name] = content[name][: number % (len(content[name]) + 1)]
        elif action == "recompress" and name == "a.jsonl":  # its name does not say how it is compressed
            compression[name] = ["none", "gzip", "zstd"][number % 3]
        for each in FILES:
            (tmp_path / each).write_bytes(_render(each, content[each], compression[each], partial[each], tmp_path))
        paths = [tmp_path / each for each in sorted(FILES)]
        with open_logs(paths, db=db) as kept, open_logs(paths) as fresh:
            assert state(kept) == state(fresh)


def test_one_relative_name_run_from_two_directories_names_two_files(tmp_path, monkeypatch):
    db = tmp_path / "r.duckdb"
    for directory, task in (("a", "a"), ("b", "b")):
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "log.jsonl").write_bytes(jsonl([record(1, task=task), record(2, task=task, seq="x")]))
        monkeypatch.chdir(tmp_path / directory)
        open_logs("log.jsonl", db=db).close()
    (tmp_path / "b" / "log.jsonl").write_bytes(jsonl([record(3, task="b")]))  # b's log rewritten: a's stays
    with open_logs("log.jsonl", db=db) as again:
        assert again.ingested.changes == {"log.jsonl": "replaced"}
        events, quarantine, counts = state(again)
    theirs = str(tmp_path / "b" / "log.jsonl")
    assert [(file, task, seq) for file, _, task, seq in events] == sorted([("log.jsonl", "a", 1), (theirs, "b", 3)])
    assert [(file, line) for file, line, _ in quarantine] == [("log.jsonl", 2)] and counts == (3, 2, 1)


# --- line ends -------------------------------------------------------------------------


@pytest.fixture
def zstd_decoder(monkeypatch):
    """The interpreter's zstd decoder (Python 3.14's compression.zstd), played where it has none
    by the test extra's zstandard, buffered as the standard library's file objects are."""
    def zstandard_open(path, mode):
        return io.BufferedReader(zstandard.open(path, mode))

    monkeypatch.setattr(compression, "ZSTD_OPEN", compression.ZSTD_OPEN or zstandard_open)


COMPRESS = {"plain": lambda data: data, "gzip": gzip.compress, "zstd": ZSTD}
SUFFIX = {"plain": "", "gzip": ".gz", "zstd": ".zst"}
LINE_KINDS = st.sampled_from(["lf", "crlf", "lone cr inside", "bad", "blank"])


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(LINE_KINDS, max_size=30), final_newline=st.booleans(), fast=st.booleans(),
       compress=st.sampled_from(sorted(COMPRESS)))
def test_line_numbers_are_those_of_grep_whatever_the_line_ends(tmp_path_factory, zstd_decoder, kinds, final_newline,
                                                               fast, compress):
    parts, bad = [], []
    for number, kind in enumerate(kinds, start=1):
        text = json.dumps(record(number, n=number))
        if kind == "lone cr inside":  # a CR is JSON whitespace: a valid line that DuckDB would split
            text = text.replace(", ", ",\r", 1)
        elif kind == "bad":
            text = "oops" if fast else "oops {"
            bad.append(number)
        elif kind == "blank":
            text = ""
        parts.append(text + ("\r\n" if kind == "crlf" else "\n"))
    data = "".join(parts)
    if not final_newline and data:
        data = data[:-1]
        if kinds[-1] == "crlf":
            data = data[:-1]
    log = tmp_path_factory.mktemp("ends") / ("log.jsonl" + SUFFIX[compress])
    log.write_bytes(COMPRESS[compress](data.encode()))
    with open_logs(log) as replayed:
        events, quarantine, (lines, _, _) = state(replayed)
        numbered = replayed.con.execute("SELECT line, extra->>'n' FROM events").fetchall()
    grep_lines = data.split("\n")
    if grep_lines and grep_lines[-1] == "":
        grep_lines.pop()
    assert lines == sum(1 for text in grep_lines if text.strip("\r"))
    assert [line for _, line, _ in quarantine] == bad
    assert all(int(n) == line for line, n in numbered)


def test_a_crlf_line_in_a_lf_file_shifts_nothing(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join([json.dumps(record(1)).encode(), json.dumps(record(2)).encode() + b"\r",
                                json.dumps(record(3)).encode(), json.dumps(record(4, attempt="x")).encode()]) + b"\n")
    with open_logs(log) as replayed:
        assert replayed.con.execute("SELECT seq, line FROM events ORDER BY seq").fetchall() == [(1, 1), (2, 2), (3, 3)]
        assert [q["line"] for q in replayed.quarantine_rows()] == [4]


def test_a_lone_cr_in_a_crlf_file_eats_no_byte(tmp_path):
    log = tmp_path / "log.jsonl"
    one, two, three = (json.dumps(record(i)).encode() for i in (1, 2, 3))
    log.write_bytes(one + b"\r\n" + two.replace(b", ", b",\r", 1) + b"\r\n" + three + b"\r\n")
    with open_logs(log) as replayed:
        assert replayed.con.execute("SELECT seq, line FROM events ORDER BY seq").fetchall() == [(1, 1), (2, 2), (3, 3)]


# --- what --db may point at ------------------------------------------------------------


def _foreign_duckdb(path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE quarantine (a INTEGER)")


def _other_duckdb(path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE invoices (a INTEGER)")


def _sqlite(path) -> None:
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x)")


@pytest.mark.parametrize(
    ("db", "message"),
    [
        (_foreign_duckdb, "not a nonatomic replay database (it holds quarantine (other columns))"),
        (_other_duckdb, "not a nonatomic replay database (it holds invoices)"),
        (_sqlite, "a SQLite database"),
        (lambda path: path.write_bytes(jsonl([record(1)])), "not a DuckDB database"),
        (lambda path: path.write_text("ts,task_id\n"), "not a DuckDB database"),
        ("md:x", "not a URL or another database's name"),
        ("sqlite:x.db", "not a URL or another database's name"),
        ("postgres:dbname=x", "not a URL or another database's name"),
    ],
    ids=["duckdb-same-names", "duckdb-other-tables", "sqlite", "jsonl", "csv", "md", "sqlite-url", "postgres"],
)
def test_a_db_that_is_not_a_replay_database_is_refused(tmp_path, monkeypatch, db, message):
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "audit.jsonl"
    log.write_bytes(jsonl([record(1)]))
    if callable(db):
        target = tmp_path / "given.db"
        db(target)
        before = target.read_bytes()
        db = target
    result = replay("--db", db, log)
    assert result.exit_code == 2 and message in result.output
    if isinstance(db, os.PathLike):
        assert db.read_bytes() == before  # refused before anything was written


def test_duckdb_never_installs_or_autoloads_an_extension(tmp_path):
    log = tmp_path / "audit.jsonl"
    log.write_bytes(jsonl([record(1)]))
    with open_logs(log, db=tmp_path / "r.duckdb", threads=100_000) as replayed:
        settings_ = replayed.con.execute(
            "SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions'), "
            "current_setting('threads')").fetchone()
    assert settings_[:2] == (False, False)
    assert settings_[2] <= usable_cpus()  # --threads 100000 is bounded by the machine


def test_a_database_error_names_the_database():
    with pytest.raises(DatabaseError):
        open_logs([], db="md:x")


# --- outputs that cannot be written ----------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["lint -o", "lint --write-baseline", "replay -o", "timeline -o"])
def test_a_full_disk_is_exit_2_with_the_real_reason(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tool.py").write_text("import requests\nrequests.get(u)\n")
    (tmp_path / "audit.jsonl").write_bytes(jsonl([record(1)]))
    name, option = command.split()
    target = "tool.py" if name == "lint" else "audit.jsonl"
    extra = ["--no-cache"] if name == "lint" else (["--task", "pay-1"] if name == "timeline" else [])
    result = CliRunner().invoke(main, [name, *extra, option, "/dev/full", target])
    assert result.exit_code == 2
    assert "/dev/full: cannot write: No space left on device" in result.output


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_db_commit_on_a_full_disk_is_exit_2_with_the_real_reason_and_loses_nothing(tmp_path):
    db, first, second = tmp_path / "r.duckdb", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(jsonl([record(1, task="a"), record(2, task="a", seq="x")]))
    second.write_bytes(jsonl([record(3, task="b")]))
    assert replay("--db", db, first).exit_code == 0
    with open_logs([], db=db) as before:
        held = state(before)
    # A commit writes the write-ahead log first: the disk fills up there, as DuckDB meets it.
    wal = tmp_path / "r.duckdb.wal"
    wal.symlink_to("/dev/full")
    result = replay("--db", db, second)
    assert result.exit_code == 2
    assert "No space left on device" in result.output and "no transaction is active" not in result.output
    wal.unlink(missing_ok=True)
    with open_logs([], db=db) as after:
        assert state(after) == held
    with open_logs(second, db=db) as again:  # and the next run, with room, adds what was refused
        assert again.ingested.changes == {str(second): "new"} and state(again)[2] == (3, 2, 1)


def test_an_output_that_is_a_directory_is_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tool.py").write_text("import requests\nrequests.get(u)\n")
    (tmp_path / "out").mkdir()
    result = CliRunner().invoke(main, ["lint", "--no-cache", "--write-baseline", "out", "tool.py"])
    assert result.exit_code == 2 and "out: cannot write: Is a directory" in result.output


# --- values the SPEC's types forbid, and JSON as its parsers read it -------------------


def test_a_key_given_twice_takes_the_last_value_as_python_does(tmp_path):
    line = '{"ts": "2024-05-01T10:00:00Z", "task_id": "a", "task_id": "b", "seq": 1, "seq": 2}'
    log = tmp_path / "audit.jsonl"
    log.write_text(line + "\n")
    expected = json.loads(line)
    with open_logs(log) as replayed:
        assert replayed.con.execute("SELECT task_id, seq FROM events").fetchall() == [(expected["task_id"], expected["seq"])]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"task_id": {"id": 1}}, "task_id is not a string: it is an object"),
        ({"task_id": 42}, "task_id is not a string: it is a number"),
        ({"task_id": ["a"]}, "task_id is not a string: it is an array"),
        ({"tool": {"name": "refund"}}, "tool is not a string: it is an object"),
        ({"op": "lock_acquire", "ttl_ms": -5}, "ttl_ms must be >= 0: -5"),
    ],
)
@pytest.mark.parametrize("among_good", [False, True], ids=["alone", "json-reader-path"])
def test_values_of_a_type_the_spec_forbids_are_quarantined(tmp_path, fields, reason, among_good):
    log = tmp_path / "audit.jsonl"
    bad = {**record(9), **fields}
    log.write_bytes(jsonl(([record(1)] if among_good else []) + [bad]))
    with open_logs(log) as replayed:
        assert [(q["line"], q["reason"]) for q in replayed.quarantine_rows()] == [(1 + among_good, reason)]


def test_a_number_is_still_text_for_other_text_fields(tmp_path):
    log = tmp_path / "audit.jsonl"
    log.write_bytes(jsonl([{**record(1), "target": 8821, "owner": 7}]))
    with open_logs(log) as replayed:
        assert replayed.con.execute("SELECT target, owner FROM events").fetchall() == [("8821", "7")]


def test_an_otlp_record_nested_past_the_interpreters_limit_is_quarantined(tmp_path):
    # In a fresh interpreter: the recursion limit is process-wide, and another test may have raised it.
    log = tmp_path / "traces.jsonl"
    deep = '{"resourceSpans": [' + '{"a": ' * 5000 + "1" + "}" * 5000 + "]}"
    log.write_text(deep + "\n")
    run = subprocess.run([sys.executable, "-m", "nonatomic", "replay", "--input-format", "otlp", "--format", "json",
                          str(log)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert [(q["line"], q["reason"]) for q in report["quarantine"]] == [(1, "nested too deeply to read")]
    assert report["summary"]["lines"] == 1


def test_linting_first_in_one_process_leaves_the_recursion_limit_to_the_replay(tmp_path):
    # The linter raises the interpreter's limit for its deep trees; a replay of a deep trace
    # later in the same process (the two APIs in one session) must still meet the usual one.
    log = tmp_path / "traces.jsonl"
    log.write_text('{"resourceSpans": [' + '{"a": ' * 5000 + "1" + "}" * 5000 + "]}\n")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from nonatomic.lint.config import LintSettings, select_codes\n"
        "from nonatomic.lint.runner import RulePlan, lint_source\n"
        "from nonatomic.replay.api import open_logs\n"
        "limit = sys.getrecursionlimit()\n"
        "deep = ('x = ' + '[' * 150 + ']' * 150 + '\\n').encode()\n"
        "assert not lint_source('deep.py', deep, RulePlan(LintSettings(root=Path.cwd(), enabled=select_codes(None, [])))).crashes\n"
        "assert sys.getrecursionlimit() == limit, sys.getrecursionlimit()\n"
        "with open_logs(sys.argv[1], input_format='otlp') as replayed:\n"
        "    print([(q['line'], q['reason']) for q in replayed.quarantine_rows()])\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[(1, 'nested too deeply to read')]"


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
@pytest.mark.parametrize("compress", ["plain", "gzip", "zstd"])
def test_blank_lines_in_a_csv_log_shift_no_line_number(tmp_path, zstd_decoder, line_end, compress):
    rows = ["ts,task_id,seq", "2024-05-01T10:00:01Z,t,1", "", "2024-05-01T10:00:02Z,t", "", "",
            "2024-05-01T10:00:03Z,t,x", "2024-05-01T10:00:04Z,t,4,5", "2024-05-01T10:00:05Z,t,5"]
    data = line_end.join(rows).encode() + line_end.encode()
    log = tmp_path / ("audit.csv" + SUFFIX[compress])
    log.write_bytes(COMPRESS[compress](data))
    grep = {text.split(",")[-1]: number for number, text in enumerate(rows, start=1)}
    with open_logs(log) as replayed:
        assert replayed.con.execute("SELECT seq, line FROM events ORDER BY seq").fetchall() == [
            (1, grep["1"]), (5, grep["5"])]
        assert [(q["line"], q["reason"]) for q in replayed.quarantine_rows()] == [
            (4, "CSV row has too few columns"), (grep["x"], "seq is not an integer: x"),
            (8, "CSV row has too many columns")]
        assert state(replayed)[2] == (5, 2, 3)


CSV_LINE_KINDS = st.tuples(st.sampled_from(["good", "bad", "short", "blank", "quoted"]), st.sampled_from(["\n", "\r\n"]))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(header_end=st.sampled_from(["\n", "\r\n"]), kinds=st.lists(CSV_LINE_KINDS, max_size=20),
       compress=st.sampled_from(sorted(COMPRESS)))
def test_csv_line_numbers_are_those_of_grep_whatever_the_line_ends(tmp_path_factory, zstd_decoder, header_end,
                                                                   kinds, compress):
    # DuckDB's strict CSV reader takes the first line's end for the file's: a mix is read from
    # an LF copy, with the same lines (a lenient reader would drop columns).
    parts, good, bad = ["ts,task_id,seq,note" + header_end], [], []
    for number, (kind, end) in enumerate(kinds, start=2):
        row = {"good": f"2024-05-01T10:00:01Z,t,{number},n", "bad": f"2024-05-01T10:00:01Z,t,x{number},n",
               "short": "2024-05-01T10:00:01Z,t", "blank": "",
               "quoted": f'2024-05-01T10:00:01Z,t,{number},"a, ""b"""'}[kind]
        parts.append(row + end)
        (good if kind in ("good", "quoted") else [] if kind == "blank" else bad).append(number)
    log = tmp_path_factory.mktemp("csv") / ("audit.csv" + SUFFIX[compress])
    log.write_bytes(COMPRESS[compress]("".join(parts).encode()))
    with open_logs(log) as replayed:
        events, quarantine, counts = state(replayed)
    assert [(seq, line) for _, line, _, seq in sorted(events, key=lambda e: e[1])] == [(n, n) for n in good]
    assert [line for _, line, _ in quarantine] == bad
    assert counts == (len(good) + len(bad), len(good), len(bad))


@pytest.mark.parametrize("compress", ["plain", "gzip", "zstd"])
@pytest.mark.parametrize(
    "ends", [("\n", "\r\n", "\r\n"), ("\r\n", "\n", "\n"), ("\n", "\n", "\r\n"), ("\r\n", "\r\n", "\n")],
    ids=["lf-header-crlf-rows", "crlf-header-lf-rows", "rows-of-both", "rows-of-both-crlf-first"])
def test_a_csv_log_mixing_lf_and_crlf_is_read_whole(tmp_path, zstd_decoder, compress, ends):
    rows = ["ts,task_id,seq", "2024-05-01T10:00:01Z,t,1", "2024-05-01T10:00:02Z,t,2,extra"]
    data = "".join(row + end for row, end in zip(rows, ends)).encode()
    log = tmp_path / ("audit.csv" + SUFFIX[compress])
    log.write_bytes(COMPRESS[compress](data))
    result = replay("--format", "json", log)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["summary"]["lines"], report["summary"]["events"], report["summary"]["quarantined"]) == (2, 1, 1)
    assert [(q["line"], q["reason"], q["raw"]) for q in report["quarantine"]] == [
        (3, "CSV row has too many columns", "2024-05-01T10:00:02Z,t,2,extra")]


def test_a_mixed_csv_in_a_kept_database_grows_by_its_new_lines_only(tmp_path):
    log, db = tmp_path / "audit.csv", tmp_path / "r.duckdb"
    log.write_bytes(b"ts,task_id,seq\n2024-05-01T10:00:01Z,t,1\r\n")
    open_logs(log, db=db).close()
    with log.open("ab") as fh:
        fh.write(b"2024-05-01T10:00:02Z,t,2\n2024-05-01T10:00:03Z,t,x\r\n")
    with open_logs(log, db=db) as again:
        assert again.ingested.changes == {str(log): "grown"}
        events, quarantine, counts = state(again)
    assert [(line, seq) for _, line, _, seq in events] == [(2, 1), (3, 2)] and counts == (3, 2, 1)
    assert [(line, reason) for _, line, reason in quarantine] == [(4, "seq is not an integer: x")]


def test_a_lone_cr_in_a_zstd_log_is_read_as_grep_counts(tmp_path, zstd_decoder):
    log = tmp_path / "log.jsonl.zst"
    one, two, three = (json.dumps(record(i)).encode() for i in (1, 2, 3))
    log.write_bytes(ZSTD(one + b"\n" + two.replace(b", ", b",\r", 1) + b"\n" + three + b"\n"))
    with open_logs(log) as replayed:
        assert replayed.con.execute("SELECT seq, line FROM events ORDER BY seq").fetchall() == [(1, 1), (2, 2), (3, 3)]
        assert replayed.warnings() == []


def test_zstd_line_ends_this_python_cannot_check_are_said_so(tmp_path, monkeypatch):
    monkeypatch.setattr(compression, "ZSTD_OPEN", None)  # an interpreter without a zstd decoder (before 3.14)
    log = tmp_path / "log.jsonl.zst"
    log.write_bytes(ZSTD(jsonl([record(1), record(2)])))
    result = CliRunner().invoke(main, ["replay", "--strict", str(log)])
    assert result.exit_code == 0, result.output  # the file is not to blame: --strict passes
    assert "warning: the line ends of 1 zstd file(s) were not checked" in result.stderr
    assert str(log) in result.stderr
    mixed = tmp_path / "audit.csv.zst"
    mixed.write_bytes(ZSTD(b"ts,task_id,seq\n2024-05-01T10:00:01Z,t,1\r\n2024-05-01T10:00:02Z,t,2\r\n"))
    result = replay(mixed)
    assert result.exit_code == 2 and "this Python has no zstd decoder" in result.output


def test_a_file_changed_into_a_copy_of_another_drops_its_old_version_and_adds_nothing(tmp_path):
    first, second, db = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "r.duckdb"
    first.write_bytes(jsonl([record(1, task="a")]))
    second.write_bytes(jsonl([record(2, task="b")]))
    open_logs([first, second], db=db).close()
    first.write_bytes(second.read_bytes())  # rotated over, say: its content is already held
    with open_logs(first, db=db) as again:
        assert again.ingested.changes == {str(first): "replaced"}
        events, quarantine, counts = state(again)
        assert [(file, task) for file, _, task, _ in events] == [(str(second), "b")] and counts == (1, 1, 0)
