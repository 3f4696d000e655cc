"""Persistent databases: later runs add to them, and nothing is added twice."""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from nonatomic.replay.api import open_logs
from nonatomic.replay.ingest.database import DatabaseError


def line(i: int, task: str = "pay-1") -> str:
    return json.dumps({"ts": f"2024-05-01T10:00:{i:02d}Z", "task_id": task, "seq": i}) + "\n"


def counts(db) -> tuple:
    """(events, quarantined, lines) as stored in the database file."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM quarantine), "
            "(SELECT sum(lines) FROM ingested_files)").fetchone()


def test_reingesting_the_same_file_adds_nothing(tmp_path):
    log, db = tmp_path / "a.jsonl", tmp_path / "replay.duckdb"
    log.write_text(line(1) + line(2) + "broken\n")
    with open_logs(log, db=db) as replay:
        assert (replay.ingested.events, replay.ingested.quarantined) == (2, 1)
    with open_logs(log, db=db) as replay:
        assert replay.ingested.skipped == [str(log)]
        summary = replay.summary(findings=[])
        assert (summary["lines"], summary["events"], summary["quarantined"]) == (3, 2, 1)
    copy = tmp_path / "copy.jsonl"
    shutil.copy(log, copy)
    with open_logs(copy, db=db) as replay:
        assert replay.ingested.skipped == [str(copy)]
    assert counts(db) == (2, 1, 3)


def test_a_grown_log_adds_only_its_new_lines(tmp_path):
    log, db = tmp_path / "live.jsonl", tmp_path / "replay.duckdb"
    log.write_text(line(1) + line(2))
    open_logs(log, db=db).close()
    with open(log, "a") as fh:
        fh.write(line(3) + "oops\n")
    with open_logs(log, db=db) as replay:
        assert (replay.ingested.events, replay.ingested.quarantined) == (1, 1)
        assert replay.con.execute("SELECT seq, line FROM events ORDER BY line").fetchall() == [(1, 1), (2, 2), (3, 3)]
        assert replay.con.execute("SELECT line FROM quarantine").fetchall() == [(4,)]
    assert counts(db) == (3, 1, 4)


def test_a_line_cut_off_mid_write_is_replaced_once_completed(tmp_path):
    log, db = tmp_path / "live.jsonl", tmp_path / "replay.duckdb"
    full = line(2)
    log.write_text(line(1) + full[:15])
    with open_logs(log, db=db) as replay:
        assert replay.con.execute("SELECT line, reason FROM quarantine").fetchall() == [
            (2, "truncated last line: invalid JSON")]
    with open(log, "a") as fh:
        fh.write(full[15:] + line(3))
    with open_logs(log, db=db) as replay:
        assert replay.con.execute("SELECT seq, line FROM events ORDER BY line").fetchall() == [(1, 1), (2, 2), (3, 3)]
        assert replay.con.execute("SELECT count(*) FROM quarantine").fetchone() == (0,)
    assert counts(db) == (3, 0, 3)


def test_a_rewritten_file_replaces_its_earlier_version_and_event_ids_stay_unique(tmp_path):
    log, other, db = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "replay.duckdb"
    log.write_text(line(1) + line(2) + "broken\n")
    other.write_text(line(3, task="b"))
    open_logs([log, other], db=db).close()
    log.write_text(line(5, task="other") + line(6, task="other"))
    with open_logs(log, db=db) as replay:
        assert replay.ingested.changes == {str(log): "replaced"}
        ids = replay.con.execute("SELECT count(DISTINCT event_id), count(*) FROM events").fetchone()
        assert ids == (3, 3)
        assert replay.con.execute("SELECT task_id, seq FROM events ORDER BY seq").fetchall() == [
            ("b", 3), ("other", 5), ("other", 6)]
        assert replay.quarantine_rows() == []  # the old version's quarantine went with it
        summary = replay.summary(findings=[])
        assert (summary["files"], summary["lines"], summary["events"], summary["quarantined"]) == (2, 3, 3, 0)
        assert summary["changes"] == {"new": [], "grown": [], "replaced": [str(log)], "unchanged": []}


def test_each_event_cites_its_own_file_across_runs(tmp_path):
    first, second, db = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "replay.duckdb"
    first.write_text(line(1) + line(2))
    second.write_text(line(3, task="other"))
    open_logs(first, db=db).close()
    with open(first, "a") as fh:
        fh.write(line(4))
    with open_logs([second, first], db=db) as replay:
        cited = replay.con.execute("SELECT seq, file FROM events ORDER BY seq").fetchall()
        # a grown log keeps the number its first lines are stored under
        numbers = replay.con.execute("SELECT file, file_id FROM log_files ORDER BY file_id").fetchall()
    assert cited == [(1, str(first)), (2, str(first)), (3, str(second)), (4, str(first))]
    assert numbers == [(str(first), 1), (str(second), 2)]


def test_a_database_of_an_older_layout_is_refused_not_mixed_into(tmp_path):
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE events (event_id BIGINT, file VARCHAR, line BIGINT)")
    log = tmp_path / "a.jsonl"
    log.write_text(line(1))
    with pytest.raises(DatabaseError, match="older nonatomic"):
        open_logs(log, db=db)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() == (1,)
