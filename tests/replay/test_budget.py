"""The memory DuckDB gets without --memory-limit: sized to the input, bounded below and by RAM."""

from __future__ import annotations

import json
import os

from nonatomic.replay.api import open_logs
from nonatomic.config import usable_cpus
from nonatomic.replay.ingest import budget
from nonatomic.replay.ingest.budget import EXPANSION, FLOOR, HEADROOM, PER_THREAD, MiB, default_memory_limit, threads_for
from nonatomic.replay.ingest.inputs import discover

GB = 1 << 30


def _sparse(path, size: int) -> str:
    """A file of `size` bytes that takes no disk: only its size is read."""
    with open(path, "wb") as fh:
        fh.truncate(size)
    return str(path)


def _ram() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def test_a_small_log_gets_the_floor(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_text(json.dumps({"ts": "2024-05-01T10:00:00Z", "task_id": "t"}) + "\n")
    assert default_memory_limit(discover([str(log)])) == f"{FLOOR // MiB}MiB"


def test_the_limit_grows_with_the_input_and_its_format(tmp_path):
    plain = discover([_sparse(tmp_path / "big.jsonl", GB // 2)])
    packed = discover([_sparse(tmp_path / "big.parquet", GB // 64)])
    assert default_memory_limit(plain) == f"{int(HEADROOM * GB // 2) // MiB}MiB"
    assert default_memory_limit(packed) == f"{int(HEADROOM * EXPANSION['parquet'] * GB // 64) // MiB}MiB"
    both = int(HEADROOM * (GB // 2 + EXPANSION["parquet"] * GB // 64))
    assert default_memory_limit(plain + packed) == f"{both // MiB}MiB"


def test_a_kept_database_counts_and_ram_bounds_it(tmp_path):
    db = _sparse(tmp_path / "replay.duckdb", GB // 8)
    assert default_memory_limit([], db) == f"{int(HEADROOM * EXPANSION['database'] * GB // 8) // MiB}MiB"
    huge = discover([_sparse(tmp_path / "huge.jsonl", _ram())])
    assert default_memory_limit(huge) == f"{int(0.8 * _ram()) // MiB}MiB"


def test_replay_sets_the_default_and_a_given_limit_wins(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_text(json.dumps({"ts": "2024-05-01T10:00:00Z", "task_id": "t"}) + "\n")
    with open_logs(log) as replay:
        assert replay.con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == f"{FLOOR // MiB}.0 MiB"
    with open_logs(log, memory_limit="300MiB") as replay:
        assert replay.con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "300.0 MiB"


def test_a_given_limit_affords_one_thread_per_gigabyte(monkeypatch):
    monkeypatch.setattr(budget, "usable_cpus", lambda: 8)
    assert [threads_for(size) for size in ("500MB", "1GB", "1GiB", "2GB", "3.5GB", "16GB")] == [1, 1, 1, 2, 3, 8]
    assert threads_for("1G") == 1  # DuckDB's spelling without the B
    assert threads_for("100%") == max(1, min(8, _ram() // PER_THREAD))
    assert threads_for("plenty") is None  # left to DuckDB, which names what it cannot read


def test_replay_under_a_given_limit_takes_the_threads_it_affords_unless_told(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_text(json.dumps({"ts": "2024-05-01T10:00:00Z", "task_id": "t"}) + "\n")
    with open_logs(log, memory_limit="900MB") as replay:
        assert replay.con.execute("SELECT current_setting('threads')").fetchone()[0] == 1
    if usable_cpus() > 1:
        with open_logs(log, memory_limit="900MB", threads=2) as replay:
            assert replay.con.execute("SELECT current_setting('threads')").fetchone()[0] == 2
        with open_logs(log) as replay:  # the default budget keeps DuckDB's threads
            assert replay.con.execute("SELECT current_setting('threads')").fetchone()[0] == usable_cpus()
