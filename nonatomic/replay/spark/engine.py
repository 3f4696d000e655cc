"""Run the replay detectors on Spark: the same stages, detectors and findings as on DuckDB.

Each stage is the catalogue's SQL translated to Spark SQL (translate.py),
registered as a temporary view under its name, so the detectors read it as
they read DuckDB's temporary tables; a stage read by more than one query is
computed once and checkpointed (session.checkpoint: its plan cut off), one
read once is not, nor a stage that is a view by design (the events with the
time as position: a projection each reader folds into its own scan).  Not persisted: Spark does not put a cached
plan in place of a view read inside a CTE, as every detector reads them, so
each detector computed the stages under it again (eight times the detectors'
time on 1M events).  The events are partitioned by task once (ingest.py),
and every stage's window partitions by the task first, so they reuse that
partitioning instead of shuffling again.  Detector rows come back
to the driver with the evidence of their witness events and are shaped by
detect.shape_grouped, into a findings table the reports read as DuckDB's.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime

from pyspark.sql import functions as F

from nonatomic.replay.api import keep
from nonatomic.replay.detect import choose, shape_grouped, witness_ids
from nonatomic.replay.findings import Findings
from nonatomic.replay.ingest import IngestResult
from nonatomic.replay.ingest.fields import CITED
from nonatomic.replay.notices import STEPS_SQL, steps_notice
from nonatomic.replay.settings import DEFAULT_SETTINGS, validate_settings
from nonatomic.replay.spark.ingest import CITED_VIEW
from nonatomic.replay.spark.session import checkpoint, partitioned_plans
from nonatomic.replay.spark.translate import stages as stages_of
from nonatomic.replay.spark.translate import translate
from nonatomic.rules.replay.views import EVENT_ROWS, LOCK_OP_NAMES, SAME_TIME_IN_A_TASK

_CONCURRENT_QUERIES = 4
_TS_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
"""DuckDB's '%Y-%m-%dT%H:%M:%S.%gZ' (the session time zone is UTC)."""


class SparkReplay:
    """Logs registered as Spark views (see spark.ingest), with the CLI's session interface."""

    con = None
    """No DuckDB connection: reports that draw timelines (html) are the DuckDB engine's."""

    def __init__(self, spark, ingested: IngestResult, settings: dict | None = None) -> None:
        self.spark = spark
        self.ingested = ingested
        self.settings = settings
        # counted before a --task restriction replaces the views: the summary counts what was read
        self.ingested_counts = spark.sql(
            "SELECT count(*) AS events, count(DISTINCT task_id) AS tasks FROM events").first()

    def restrict(self, tasks: Iterable[str]) -> list[str]:
        """Detectors see only these tasks' events and the lock events of the locks they touched
        (as Replay.restrict); the tasks that have no events."""
        wanted = sorted(set(tasks))
        missing = self.missing_tasks(wanted)  # before the views are replaced
        stored = self.spark.table(EVENT_ROWS)
        mine = stored.where(F.col("task_id").isin(wanted))
        locks = mine.where(F.col("op").isin(*LOCK_OP_NAMES)).select("target").distinct()
        theirs = stored.where(F.col("op").isin(*LOCK_OP_NAMES) & ~F.col("task_id").isin(wanted)).join(
            F.broadcast(locks), "target", "left_semi")
        # Checkpointed: every detector reads these views, and a lazy union of filters and a
        # semi-join under each of them grows the plans past what the driver can analyse.
        with partitioned_plans(self.spark):
            kept = checkpoint(mine.unionByName(theirs).repartition("task_id"))
        for view in ("events", EVENT_ROWS):
            kept.createOrReplaceTempView(view)
        return missing

    def find(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
             tasks: Iterable[str] | None = None, since: datetime | None = None,
             until: datetime | None = None) -> Findings:
        shaped = detected(self.spark, select, ignore, self.settings)
        kept = {id(f) for f in keep([f for f, _ in shaped], tasks, since, until)}
        return Findings.of([pair for pair in shaped if id(pair[0]) in kept])

    def detect(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
               tasks: Iterable[str] | None = None, since: datetime | None = None,
               until: datetime | None = None) -> list[dict]:
        return keep(run_detectors(self.spark, select, ignore, self.settings), tasks, since, until)

    def summary(self, findings: list[dict] | Findings) -> dict:
        counts = self.ingested_counts
        found = findings.count() if isinstance(findings, Findings) else len(findings)
        return {"files": len(self.ingested.files), "lines": self.ingested.lines, "events": counts["events"],
                "quarantined": self.ingested.quarantined, "tasks": counts["tasks"], "findings": found}

    def quarantine_rows(self, limit: int | None = None) -> list[dict]:
        table = self.spark.table("quarantine").orderBy("file", "line")
        return [row.asDict() for row in (table.collect() if limit is None else table.limit(limit).collect())]

    def quarantine_texts(self) -> Iterator[str]:
        for row in self.spark.table("quarantine").orderBy("file", "line").toLocalIterator():
            yield json.dumps(row.asDict(), ensure_ascii=False)

    def warnings(self) -> list[dict]:
        """Spark reads guard logs only, so of notices.py's checks the one of calls without steps applies."""
        counts = self.spark.sql(STEPS_SQL.format(events="events")).first()
        return steps_notice(counts[0], counts[1])

    def missing_tasks(self, tasks: Iterable[str]) -> list[str]:
        """Those of `tasks` that no event belongs to, sorted."""
        wanted = sorted(set(tasks))
        if not wanted:
            return []
        found = self.spark.table("events").where(F.col("task_id").isin(wanted)).select("task_id").distinct().collect()
        return sorted(set(wanted) - {row["task_id"] for row in found})

    def __enter__(self) -> SparkReplay:
        return self

    def __exit__(self, *exc) -> None:
        for view in ("events", "quarantine"):
            self.spark.catalog.dropTempView(view)


