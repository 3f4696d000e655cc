"""Replay at production scale: many findings, one task out of a big log, each figure beside the floor.

The log is benchmarks/synthetic.py's (about 0.21 findings per event, see its
docstring).  Each measurement runs the command line in a fresh process, so its
peak memory (VmHWM) is its own, and every time is also printed as a multiple
of the floor (bench_floor.py: DuckDB reading the log plus the orderings the
stages stand on) measured in the same run on the same files.

- `replay --format json` (every finding written) against the same run with the
  findings discarded (ingest, every stage and detector, the rows only counted);
- the same JSON run under `--memory-limit`;
- `replay --format html` (its size) and `--format text`;
- `timeline --task ID` against ingest alone.

    python benchmarks/bench_scale.py [--sizes 1000000] [--data DIR] [--memory-limit 500MB]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from bench_floor import ORDERINGS, floor
from process_stats import cpu_seconds, load, peak_mb
from synthetic import EVENTS_PER_TASK, write_jsonl, write_parquet


def generate(directory: str, events: int) -> dict[str, str]:
    """The synthetic log as JSONL and Parquet (made once, then reused)."""
    import duckdb

    paths = {fmt: os.path.join(directory, f"synthetic-{events}.{fmt}") for fmt in ("jsonl", "parquet")}
    con = duckdb.connect()
    for fmt, write in (("jsonl", write_jsonl), ("parquet", write_parquet)):
        if not os.path.exists(paths[fmt]):
            write(con, paths[fmt], events)
    return paths


def measure_cli(args: list[str]) -> dict:
    """Run in a child: the command line, as a user runs it."""
    from nonatomic.cli import main

    start, cpu = time.perf_counter(), cpu_seconds()
    try:
        main(args, standalone_mode=False)
    except SystemExit:
        pass
    return {"total_s": time.perf_counter() - start, "cpu_s": cpu_seconds() - cpu, "peak_mb": peak_mb()}


def measure_discarded(path: str) -> dict:
    """Run in a child: ingest, every stage and every detector, their rows counted and dropped."""
    from nonatomic.replay.detect import choose, stages_for
    from nonatomic.replay.ingest import ingest
    from nonatomic.replay.ingest.budget import default_memory_limit
    from nonatomic.replay.ingest.database import connect, unordered
    from nonatomic.replay.ingest.inputs import discover
    from nonatomic.replay.ingest.schema import EVENT_ORDER
    from nonatomic.replay.settings import DEFAULT_SETTINGS
    from nonatomic.rules.replay.views import SAME_TIME_IN_A_TASK, events_stage

    start, cpu = time.perf_counter(), cpu_seconds()
    files = discover([path])
    con = connect(memory_limit=default_memory_limit(files))  # the memory the command line gives DuckDB
    ingest(con, files)
    ingested = time.perf_counter()
    detectors = choose(None, None)
    stages = stages_for(detectors, lambda: events_stage(EVENT_ORDER, con.execute(SAME_TIME_IN_A_TASK).fetchone()[0]))
    rows = 0
    with unordered(con):
        for stage in stages:
            kind = "TABLE" if stage.materialized else "VIEW"
            con.execute(f"CREATE TEMP {kind} {stage.name} AS {stage.sql}")
        for d in detectors:
            rows += con.execute(f"SELECT count(*) FROM ({d.sql})",
                                {p: DEFAULT_SETTINGS[p] for p in d.parameters()}).fetchone()[0]
    done = time.perf_counter()
    return {"ingest_s": ingested - start, "total_s": done - start, "cpu_s": cpu_seconds() - cpu,
            "peak_mb": peak_mb(), "rows": rows}


def child(kind: str, *args: str) -> dict:
    # the arguments travel as one JSON text: argparse would read the command's options as ours
    out = subprocess.run([sys.executable, __file__, "--child", kind, json.dumps(args)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "nonatomic-bench"))
    parser.add_argument("--memory-limit", default="500MB")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        kind, args = options.child
        args = json.loads(args)
        print(json.dumps(measure_discarded(args[0]) if kind == "discarded" else measure_cli(args)))
        return

    os.makedirs(options.data, exist_ok=True)
    for size in options.sizes:
        paths = generate(options.data, size)
        times = floor(paths)
        floors = {fmt: times[read] + sum(times[name] for name in ORDERINGS)
                  for fmt, read in (("jsonl", "read the JSONL"), ("parquet", "read the Parquet"))}
        print(f"{size:,} synthetic events, {os.cpu_count()} CPUs, load average {load()} (other processes slow "
              f"the wall times): floor {floors['jsonl']:.2f} s from JSONL, {floors['parquet']:.2f} s from Parquet")
        row = "  {:<44} {:>8} {:>7} {:>8} {:>8}  {}"
        print(row.format("run", "total s", "floor", "CPU s", "peak MB", "notes"))

        def show(name: str, fmt: str, r: dict, notes: str = "") -> None:
            print(row.format(name, f"{r['total_s']:.2f}", f"{r['total_s'] / floors[fmt]:.1f}x", f"{r['cpu_s']:.2f}",
                             f"{r['peak_mb']:.0f}", notes))

        out = os.path.join(options.data, "report")
        task = f"task-{size // EVENTS_PER_TASK // 2}"
        for fmt in ("jsonl", "parquet"):
            discarded = child("discarded", paths[fmt])
            show(f"{fmt}: findings discarded (rows counted)", fmt, discarded,
                 f"{discarded['rows']:,} rows; ingest {discarded['ingest_s']:.2f} s")
            full = child("cli", "replay", "--fail-on", "never", "--format", "json", "--output", out + ".json",
                         paths[fmt])
            with open(out + ".json", encoding="utf-8") as fh:
                found = json.load(fh)["summary"]["findings"]
            show(f"{fmt}: replay --format json", fmt, full,
                 f"{found:,} findings, {full['total_s'] / discarded['total_s']:.2f}x the discarded run, "
                 f"{os.path.getsize(out + '.json') / 1e6:.0f} MB written")
            limited = child("cli", "replay", "--fail-on", "never", "--format", "json", "--memory-limit",
                            options.memory_limit, "--output", out + ".json", paths[fmt])
            show(f"{fmt}: replay --format json --memory-limit {options.memory_limit}", fmt, limited)
            if fmt == "jsonl":
                for human in ("text", "html"):
                    r = child("cli", "replay", "--fail-on", "never", "--format", human, "--output",
                              f"{out}.{human}", paths[fmt])
                    show(f"{fmt}: replay --format {human}", fmt, r,
                         f"{os.path.getsize(f'{out}.{human}') / 1e6:.2f} MB written")
            r = child("cli", "timeline", "--task", task, "--output", out + ".timeline", paths[fmt])
            show(f"{fmt}: timeline --task {task}", fmt, r,
                 f"ingest alone {discarded['ingest_s']:.2f} s: +{r['total_s'] - discarded['ingest_s']:.2f} s")


if __name__ == "__main__":
    main()
