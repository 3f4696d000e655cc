"""Ingest guard logs into Spark: the `events` and `quarantine` views, accounting for every line.

JSONL is read as text (`spark.read.text`), one row per line, so a bad line is
a row like any other and gets its reason instead of vanishing.  Spark splits
large files into blocks read by different tasks, and no row knows its line
number; each row knows its file and block (`_metadata`) and gets a
`monotonically_increasing_id`, which grows by one from row to row within a
task's partition.  A block is read by one task, in order, so a line's number
in its file is its id minus the first id of its block, plus the lines of the
file's earlier blocks.  Those per-block counts come from a pass over the text
that parses nothing; the lines are then parsed once, numbered, partitioned by
task and stored (checkpointed), the quarantined lines with the events, and
one aggregate over the stored rows counts each file's events and quarantined
lines.  Parquet rows carry their row index (`_metadata.row_index`) and each
file is numbered as one block.

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
from functools import reduce
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
    sources = [(read(spark, chosen), parse) for fmt, read, parse in _FORMATS
               if (chosen := [f for f in files if f.format == fmt])]
    # Numbering the lines needs only where each block starts and how many rows it has: a pass
    # over the text that parses nothing.
    blocks = _union([rows.select("uri", "block", "id", "blank") for rows, _ in sources]).groupBy(
        "uri", "block").agg(F.min("id").alias("first"), F.count(F.lit(1)).alias("rows"),
                            F.count(F.when(~F.col("blank"), 1)).alias("lines")).collect()
    records = _union([parse(rows, mapping, max_line_bytes) for rows, parse in sources])
    numbered = records.where(~F.col("blank")).join(F.broadcast(_located(spark, files, blocks)), ["uri", "block"]) \
        .withColumn("line", F.col("id") + F.col("shift"))
    # A line without a newline at the end of a file was cut short while being written.
    truncated = (F.col("line") == F.col("truncated_line")) & (F.col("reason") == "invalid JSON")
    reason = F.when(truncated, F.lit("truncated last line: invalid JSON")).otherwise(F.col("reason"))
    # Parsed once, partitioned by task and kept, the quarantined lines with the events (they
    # are few): every stage's window partitions by the task first and reuses this partitioning
    # instead of shuffling again, and the stages, the evidence, the counts and the quarantine
    # all read it.
    with partitioned_plans(spark):
        stored = checkpoint(numbered.select("file", "line", *FIELDS, reason.alias("reason"), "raw", *CITED)
                            .repartition("task_id"))
    usable = F.col("reason").isNull()
    good = stored.where(usable)
    per_file = {row["file"]: row for row in stored.groupBy("file").agg(
        F.count(F.when(usable, 1)).alias("events"), F.count(F.when(~usable, 1)).alias("quarantined"),
        F.max(F.when(usable, F.col("line"))).alias("last")).collect()}
    result = IngestResult(files=[f.name for f in files], lines=sum(row["lines"] for row in blocks),
                          events=sum(row["events"] for row in per_file.values()),
                          quarantined=sum(row["quarantined"] for row in per_file.values()))
    # Event ids are `base + line`, each file's base the largest event id of the files before it.
    bases, base = {}, 0
    for f in files:
        bases[f.name] = base
        base += (per_file[f.name]["last"] or 0) if f.name in per_file else 0
    base_of = F.create_map(*(value for name, first in bases.items() for value in (F.lit(name), F.lit(first).cast("long"))))
    event_id = (F.col("line") + F.element_at(base_of, F.col("file"))).alias("event_id")
    events = good.select(event_id, "file", "line", *FIELDS)
    # The stages read the stored rows, which in Spark are the events themselves.
    for view in ("events", EVENT_ROWS):
        events.createOrReplaceTempView(view)
    good.where(F.col(CITED[-1]).isNotNull()).select(event_id, *CITED).createOrReplaceTempView(CITED_VIEW)
    stored.where(~usable).select("file", "line", "reason", "raw").createOrReplaceTempView(
        "quarantine")
    return result


def _union(frames: list[DataFrame]) -> DataFrame:
    return reduce(DataFrame.unionByName, frames)


def _located(spark, files: list[_File], blocks: list) -> DataFrame:
    """Per (file, block) Spark read: the cited file name, what to add to a row's id to get its
    line number (`shift`), and the file's last line where that line has no newline."""
    incomplete = {_key(f.location) for f in files if not f.complete}
    shifts, before = [], {}
    for row in sorted(blocks, key=lambda r: (r["uri"], r["block"])):
        uri, done = row["uri"], before.get(row["uri"], 0)
        shifts.append([uri, row["block"], _name(files, uri), done + 1 - row["first"]])
        before[uri] = done + row["rows"]
    for shift in shifts:
        shift.append(before[shift[0]] if _key(shift[0]) in incomplete else None)
    return spark.createDataFrame(shifts, "uri string, block long, file string, shift long, truncated_line long")


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


def _jsonl_rows(spark, files: list[_File]) -> DataFrame:
    """The lines as text, with where each was read (`uri, block, id`) and whether it is blank."""
    return spark.read.text([f.location for f in files]).select(
        F.col("value").alias("text"), F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("block"), F.monotonically_increasing_id().alias("id"),
        (F.trim("value") == "").alias("blank"))


def _jsonl_records(lines: DataFrame, mapping: FieldMapping, max_line_bytes: int) -> DataFrame:
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
    return _records(lines, sources, mapping, broken=broken, blank=F.col("blank"), raw=text,
                    cited={name: parsed[name] for name in cited})


def _parquet_rows(spark, files: list[_File]) -> DataFrame:
    """The rows as one struct `r`, with where each was read: a file is numbered as one block,
    each row knows its index in its file.  No row is blank."""
    table = spark.read.option("mergeSchema", "true").parquet(*[f.location for f in files])
    return table.select(F.struct(*[F.col(f"`{c}`") for c in table.columns]).alias("r"),
                        F.col("_metadata.file_path").alias("uri"), F.lit(0).cast("long").alias("block"),
                        F.col("_metadata.row_index").alias("id"), F.lit(False).alias("blank"))


def _parquet_records(rows: DataFrame, mapping: FieldMapping, max_line_bytes: int) -> DataFrame:
    columns = {c.name: c.dataType for c in rows.schema["r"].dataType.fields}
    sources = {}
    for f in FIELDS:
        present = [name for name in mapping.sources(f) if name in columns]
        if len(present) == 1:
            sources[f] = ([F.col("r")[present[0]]], columns[present[0]])
        else:  # aliases of one field can differ in type: text is what they share
            sources[f] = ([F.col("r")[name].cast("string") for name in present], None)
    return _records(rows, sources, mapping, broken=F.lit(None).cast("string"), blank=F.col("blank"),
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


_FORMATS = (("jsonl", _jsonl_rows, _jsonl_records), ("parquet", _parquet_rows, _parquet_records))
"""Each format's reader of rows (where each was read, whether it is blank) and its parser of them."""