def run_detectors(spark, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
                  settings: Mapping[str, object] | None = None) -> list[dict]:
    """Findings of the chosen detectors over the `events` view, as detect.run_detectors gives them."""
    return [finding for finding, _ in detected(spark, select, ignore, settings)]


def detected(spark, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
             settings: Mapping[str, object] | None = None) -> list[tuple[dict, tuple]]:
    """Findings with what the reports group them by (detect.shape_grouped)."""
    detectors = choose(select, ignore)
    params = {**DEFAULT_SETTINGS, **validate_settings(settings or {})}
    stages = stages_of(detectors, lambda: spark.sql(translate(SAME_TIME_IN_A_TASK, {})).first()[0])
    queries = [translate(d.sql, {p: params[p] for p in d.parameters()}) for d in detectors]
    def build(stage) -> None:
        frame = spark.sql(translate(stage.sql, {}))
        if stage.materialized and sum(_reads(sql, stage.name) for sql in [*queries, *(s.sql for s in stages)]) > 1:
            frame = checkpoint(frame)
        frame.createOrReplaceTempView(stage.name)

    # Submitted together: Spark runs the jobs of several threads side by side, so one query's
    # planning and its last, narrow tasks overlap the others' work.  Stages go in waves, each
    # of those whose stages underneath are built.
    try:
        with ThreadPoolExecutor(max_workers=_CONCURRENT_QUERIES) as pool:
            built: set[str] = set()
            while len(built) < len(stages):
                wave = [s for s in stages if s.name not in built and all(
                    t.name in built for t in stages if t is not s and _reads(s.sql, t.name))]
                list(pool.map(build, wave))
                built |= {s.name for s in wave}
            rows = list(pool.map(lambda sql: spark.sql(sql).collect(), queries))
        raw = [(detector, row.asDict()) for detector, found in zip(detectors, rows) for row in found]
    finally:
        for stage in stages:
            spark.catalog.dropTempView(stage.name)
    return shape_grouped(raw, _evidence(spark, {i for _, row in raw for i in witness_ids(row)}))


def _reads(sql: str, name: str) -> bool:
    return re.search(rf"\b{name}\b", sql) is not None


def _evidence(spark, ids: set[int]) -> dict[int, dict]:
    if not ids:
        return {}
    wanted = spark.createDataFrame([(i,) for i in sorted(ids)], "event_id long")
    rows = (spark.table("events").join(F.broadcast(wanted), "event_id")
            .join(spark.table(CITED_VIEW), "event_id", "left")
            .select("event_id", "file", "line", F.date_format("ts", _TS_FORMAT).alias("ts"), *CITED).collect())
    # as the DuckDB engine's evidence: the trace and span ids only of an event with a span id
    return {r["event_id"]: {k: v for k, v in r.asDict().items() if k not in CITED or r[CITED[-1]] is not None}
            for r in rows}
