"""Ingest plus every replay detector on 1M and 10M synthetic events, JSONL and Parquet.

Each measurement runs in a fresh process so its peak memory (max RSS) is its
own.  The baseline is a straightforward pandas implementation of two
detectors (NR304 retry-storm, NR401 zombie-write) that reads the same 1M-event
JSONL log, compared with nonatomic running those two detectors on that log:
end to end, and detection alone.

    python benchmarks/bench_detect.py [--sizes 1000000 10000000] [--data DIR]

Goals (2-core machine): 10M events in <= 15 s from JSONL and <= 5 s from
Parquet; at 1M, >= 10x faster than pandas with peak memory < 500 MB; 10M
under --memory-limit 1GB completes by spilling.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

from process_stats import cpu_seconds, load, peak_mb

EVENTS_PER_TASK = 10

# One task of the synthetic gateway: (offset ms, op, step, attempt, phase, status, code, tool).
# Every few hundred tasks an incident is injected (see INCIDENTS) so detectors have work.
TEMPLATE = """
SELECT * FROM (VALUES
    (1, 0,    'task_start',   NULL, NULL, NULL,    NULL,        NULL, 'agent'),
    (2, 10,   'lock_acquire', 0,    NULL, NULL,    'ok',        NULL, NULL),
    (3, 20,   'call',         1,    1,    'start', NULL,        NULL, 'create_order'),
    (4, 120,  'call',         1,    1,    'end',   'ok',        201,  'create_order'),
    (5, 200,  'call',         2,    1,    NULL,    'error',     503,  'charge_card'),
    (6, 700,  'call',         2,    2,    NULL,    'ok',        200,  'charge_card'),
    (7, 800,  'verify',       2,    NULL, NULL,    'ok',        200,  'get_charge'),
    (8, 900,  'call',         3,    1,    NULL,    'ok',        202,  'send_email'),
    (9, 950,  'lock_release', 0,    NULL, NULL,    'ok',        NULL, NULL),
    (10, 1000, 'task_end',    NULL, NULL, NULL,    'completed', NULL, NULL)
) AS t(k, offset_ms, op, step, attempt, phase, status, code, tool)
"""

INCIDENTS = """
SELECT
    ts, 'task-' || i AS task_id, step, attempt, phase, code, tool,
    -- a lock never released (NR201), a rollback before the retry (NR101)
    CASE WHEN k = 9 AND i % 101 = 0 THEN 'note'
         WHEN k = 7 AND i % 103 = 0 THEN 'rollback' ELSE op END AS op,
    -- a timeout retried without verify (NR303)
    CASE WHEN k = 5 AND i % 109 = 0 THEN 'timeout' ELSE status END AS status,
    CASE WHEN op = 'call' THEN 'order:' || i WHEN op LIKE 'lock%' THEN 'lock:order:' || i END AS target,
    CASE WHEN k = 6 THEN 'key-' || i END AS idempotency_key,
    CASE WHEN op LIKE 'lock%' THEN 'worker-' || i END AS owner,
    CASE WHEN op = 'lock_acquire' THEN 30000 END AS ttl_ms
