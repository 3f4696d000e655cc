"""Run the replay detectors on Spark: the same stages, detectors and findings as on DuckDB.

Each stage is the catalogue's SQL translated to Spark SQL (translate.py),
persisted once and registered as a temporary view under its name, so the
detectors read it as they read DuckDB's temporary tables.  Detector rows come
back to the driver (findings are few), with the evidence of their witness
events, and are shaped by the DuckDB runner's own code (detect.shape_findings).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from pyspark import StorageLevel
from pyspark.sql import functions as F

from nonatomic.replay.api import keep
from nonatomic.replay.detect import choose, shape_findings, witness_ids
from nonatomic.replay.ingest import IngestResult
from nonatomic.replay.notices import STEPS_SQL, steps_notice
from nonatomic.replay.settings import DEFAULT_SETTINGS, validate_settings
from nonatomic.replay.spark.translate import stages as stages_of
from nonatomic.replay.spark.translate import translate

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

    def detect(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
               tasks: Iterable[str] | None = None, since: datetime | None = None,
               until: datetime | None = None) -> list[dict]:
        return keep(run_detectors(self.spark, select, ignore, self.settings), tasks, since, until)

    def summary(self, findings: list[dict]) -> dict:
        counts = self.spark.sql("SELECT count(*) AS events, count(DISTINCT task_id) AS tasks FROM events").first()
        return {"files": len(self.ingested.files), "lines": self.ingested.lines, "events": counts["events"],
                "quarantined": self.ingested.quarantined, "tasks": counts["tasks"], "findings": len(findings)}

    def quarantine_rows(self) -> list[dict]:
        rows = self.spark.table("quarantine").orderBy("file", "line").collect()
        return [row.asDict() for row in rows]

    def warnings(self) -> list[dict]:
        """Spark reads guard logs only, so of notices.py's checks the one of calls without steps applies."""
        counts = self.spark.sql(STEPS_SQL.format(events="events")).first()
        return steps_notice(counts[0], counts[1])

    def missing_tasks(self, tasks: Iterable[str]) -> list[str]:
        """Those of `tasks` that no event belongs to, sorted (the CLI's check of --task)."""
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
    detectors = choose(select, ignore)
    params = {**DEFAULT_SETTINGS, **validate_settings(settings or {})}
    persisted = []
    try:
        for stage in stages_of(detectors):
            frame = spark.sql(translate(stage.sql, {})).persist(StorageLevel.MEMORY_AND_DISK)
            frame.createOrReplaceTempView(stage.name)
            persisted.append((stage.name, frame))
        raw = []
        for detector in detectors:
            rows = spark.sql(translate(detector.sql, {p: params[p] for p in detector.parameters()})).collect()
            raw.extend((detector, row.asDict()) for row in rows)
    finally:
        for name, frame in persisted:
            spark.catalog.dropTempView(name)
            frame.unpersist()
    return shape_findings(raw, _evidence(spark, {i for _, row in raw for i in witness_ids(row)}))


def _evidence(spark, ids: set[int]) -> dict[int, dict]:
    if not ids:
        return {}
    wanted = spark.createDataFrame([(i,) for i in sorted(ids)], "event_id long")
    rows = (spark.table("events").join(F.broadcast(wanted), "event_id")
            .select("event_id", "file", "line", F.date_format("ts", _TS_FORMAT).alias("ts")).collect())
    return {r["event_id"]: r.asDict() for r in rows}
