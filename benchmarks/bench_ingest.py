"""Ingest throughput: synthetic events as JSONL and Parquet, against `wc -l` as the I/O floor.

Usage: python benchmarks/bench_ingest.py [N_EVENTS]   (default 1,000,000)

Each measurement runs in a fresh process so that its peak memory is its own.
Data goes to a temporary directory that is removed afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from process_stats import cpu_seconds, load, peak_mb


def measure_child(path: str) -> dict:
    from nonatomic.replay.api import open_logs

    start, cpu_start = time.perf_counter(), cpu_seconds()
    with open_logs(path) as replay:
        ingested = replay.ingested
    return {"events": ingested.events, "lines": ingested.lines, "elapsed": time.perf_counter() - start,
            "cpu_s": cpu_seconds() - cpu_start, "peak_mb": peak_mb()}


def measure(path: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    import duckdb

    from synthetic import write_jsonl, write_parquet

    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(measure_child(sys.argv[2])))
        return
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
              f"{os.cpu_count()} CPUs; load average {load()} (CPU s: this process, all threads)")
        print(f"{'wc -l (I/O floor)':<22} {floor:7.2f} s  {n / floor:>13,.0f} lines/s")
        for label, path in (("ingest JSONL", jsonl), ("ingest Parquet", parquet)):
            r = measure(path)
            assert r["events"] == r["lines"] == n, (r, n)
            print(f"{label:<22} {r['elapsed']:7.2f} s  {n / r['elapsed']:>13,.0f} events/s  CPU {r['cpu_s']:6.2f} s  "
                  f"peak RSS {r['peak_mb']:,.0f} MB  load {load()}")


if __name__ == "__main__":
    main()
