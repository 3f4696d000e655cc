"""The SparkSession the engine runs in.

An existing session is used as it is (a notebook's, a Databricks job's, or one
configured by spark-submit / spark-defaults.conf).  Only when none is running
does the engine start one; without a configured master that is local mode.
The session time zone must be UTC: timestamps without an offset are UTC in
the event contract, and finding times are printed in UTC.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

LOCAL_DRIVER_MEMORY = "4g"
"""The driver's heap when the engine starts Spark and nothing else sized it (Spark's default is 1g)."""


class SparkUnavailable(Exception):
    """pyspark is not installed or Spark cannot start (no Java): exit code 2."""


def spark_session(master: str | None = None):
    """The active SparkSession, else a new one (`master` overrides the configured one)."""
    try:
        from pyspark import SparkContext
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise SparkUnavailable("--engine spark needs pyspark: pip install 'nonatomic[spark]'") from exc
    builder = SparkSession.builder.appName("nonatomic replay")
    if master is not None:
        builder = builder.master(master)
    if SparkContext._active_spark_context is None and not _driver_memory_set():
        # Starting Spark here: in local mode every task runs in the driver's JVM, and Spark's
        # 1g default spends an eighth of a run on 1M events collecting garbage.
        builder = builder.config("spark.driver.memory", LOCAL_DRIVER_MEMORY)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # py4j and Java report start-up failures with assorted types
        raise SparkUnavailable(f"cannot start Spark (is Java 17+ installed?): {exc}") from exc
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    # Adaptive execution sizes each shuffle to its data (the lock stages are small, the op
    # stages are not) and picks broadcast joins from real sizes.
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "true")
    if spark.conf.get("spark.master", "").startswith("local"):
        # 200 shuffle partitions suit a cluster; on one machine each is pure overhead.
        spark.conf.set("spark.sql.shuffle.partitions", str(2 * (os.cpu_count() or 1)))
    return spark


def _driver_memory_set() -> bool:
    """The user sized the driver: on the builder, in PYSPARK_SUBMIT_ARGS or in spark-defaults.conf."""
    from pyspark.sql import SparkSession

    if "spark.driver.memory" in getattr(SparkSession.builder, "_options", {}):
        return True
    if re.search(r"--driver-memory|spark\.driver\.memory", os.environ.get("PYSPARK_SUBMIT_ARGS", "")):
        return True
    home = os.environ.get("SPARK_HOME")
    for folder in filter(None, [os.environ.get("SPARK_CONF_DIR"), home and os.path.join(home, "conf")]):
        defaults = Path(folder, "spark-defaults.conf")
        if defaults.is_file() and re.search(r"^\s*spark\.driver\.memory\b", defaults.read_text(), re.M):
            return True
    return False


def checkpoint(frame):
    """`frame` computed once and kept, its plan cut off: to the session's checkpoint directory
    when one is set (`SparkContext.setCheckpointDir`, on a cluster a shared store, so a lost
    executor costs nothing), else on the executors' own memory and disk (faster, but a lost
    executor fails the run)."""
    if frame.sparkSession.sparkContext.getCheckpointDir():
        return frame.checkpoint()
    return frame.localCheckpoint()


@contextmanager
def partitioned_plans(spark):
    """Plans built inside keep the partitioning they end with when checkpointed: Spark forgets
    it for a plan run by adaptive execution (each reader of events partitioned by task would
    shuffle them again), so adaptive execution is off inside and back as it was after."""
    key = "spark.sql.adaptive.enabled"
    before = spark.conf.get(key)
    spark.conf.set(key, "false")
    try:
        yield
    finally:
        spark.conf.set(key, before)
