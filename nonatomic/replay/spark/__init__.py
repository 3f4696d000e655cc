"""The Spark engine of `nonatomic replay` (`--engine spark`, extra `nonatomic[spark]`).

A sibling of the DuckDB engine for logs that outgrow one machine: ingest.py
registers the `events` and `quarantine` views, translate.py turns the
catalogue's DuckDB SQL into Spark SQL, engine.py runs it and shapes the
findings with the DuckDB engine's own code.  pyspark is imported here only.
"""

from __future__ import annotations


def open_logs(arguments: list[str], mapping=None, *, input_format: str = "auto", max_line_bytes: int = 1 << 20,
              settings: dict | None = None, master: str | None = None):
    """Ingest the logs into the active (or a new) SparkSession; a `SparkReplay`."""
    from nonatomic.replay.ingest.mapping import MappingError
    from nonatomic.replay.spark.session import spark_session

    if mapping is not None and not mapping.plain():
        raise MappingError("--engine spark reads renamed top-level fields only: constants, values derived "
                           "from a field's presence and nested paths need the DuckDB engine")
    spark = spark_session(master)
    # Imported after spark_session, which reports a missing pyspark as SparkUnavailable.
    from nonatomic.replay.spark.engine import SparkReplay
    from nonatomic.replay.spark.ingest import ingest

    return SparkReplay(spark, ingest(spark, arguments, mapping, input_format, max_line_bytes), settings)
