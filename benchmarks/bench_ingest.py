"""Ingest throughput: synthetic events as JSONL and Parquet, against `wc -l` as the I/O floor.

Usage: python benchmarks/bench_ingest.py [N_EVENTS]   (default 1,000,000)

Each measurement runs in a fresh process so that its peak RSS is its own.
Data goes to a temporary directory that is removed afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

MEASURE = """
import resource, sys, time
from nonatomic.replay.api import open_logs
start = time.perf_counter()
with open_logs(sys.argv[1]) as replay:
    events = replay.ingested.events
    lines = replay.ingested.lines
elapsed = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(events, lines, elapsed, peak_mb)
"""


def measure(path: str) -> tuple[int, int, float, float]:
    out = subprocess.run([sys.executable, "-c", MEASURE, path], capture_output=True, text=True, check=True)
    events, lines, elapsed, peak = out.stdout.split()
    return int(events), int(lines), float(elapsed), float(peak)


def main() -> None:
    import duckdb

    from nonatomic.replay.synthetic import write_jsonl, write_parquet

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory(prefix="nonatomic-bench-") as tmp:
        jsonl, parquet = os.path.join(tmp, "events.jsonl"), os.path.join(tmp, "events.parquet")
        con = duckdb.connect()
        write_jsonl(con, jsonl, n)
        write_parquet(con, parquet, n)
        con.close()
        start = time.perf_counter()
        subprocess.run(["wc", "-l", jsonl], check=True, capture_output=True)
        floor = time.perf_counter() - start
        size_mb = os.path.getsize(jsonl) / 1e6
        print(f"{n:,} synthetic events; JSONL {size_mb:,.0f} MB, Parquet {os.path.getsize(parquet) / 1e6:,.0f} MB; "
              f"{os.cpu_count()} CPUs")
        print(f"{'wc -l (I/O floor)':<22} {floor:7.2f} s  {n / floor:>13,.0f} lines/s")
        for label, path in (("ingest JSONL", jsonl), ("ingest Parquet", parquet)):
            events, lines, elapsed, peak = measure(path)
            assert events == lines == n, (events, lines, n)
            print(f"{label:<22} {elapsed:7.2f} s  {events / elapsed:>13,.0f} events/s  peak RSS {peak:,.0f} MB")


if __name__ == "__main__":
    main()
