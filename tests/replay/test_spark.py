"""The Spark engine against the DuckDB engine: same findings, summary and quarantine on the same logs.

Spark runs in local mode, one session for the module.  Without pyspark or
Java the Spark tests skip (`make test` installs neither; `.ci/run` does).
The translation tests need only sqlglot.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
import shutil
from pathlib import Path

import pytest

from nonatomic.replay.api import open_logs
from nonatomic.replay.report import render_json
from nonatomic.replay.settings import DEFAULT_SETTINGS
from nonatomic.rules.replay import DETECTORS
from nonatomic.rules.replay.views import SAME_TIME_IN_A_TASK

pytest.importorskip("sqlglot", reason="the Spark translation needs sqlglot: pip install 'nonatomic[spark]'")

from nonatomic.replay.spark.translate import TranslationError, queries, translate  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.mark.parametrize("code", sorted(DETECTORS))
def test_detector_translates_to_spark(code):
    """Every detector, with the stages it reads, is written once (DuckDB) and translates to Spark."""
    named = dict(queries([DETECTORS[code]], DEFAULT_SETTINGS))
    assert code in named and "nr_events" in named
    assert not [p for p in DETECTORS[code].parameters() if f"${p}" in named[code] or f":{p}" in named[code]]


def test_parameters_become_escaped_literals():
    sql = translate("SELECT 1 FROM t WHERE regexp_matches(tool, $p)", {"p": "it's \\d"})
    assert "'it\\'s \\\\d'" in sql


def test_untranslatable_sql_fails():
    with pytest.raises(TranslationError):
        translate("SELECT epoch_ms(other) FROM t", {})


# --- engine parity (needs pyspark and Java) ---

@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'nonatomic[spark]'")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime: Spark needs Java 17 (apt-get install openjdk-17-jre-headless)")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("nonatomic-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate())
    yield session
    session.stop()


def _both(spark, paths: list[str], mapping=None, tasks=()) -> tuple[dict, dict]:
    """The JSON report of each engine on the same logs (restricted to `tasks` if given)."""
    from nonatomic.replay.spark.engine import SparkReplay
    from nonatomic.replay.spark.ingest import ingest

    def report(session) -> dict:
        if tasks:
            assert session.restrict(tasks) == []
        found = session.find(tasks=tasks or None)
        return json.loads("".join(render_json(session.summary(found), found.json_texts(),
                                              session.quarantine_texts())))

    with open_logs(paths, mapping) as duck:
        expected = report(duck)
    loaded = None
    if mapping is not None:
        from nonatomic.replay.ingest.mapping import load_mapping

        loaded = load_mapping(mapping)
    with SparkReplay(spark, ingest(spark, paths, loaded)) as on_spark:
        got = report(on_spark)
    return expected, got


def test_sample_logs_same_report(spark):
    expected, got = _both(spark, sorted(str(p) for p in SAMPLES.glob("*.jsonl")))
    assert expected["findings"], "the sample logs have findings"
    assert got == expected


def _shuffles(frame) -> bool:
    return "Exchange" in frame._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("one_task", [False, True])
def test_stages_read_the_events_partitioned_by_task_without_shuffling_them(spark, one_task):
    """Ingest (and --task) partition the events by task once; a window over each task reuses that
    partitioning, with adaptive execution on as the engine runs."""
    from nonatomic.replay.spark.engine import SparkReplay
    from nonatomic.replay.spark.ingest import ingest
    from nonatomic.replay.spark.session import spark_session

    spark_session()  # the engine's settings: adaptive execution on
    logs = sorted(str(p) for p in SAMPLES.glob("*.jsonl"))
    with SparkReplay(spark, ingest(spark, logs)) as session:
        if one_task:
            session.restrict([spark.table("events").first()["task_id"]])
        window = spark.sql("SELECT ROW_NUMBER() OVER (PARTITION BY task_id ORDER BY ts) FROM events")
        assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
        assert not _shuffles(window)


def test_one_task_and_its_locks_same_report(spark):
    logs = sorted(str(p) for p in SAMPLES.glob("*.jsonl"))
    with open_logs(logs) as duck:
        locked = [f["task_id"] for f in duck.detect(select=["NR2"])]
    assert locked, "the sample logs have lock findings"
    expected, got = _both(spark, logs, tasks=locked[:1])
    assert expected["findings"] and {f["task_id"] for f in expected["findings"]} == set(locked[:1])
    assert got == expected


def test_mapped_logs_same_report(spark):
    expected, got = _both(spark, [str(SAMPLES / "foreign")], str(SAMPLES / "foreign" / "mapping.yaml"))
    assert got == expected


BAD_LINES = [
    "{not json",
    '["an", "array"]',
    '"a string"',
    '{"ts": "2024-05-14T10:00:00Z", "op": "call"}',  # no task_id
    '{"ts": "yesterday", "task_id": "t-bad", "op": "call"}',
    '{"ts": "2024-05-14T10:00:00Z", "task_id": "t-bad", "op": "call", "attempt": 0}',
    '{"ts": "2024-05-14T10:00:00Z", "task_id": "t-bad", "op": "call", "step": "2.5"}',
    '{"ts": 1715680800, "task_id": "t-bad", "op": "call"} trailing',
    "",
]


def _generated(directory: Path, tasks: int, seed: int) -> list[str]:
    """Sample incidents copied under many task ids, lines shuffled, bad lines mixed in, over two files
    (the second without a final newline and ending in a cut-off line)."""
    rng = random.Random(seed)
    lines = []
    for path in sorted(SAMPLES.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            for copy in range(tasks):
                lines.append(json.dumps({**event, "task_id": f"{event['task_id']}-{copy}"}))
    lines += BAD_LINES * 3
    rng.shuffle(lines)
    half = len(lines) // 2
    first, second = directory / "a.jsonl", directory / "b.jsonl"
    first.write_text("\n".join(lines[:half]) + "\n")
    second.write_text("\n".join(lines[half:]) + '\n{"ts": "2024-05-14T10:0')
    return [str(first), str(second)]


def test_generated_logs_with_bad_lines_same_report(spark, tmp_path):
    expected, got = _both(spark, _generated(tmp_path, tasks=20, seed=7))
    summary = expected["summary"]
    assert summary["quarantined"] > 0 and summary["lines"] == summary["events"] + summary["quarantined"]
    assert got["summary"] == expected["summary"]
    assert got["quarantine"] == expected["quarantine"]
    assert got["findings"] == expected["findings"]


def test_files_read_in_many_blocks_keep_their_line_numbers(spark, tmp_path):
    # Spark splits a file into blocks read by different tasks; every line must still be cited
    # by its own number and every event keep the DuckDB engine's id.
    paths = _generated(tmp_path, tasks=5, seed=11)
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    try:
        assert spark.read.text(paths).rdd.getNumPartitions() > 4
        expected, got = _both(spark, paths)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert got["quarantine"] == expected["quarantine"]
    assert got["findings"] == expected["findings"]
    assert got["summary"] == expected["summary"]


def test_logs_without_shared_times_same_report(spark, tmp_path):
    # No two events of a task share a time: both engines take the time as the position
    # instead of numbering the events; the sample logs (which share times) take the other path.
    paths = []
    for path in sorted(SAMPLES.glob("*.jsonl")):
        lines = []
        for offset, line in enumerate(path.read_text().splitlines()):
            event = json.loads(line)
            ts = datetime.fromisoformat(event["ts"].replace("Z", "+00:00")) + timedelta(microseconds=offset)
            lines.append(json.dumps({**event, "ts": ts.isoformat().replace("+00:00", "Z")}))
        paths.append(tmp_path / path.name)
        paths[-1].write_text("\n".join(lines) + "\n")
    paths = [str(p) for p in paths]
    with open_logs(paths) as duck:
        assert not duck.con.execute(SAME_TIME_IN_A_TASK).fetchone()[0]
    from nonatomic.replay.spark.ingest import ingest

    ingest(spark, paths)
    assert spark.sql(translate(SAME_TIME_IN_A_TASK, {})).first()[0] is False
    expected, got = _both(spark, paths)
    assert expected["findings"], "the shifted sample logs keep their findings"
    assert got == expected


def test_parquet_same_report(spark, tmp_path):
    import duckdb

    path = tmp_path / "events.parquet"
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("COPY (SELECT * FROM read_json($src, format='newline_delimited')) TO $dst (FORMAT parquet)",
                {"src": str(SAMPLES / "retry_rollback_race.jsonl"), "dst": str(path)})
    expected, got = _both(spark, [str(path)])
    assert got == expected


def test_guard_log_with_span_ids_same_report(spark, tmp_path):
    """A guard log whose lines name their trace and span: the evidence cites them on both engines
    (a span id without a trace id, and lines without either, included)."""
    lines = (SAMPLES / "retry_rollback_race.jsonl").read_text().splitlines()
    named = []
    for n, line in enumerate(lines):
        event = json.loads(line)
        if n % 3 == 0:
            event.update(trace_id=f"{n:032x}", span_id=f"{n:016x}")
        elif n % 3 == 1:
            event["span_id"] = f"s-{n}"
        named.append(json.dumps(event))
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(named) + "\n")
    expected, got = _both(spark, [str(path)])
    cited = [e for f in expected["findings"] for e in f["events"] if "span_id" in e]
    assert cited and any(e["trace_id"] is None for e in cited) and any(e["trace_id"] for e in cited)
    assert any("span " in line for f in expected["findings"] for line in f["because"])
    assert got == expected


def test_with_a_checkpoint_directory_the_stages_are_kept_there_with_the_same_report(spark, tmp_path):
    """A cluster sets a checkpoint directory on shared storage: the ingested rows and the stages are
    then written there (a lost executor loses nothing), and the report is the same.  Last in the
    module: a session's checkpoint directory cannot be unset."""
    spark.sparkContext.setCheckpointDir(str(tmp_path / "checkpoints"))
    expected, got = _both(spark, sorted(str(p) for p in SAMPLES.glob("*.jsonl")))
    assert any((tmp_path / "checkpoints").rglob("part-*")), "the checkpoints are in the directory"
    assert got == expected