FROM (
    SELECT i, k, op, step, attempt, phase, status, code, tool,
           TIMESTAMPTZ '2024-05-01 00:00:00+00' + to_milliseconds(i * 37 + CASE
               WHEN k = 7 AND i % 103 = 0 THEN 650      -- rollback starts before attempt 2
               WHEN k = 10 AND i % 107 = 0 THEN 500     -- ends early: later writes are zombies (NR401)
               WHEN k = 6 AND i % 113 = 0 THEN 230      -- retried after 30 ms (NR304)
               ELSE offset_ms END) AS ts
    FROM range({tasks}) r(i), ({template}) t
)
"""


def generate(directory: str, events: int) -> dict[str, str]:
    """JSONL and Parquet files of `events` synthetic events (made once, then reused)."""
    import duckdb

    paths = {fmt: os.path.join(directory, f"events-{events}.{fmt}") for fmt in ("jsonl", "parquet")}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    query = INCIDENTS.format(tasks=events // EVENTS_PER_TASK, template=TEMPLATE)
    con.execute(f"CREATE TABLE synthetic AS {query} ORDER BY ts")
    con.execute(
        "COPY (SELECT * REPLACE (strftime(ts, '%Y-%m-%dT%H:%M:%S.%gZ') AS ts) FROM synthetic)"
        f" TO '{paths['jsonl']}' (FORMAT json)"
    )
    con.execute(f"COPY synthetic TO '{paths['parquet']}' (FORMAT parquet)")
    return paths


def measure_nonatomic(path: str, memory_limit: str | None, select: list[str] | None) -> dict:
    """Run in a child process: ingest `path`, run the detectors, report times and peak memory."""
    from nonatomic.replay.detect import run_detectors
    from nonatomic.replay.ingest import ingest
    from nonatomic.replay.ingest.database import connect
    from nonatomic.replay.ingest.inputs import discover

    start, cpu_start = time.perf_counter(), cpu_seconds()
    con = connect(memory_limit=memory_limit)
    result = ingest(con, discover([path]))
    ingested = time.perf_counter()
    findings = run_detectors(con, select=select)
    done = time.perf_counter()
    return {
        "events": result.events,
        "ingest_s": ingested - start,
        "detect_s": done - ingested,
        "total_s": done - start,
        "cpu_s": cpu_seconds() - cpu_start,
        "findings": len(findings),
        "peak_mb": peak_mb(),
        "digest": digest(findings),
    }


def digest(findings: list[dict]) -> str:
    """One hash of every finding, field for field: two engines agree when their digests do."""
    return hashlib.sha256(json.dumps(findings, sort_keys=True).encode()).hexdigest()


def measure_pandas(path: str) -> dict:
    """NR304 and NR401 the way one writes them in pandas, reading the same JSONL log."""
    import pandas as pd

    start = time.perf_counter()
    events = pd.read_json(path, lines=True, dtype=False)
    events["ts"] = pd.to_datetime(events["ts"], utc=True, format="ISO8601")
    read = time.perf_counter()
    events = events.sort_values(["task_id", "ts"], kind="stable").reset_index(drop=True)
    events["pos"] = events.groupby("task_id").cumcount()
    calls = events[events["op"] == "call"].copy()
    # pair phase=start/end into one row per attempt
    key = ["task_id", "step", "attempt"]
    starts = calls[calls["phase"] != "end"]
    ends = calls[calls["phase"] == "end"][[*key, "ts"]].rename(columns={"ts": "end_ts"})
    attempts = starts.merge(ends, on=key, how="left")
    attempts["end_ts"] = attempts["end_ts"].fillna(attempts["ts"])
    attempts = attempts.sort_values(["task_id", "step", "tool", "target", "pos"])
    previous_end = attempts.groupby(["task_id", "step", "tool", "target"], dropna=False)["end_ts"].shift()
    wait = attempts["ts"] - previous_end
    hasty = attempts[(wait >= pd.Timedelta(0)) & (wait < pd.Timedelta(milliseconds=100))]
    storms = hasty.groupby(["task_id", "step"]).size()
    # NR401: writes (calls and rollbacks) after the task's first task_end
    ends_at = events[events["op"] == "task_end"].groupby("task_id")["pos"].min().rename("end_pos")
    writes = events[events["op"].isin(["call", "rollback"]) & (events["phase"] != "end")]
    writes = writes.join(ends_at, on="task_id", how="inner")
    zombies = writes[writes["pos"] > writes["end_pos"]].groupby(["task_id", "step"]).size()
    done = time.perf_counter()
    return {"read_s": read - start, "detect_s": done - read, "total_s": done - start,
            "findings": len(storms) + len(zombies), "peak_mb": peak_mb()}


def child(kind: str, *args: str) -> dict:
    """Run one measurement in a fresh interpreter and return what it printed."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, *args], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "nonatomic-bench"))
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        kind, path, *rest = options.child
        if kind == "pandas":
            result = measure_pandas(path)
        else:
            memory_limit = rest[0] if rest and rest[0] != "-" else None
            select = rest[1].split(",") if len(rest) > 1 else None
            result = measure_nonatomic(path, memory_limit, select)
        print(json.dumps(result))
        return

    from bench_floor import ORDERINGS, floor  # bench_floor reads this module's generator

    os.makedirs(options.data, exist_ok=True)
    print(f"{os.cpu_count()} CPUs; load average {load()} (other processes slow the wall times; CPU s is"
          " the measured process's own CPU time over all its threads; x floor: the total as a multiple of"
          " bench_floor.py's floor for the same file, measured in this run)")
    row = "{:>11} {:<8} {:<14} {:>9} {:>9} {:>9} {:>8} {:>9} {:>9} {:>9} {:>6}"
    print(row.format("events", "format", "memory limit", "ingest s", "detect s", "total s", "x floor", "CPU s",
                     "peak MB", "findings", "load"))
    for size in options.sizes:
        paths = generate(options.data, size)
        times = floor(paths)
        floors = {fmt: times[read] + sum(times[name] for name in ORDERINGS)
                  for fmt, read in (("jsonl", "read the JSONL"), ("parquet", "read the Parquet"))}
        runs = [(fmt, "-") for fmt in ("jsonl", "parquet")]
        if size >= 10_000_000:
            runs.append(("jsonl", "1GB"))
        for fmt, limit in runs:
            r = child("nonatomic", paths[fmt], limit)
            print(row.format(f"{r['events']:,}", fmt, limit if limit != "-" else "none",
                             f"{r['ingest_s']:.2f}", f"{r['detect_s']:.2f}", f"{r['total_s']:.2f}",
                             f"{r['total_s'] / floors[fmt]:.1f}x", f"{r['cpu_s']:.2f}", f"{r['peak_mb']:.0f}",
                             r["findings"], load()))
        print(f"{'':>11} floor {floors['jsonl']:.2f} s from JSONL, {floors['parquet']:.2f} s from Parquet")
        if size == 1_000_000:
            baseline(paths["jsonl"])


def baseline(jsonl: str) -> None:
    """pandas and nonatomic each read the JSONL log and run NR304 and NR401."""
    pandas = child("pandas", jsonl)
    ours = child("nonatomic", jsonl, "-", "NR304,NR401")
    print(f"baseline at 1M, NR304+NR401 from JSONL (load {load()}):")
    for name, r, read in (("pandas", pandas, "read_s"), ("nonatomic", ours, "ingest_s")):
        print(f"  {name:<9} read {r[read]:5.2f} s + detect {r['detect_s']:5.2f} s = {r['total_s']:5.2f} s,"
              f" peak {r['peak_mb']:5.0f} MB, {r['findings']} findings")
    print(f"  nonatomic is {pandas['total_s'] / ours['total_s']:.1f}x faster end to end"
          f" ({pandas['detect_s'] / ours['detect_s']:.1f}x on detection alone)")

if __name__ == "__main__":
    main()
