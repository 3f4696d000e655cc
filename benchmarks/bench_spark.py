"""The Spark engine in local mode next to DuckDB, on the same synthetic events (JSONL), 1M and 10M.

On one machine Spark is slower: a JVM to start, a query plan per stage, a
shuffle per window.  The figure is its overhead, and its time per million
events shows how it grows; Spark pays off when the logs do not fit one
machine (see the README, "Replay on Spark").

    python benchmarks/bench_spark.py [--sizes 1000000 10000000] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_detect import digest, generate
from bench_floor import ORDERINGS, floor
from process_stats import load


def measure_spark(path: str) -> dict:
    """Run in a child process: start Spark, ingest `path`, run every detector."""
    from pyspark.sql import SparkSession

    from nonatomic.replay.spark.engine import run_detectors
    from nonatomic.replay.spark.ingest import ingest

    from nonatomic.replay.spark.session import spark_session

    start = time.perf_counter()
    SparkSession.builder.config("spark.ui.enabled", "false")
    spark = spark_session("local[*]")  # started as the engine starts it (its settings, its driver memory)
    started = time.perf_counter()
    result = ingest(spark, [path])
    ingested = time.perf_counter()
    findings = run_detectors(spark)
    done = time.perf_counter()
    return {"events": result.events, "start_s": started - start, "ingest_s": ingested - started,
            "detect_s": done - ingested, "total_s": done - start, "findings": len(findings),
            "digest": digest(findings)}


def child(*args: str) -> dict:
    out = subprocess.run([sys.executable, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "nonatomic-bench"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        print(json.dumps(measure_spark(options.child)))
        return
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("Spark figure skipped: pyspark is not installed (pip install 'nonatomic[spark]')")
        return
    if shutil.which("java") is None:
        print("Spark figure skipped: no Java runtime (Spark needs Java 17+)")
        return
    os.makedirs(options.data, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    row = "{:<22} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11}"
    print(f"{os.cpu_count()} CPUs")
    print(row.format("engine", "events", "start s", "ingest s", "detect s", "total s", "findings", "s per 1M"))
    for size in options.sizes:
        paths = generate(options.data, size)
        path = paths["jsonl"]
        times = floor(paths)
        floor_s = times["read the JSONL"] + sum(times[name] for name in ORDERINGS)
        duck = child(os.path.join(here, "bench_detect.py"), "--child", "nonatomic", path, "-")
        spark = child(__file__, "--child", path)
        millions = spark["events"] / 1e6
        print(row.format("duckdb", f"{duck['events']:,}", "-", f"{duck['ingest_s']:.1f}", f"{duck['detect_s']:.1f}",
                         f"{duck['total_s']:.1f}", duck["findings"], f"{duck['total_s'] / millions:.1f}"))
        print(row.format("spark local[*]", f"{spark['events']:,}", f"{spark['start_s']:.1f}",
                         f"{spark['ingest_s']:.1f}", f"{spark['detect_s']:.1f}", f"{spark['total_s']:.1f}",
                         spark["findings"], f"{spark['total_s'] / millions:.1f}"))
        same = "the same findings field for field" if spark["digest"] == duck["digest"] else "DIFFERENT findings"
        print(f"  {size:,} events: Spark and DuckDB give {same} (digest of the JSON findings); Spark local mode is "
              f"{spark['total_s'] / duck['total_s']:.1f}x DuckDB's time (load {load()}); floor from JSONL "
              f"{floor_s:.2f} s: DuckDB {duck['total_s'] / floor_s:.1f}x, Spark {spark['total_s'] / floor_s:.1f}x")


if __name__ == "__main__":
    main()
