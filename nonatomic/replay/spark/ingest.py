"""Ingest guard logs into Spark: the `events` and `quarantine` views, accounting for every line.

JSONL is read as text (`spark.read.text`), one row per line, so a bad line is
a row like any other and gets its reason instead of vanishing.  Spark splits
large files into blocks read by different tasks, and no row knows its line
number; each row knows its file and block (`_metadata`) and gets a
`monotonically_increasing_id`, which grows by one from row to row within a
task's partition.  A block is read by one task, in order, so a line's number
in its file is its id minus the first id of its block, plus the lines of the
file's earlier blocks.  The rows are parsed and stored (checkpointed) with
their file, block and id; one aggregate over the stored rows then gives both
the per-block counts that number the lines and the per-file counts, so the
text is read once.  Parquet rows carry their row index (`_metadata.row_index`)
and each file is numbered as one block.

A line is an event's when, wrapped in brackets, it parses as an array of one
object: parsing the line alone accepts trailing text after an object.
Event ids are `base + line` as in the DuckDB engine (each file's base is the
largest event id before it), so findings cite the same event ids.  Each
file's `lines` is counted on its own, so `lines = events + quarantined` is a
check, as in the DuckDB engine.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from nonatomic.replay.ingest import IngestResult, ledger
from nonatomic.replay.ingest.fields import CITED, FIELDS
from nonatomic.replay.ingest.inputs import InputError, discover
from nonatomic.replay.ingest.mapping import FieldMapping
from nonatomic.replay.ingest.records import RAW_KEPT, missing_reason
from nonatomic.replay.spark.convert import problem, reason, typed
from nonatomic.replay.spark.session import checkpoint, partitioned_plans
from nonatomic.rules.replay.views import EVENT_ROWS

FORMATS = ("jsonl", "parquet")
CITED_VIEW = "nr_cited"
"""The events' extra fields the evidence cites (fields.CITED), by event id: DuckDB keeps them in `extra`."""
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")
_JSON_OPTIONS = {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false"}
"""Spark's JSON parser accepts both by default; the JSON standard (and DuckDB) does not."""


@dataclass(frozen=True)
class _File:
    name: str
    """What findings cite: the path as named (as in the DuckDB engine), or the URI Spark listed."""
    format: str
    location: str
    """What Spark reads."""
    complete: bool = True
    """Whether the last line ends with a newline (checked for local files only)."""


def ingest(spark, arguments: list[str], mapping: FieldMapping | None = None, input_format: str = "auto",
           max_line_bytes: int = 1 << 20) -> IngestResult:
    """Read the logs and register the `events` and `quarantine` temporary views."""
    mapping = mapping or FieldMapping()
    files = _files(spark, arguments, input_format)
    parts = []
    for fmt, read in (("jsonl", _jsonl_records), ("parquet", _parquet_records)):
        chosen = [f for f in files if f.format == fmt]
        if chosen:
            parts.append(read(spark, chosen, mapping, max_line_bytes))
    records = parts[0]
    for part in parts[1:]:
        records = records.unionByName(part)
    # Checkpointed, not persisted: Spark's columnar cache cost more to build than the parsing it
    # saves (20 s against 8 s on 1M lines), and the rows are read three times (counts, events, quarantine).
    records = checkpoint(records.withColumn("good", ~F.col("blank") & F.col("reason").isNull()))
    # One pass over the stored rows numbers the lines and counts them.
    blocks = records.groupBy("uri", "block").agg(
        F.min("id").alias("first"), F.count(F.lit(1)).alias("rows"),
        F.count(F.when(~F.col("blank"), 1)).alias("lines"), F.count(F.when(F.col("good"), 1)).alias("events"),
        F.count(F.when(F.col("reason").isNotNull(), 1)).alias("quarantined"),
        F.max(F.when(F.col("good"), F.col("id"))).alias("last_good")).collect()
    result, located = IngestResult(), _located(spark, files, blocks)
    for f in files:
        result.files.append(f.name)
    for row in blocks:
        result.lines += row["lines"]
        result.events += row["events"]
        result.quarantined += row["quarantined"]
    numbered = records.join(F.broadcast(located), ["uri", "block"]).withColumn("line", F.col("id") + F.col("shift"))
    # Partitioned by task once: every stage's window partitions by the task first and reuses this
    # partitioning instead of shuffling again; checkpointed, as the stages, the evidence and the
    # summary each read it.
    good = numbered.where("good").withColumn("event_id", F.col("base") + F.col("line"))
    with partitioned_plans(spark):
        events = checkpoint(good.select("event_id", "file", "line", *FIELDS).repartition("task_id"))
    # read only for the witnesses of findings, so neither persisted nor carried through the stages
    good.where(F.col(CITED[-1]).isNotNull()).select("event_id", *CITED).createOrReplaceTempView(CITED_VIEW)
    # The stages read the stored rows, which in Spark are the events themselves.
    for view in ("events", EVENT_ROWS):
        events.createOrReplaceTempView(view)
    # A line without a newline at the end of a file was cut short while being written.
    truncated = (F.col("line") == F.col("truncated_line")) & (F.col("reason") == "invalid JSON")
    numbered.where(F.col("reason").isNotNull()).select(
        "file", "line", F.when(truncated, F.lit("truncated last line: invalid JSON")).otherwise(F.col("reason"))
        .alias("reason"), "raw").createOrReplaceTempView("quarantine")
    return result


def _located(spark, files: list[_File], blocks: list) -> DataFrame:
    """Per (file, block) Spark read: the cited file name, what to add to a row's id to get its
    line number (`shift`), the file's event id base (the largest event id of the files before
    it, as in the DuckDB engine), and the file's last line where that line has no newline."""
    incomplete = {_key(f.location) for f in files if not f.complete}
    shifts, before, last, last_event = [], {}, {}, {}
    for row in sorted(blocks, key=lambda r: (r["uri"], r["block"])):
        uri, done = row["uri"], before.get(row["uri"], 0)
        shift = done + 1 - row["first"]
        shifts.append([uri, row["block"], _name(files, uri), shift])
        before[uri] = last[uri] = done + row["rows"]
        if row["last_good"] is not None:
            last_event[_name(files, uri)] = row["last_good"] + shift
    bases, base = {}, 0
    for f in files:
        bases[f.name] = base
        base += last_event.get(f.name, 0)
    for shift in shifts:
        shift += [bases[shift[2]], last[shift[0]] if _key(shift[0]) in incomplete else None]
    return spark.createDataFrame(
        shifts, "uri string, block long, file string, shift long, base long, truncated_line long")


def _files(spark, arguments: list[str], input_format: str) -> list[_File]:
    """The files in argument order (each once): local ones as `discover` finds them, URIs as Spark lists them."""
    found: dict[str, _File] = {}
    for argument in arguments:
        if _URI.match(argument) and not argument.startswith("file:"):
            fmt = input_format if input_format != "auto" else (
                "parquet" if argument.lower().endswith((".parquet", ".pq")) else "jsonl")
            reader = spark.read.parquet if fmt == "parquet" else spark.read.text
            listed = [_File(uri, fmt, uri) for uri in sorted(reader(argument).inputFiles())]
        else:
            logs = discover([argument], input_format)
            listed = [_File(log.path, log.format, os.path.abspath(log.path), ledger.ends_with_newline(log))
                      for log in logs]
        for f in listed:
            if f.format not in FORMATS:
                raise InputError(f"{f.name}: --engine spark reads JSONL and Parquet, not {f.format}")
            found.setdefault(_key(f.location), f)
    return list(found.values())


def _key(location: str) -> str:
    """One spelling per file: Spark writes `file:/a/b`, we name `a/b`."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return os.path.realpath(unquote(parsed.path) if parsed.scheme else location)
    return location


def _name(files: list[_File], uri: str) -> str:
    """The name findings cite for the file Spark calls `uri`."""
    named = {_key(f.location): f.name for f in files}
    return named.get(_key(uri), uri)


def _jsonl_records(spark, files: list[_File], mapping: FieldMapping, max_line_bytes: int) -> DataFrame:
    lines = spark.read.text([f.location for f in files]).select(
        F.col("value").alias("text"), F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("block"), F.monotonically_increasing_id().alias("id"))
    cited = [name for name in CITED if name not in mapping.consumed()]
    names = list(dict.fromkeys([*(name for f in FIELDS for name in mapping.sources(f)), *cited]))
    schema = T.StructType([T.StructField(name, T.StringType()) for name in names])
    text = F.col("text")
    wrapped = F.concat(F.lit("["), text, F.lit("]"))
    # One parse reads a good line: as an array of one object, which is NULL when anything but one
    # object is there, text after it included (`null` parses as an array of one NULL).
    objects = F.from_json(wrapped, T.ArrayType(schema), _JSON_OPTIONS)
    parsed = F.get(objects, F.lit(0))  # NULL, not an error, for a line that is no object
    an_object = F.coalesce((F.size(objects) == 1) & parsed.isNotNull(), F.lit(False))
    # Only a line that is not one object is parsed again, for its reason: from_json holds the JSON
    # standard (_JSON_OPTIONS) but returns what it parsed before an error; json_array_length
    # parses to the end, so text after the value makes it NULL.
    valid = F.coalesce((F.size(F.from_json(wrapped, T.ArrayType(T.StringType()), _JSON_OPTIONS)) == 1)
                       & (F.json_array_length(wrapped) == 1), F.lit(False))
    broken = (F.when(F.octet_length(text) > max_line_bytes, F.lit(f"line longer than {int(max_line_bytes)} bytes"))
              .when(an_object, F.lit(None))
              .when(~valid, F.lit("invalid JSON"))
              .when(~text.rlike(r"^[ \t]*\{"), F.lit("not a JSON object")))
    sources = {f: ([parsed[name] for name in mapping.sources(f)], None) for f in FIELDS}
    return _records(lines, sources, mapping, broken=broken, blank=F.trim(text) == "", raw=text,
                    cited={name: parsed[name] for name in cited})


def _parquet_records(spark, files: list[_File], mapping: FieldMapping, max_line_bytes: int) -> DataFrame:
    table = spark.read.option("mergeSchema", "true").parquet(*[f.location for f in files])
    columns = {c.name: c.dataType for c in table.schema.fields}
    # A file is numbered as one block: each row knows its index in its file.
    rows = table.select(F.struct(*[F.col(f"`{c}`") for c in columns]).alias("r"),
                        F.col("_metadata.file_path").alias("uri"), F.lit(0).cast("long").alias("block"),
                        F.col("_metadata.row_index").alias("id"))
    sources = {}
    for f in FIELDS:
        present = [name for name in mapping.sources(f) if name in columns]
        if len(present) == 1:
            sources[f] = ([F.col("r")[present[0]]], columns[present[0]])
        else:  # aliases of one field can differ in type: text is what they share
            sources[f] = ([F.col("r")[name].cast("string") for name in present], None)
    return _records(rows, sources, mapping, broken=F.lit(None).cast("string"), blank=F.lit(False),
                    raw=F.to_json("r"), cited={name: F.col("r")[name].cast("string") for name in CITED
                                               if name in columns and name not in mapping.consumed()})


def _records(rows: DataFrame, sources: dict, mapping: FieldMapping, broken, blank, raw, cited: dict) -> DataFrame:
    """`uri, block, id` (where a row was read), the typed event columns, `blank`, `reason`, (for
    quarantined lines) `raw`, and the fields.CITED extras as text (`cited`: those the rows have).

    In steps, each reading the columns of the one before by name: the checks then read each
    typed value once computed, where one expression would convert every field again inside
    the conditions of the reason (half the time of the whole on 1M lines)."""
    columns, given = [], {}
    for f in FIELDS:
        candidates, kind = sources[f]
        source = None if not candidates else candidates[0] if len(candidates) == 1 else F.coalesce(*candidates)
        columns.append(typed(f, source, kind, mapping).alias(f))
        if source is not None:
            given[f] = f"source {f}"
            columns.append(source.alias(given[f]))
    extras = [cited.get(name, F.lit(None).cast("string")).alias(name) for name in CITED]
    converted = rows.select("uri", "block", "id", *columns, blank.alias("blank"), broken.alias("broken"),
                            raw.alias("text"), *extras)
    problems = [check for f in FIELDS if (check := problem(
        f, F.col(f"`{given[f]}`") if f in given else None, F.col(f), missing_reason(f, mapping))) is not None]
    # A blank line is not counted and not an event: it has no reason to be quarantined either.
    checked = converted.select("*", F.when(~F.col("blank"), reason(F.col("broken"), problems)).alias("reason"))
    return checked.select("uri", "block", "id", *FIELDS, "blank", "reason",
                          F.when(F.col("reason").isNotNull(), F.substring("text", 1, RAW_KEPT)).alias("raw"), *CITED)
