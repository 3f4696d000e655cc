"""The floor under bench_detect.py: what DuckDB itself takes, on this machine, for work every replay needs.

Two parts no run can skip, each timed as the cheapest query that does it:

- reading the log into a table (a plain copy of the Parquet file; DuckDB's
  JSON reader with its own types for the JSONL file), validating nothing;
- the orderings the detectors' stages stand on, one window each (ROW_NUMBER
  over the ordering): events of a task sharing a time, the start and end of
  an op, the attempts of a step, the leases of a lock.

Their sum is a lower bound on ingest plus detection, which also validate
every value, pair events and report.  It is printed next to the goals.

    python benchmarks/bench_floor.py [--sizes 1000000 10000000] [--data DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from bench_detect import generate
from process_stats import load

from nonatomic.rules.replay.views import KEPT_OPS

CALLS = "op IN ('call', 'rollback', 'verify')"
ORDERINGS = {
    "same time in a task": f"SELECT count(DISTINCT hash(task_id, ts)) FROM ev WHERE {KEPT_OPS}",
    "op start and end": "SELECT max(n) FROM (SELECT ROW_NUMBER() OVER (PARTITION BY task_id, step, attempt, op "
                        f"ORDER BY ts) AS n FROM ev WHERE {CALLS} AND phase IN ('start', 'end'))",
    "attempts of a step": "SELECT max(n) FROM (SELECT ROW_NUMBER() OVER (PARTITION BY task_id, step, tool, target "
                          "ORDER BY ts) AS n FROM ev WHERE op = 'call')",
    "leases of a lock": "SELECT max(n) FROM (SELECT ROW_NUMBER() OVER (PARTITION BY target, owner "
                        "ORDER BY ts) AS n FROM ev WHERE op LIKE 'lock%')",
}
GOALS = {"parquet": 5.0, "jsonl": 15.0}
"""Seconds for ingest plus every detector on 10M events."""


def timed(con, sql: str, params: dict | None = None) -> float:
    start = time.perf_counter()
    con.execute(sql, params or {}).fetchall()
    return time.perf_counter() - start


def floor(paths: dict[str, str]) -> dict[str, float]:
    import duckdb

    con = duckdb.connect(config={"preserve_insertion_order": False})
    times = {"read the JSONL": timed(con, "CREATE TABLE evj AS SELECT * FROM read_json($p, format='newline_delimited')",
                                     {"p": paths["jsonl"]})}
    con.execute("DROP TABLE evj")
    times["read the Parquet"] = timed(con, "CREATE TABLE ev AS SELECT * FROM read_parquet($p)", {"p": paths["parquet"]})
    for column in ("phase", "owner"):  # a log may lack them (none of its ops is phased, or locked)
        con.execute(f"ALTER TABLE ev ADD COLUMN IF NOT EXISTS {column} VARCHAR")
    for name, sql in ORDERINGS.items():
        times[name] = timed(con, sql)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "nonatomic-bench"))
    options = parser.parse_args()
    os.makedirs(options.data, exist_ok=True)
    for size in options.sizes:
        times = floor(generate(options.data, size))
        orderings = sum(times[name] for name in ORDERINGS)
        print(f"{size:,} events (load {load()}):")
        for name, seconds in times.items():
            print(f"  {name:<20} {seconds:6.2f} s")
        for fmt, read in (("parquet", "read the Parquet"), ("jsonl", "read the JSONL")):
            goal = f"; goal at 10M: {GOALS[fmt]:.0f} s" if size == 10_000_000 else ""
            print(f"  floor from {fmt:<8} {times[read] + orderings:6.2f} s (read + orderings){goal}")


if __name__ == "__main__":
    main()
