"""Source values to typed event columns and quarantine reasons, as Spark column expressions.

The rules are those of `nonatomic.replay.ingest.convert` (DuckDB), field by field;
tests/replay/test_spark.py checks that both engines give the same events and
the same quarantine on the same lines.  Where Spark's own parsing is more
lenient than DuckDB's, a pattern narrows it first: Spark reads '2024' as a
timestamp (DuckDB does not, and reads it as an epoch number), so only text
shaped like a date goes to the timestamp cast.  Values of the logs only ever
reach Spark as column literals (`F.lit`), never as SQL text.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from nonatomic.replay.ingest.convert import EPOCH_LIMIT, EPOCH_MS_FROM, SHOWN_CHARS
from nonatomic.replay.ingest.fields import FIELDS, INT, NARROW_INT, REQUIRED, TEXT, TIME
from nonatomic.replay.ingest.mapping import FieldMapping

_NUMBER = r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$"
_DATE = r"^\s*[+-]?[0-9]{4,}-[0-9]{1,2}-[0-9]{1,2}([T ]|\s*$)"
_INTEGER = r"^[ \t\n\f\r]*[+-]?[0-9]+(\.0+)?[ \t\n\f\r]*$"  # RE2's \s (DuckDB), not Java's; `2.0` as pandas writes it
_NARROW = {"INTEGER": T.IntegerType()}
_TYPES = {TIME: T.TimestampType(), INT: T.LongType(), TEXT: T.StringType()}


def try_cast(column: Column, to: T.DataType) -> Column:
    """NULL where the cast fails, also under ANSI mode (Column.try_cast is pyspark 4;
    3.5 casts leniently unless ANSI mode is switched on)."""
    return column.try_cast(to) if hasattr(column, "try_cast") else column.cast(to)


def typed(field: str, source: Column | None, kind: T.DataType | None, mapping: FieldMapping) -> Column:
    """The events column of `field` from its source (`kind` None: text)."""
    if source is None:
        return F.lit(None).cast(_NARROW.get(NARROW_INT.get(field), _TYPES[FIELDS[field]]))
    if FIELDS[field] == TIME:
        return _time(source, kind)
    if FIELDS[field] == INT:
        value = _integer(source, kind)
        return try_cast(value, _NARROW[NARROW_INT[field]]) if field in NARROW_INT else value
    text = source.cast("string")
    text = F.when(text != "", text)
    if field in REQUIRED:
        text = F.when(F.trim(text) != "", text)
    values = mapping.values.get(field)
    if values:
        lookup = F.create_map(*(F.lit(v) for pair in values.items() for v in pair))
        text = F.coalesce(F.try_element_at(lookup, text), text)
    return text


def problem(field: str, source: Column | None, converted: Column, missing: str) -> Column | None:
    """Why `field` makes the line unusable (NULL when it does not), or None when it never can."""
    missing_reason = F.lit(missing) if field in REQUIRED else None
    if source is None:
        return missing_reason
    text = source.cast("string")
    shown = F.substring(text, 1, SHOWN_CHARS)
    reason = None
    if field in REQUIRED:
        reason = F.when(source.isNull() | (F.trim(text) == ""), missing_reason)
    if FIELDS[field] == TIME:
        reason = _otherwise(reason, converted.isNull(), F.concat(F.lit("ts does not parse: "), shown))
    elif FIELDS[field] == INT:
        reason = _otherwise(reason, source.isNotNull() & converted.isNull(),
                            F.concat(F.lit(f"{field} is not an integer: "), shown))
        if field == "attempt":
            reason = reason.when(converted < 1, F.concat(F.lit("attempt must be >= 1: "), converted.cast("string")))
    return reason


def reason(broken: Column, problems: list[Column]) -> Column:
    """The quarantine reason: the record's own problem, else its fields' problems joined by '; '."""
    joined = F.concat_ws("; ", *problems)
    return F.coalesce(broken, F.when(joined != "", joined))


def _otherwise(reason: Column | None, condition: Column, value: Column) -> Column:
    return F.when(condition, value) if reason is None else reason.when(condition, value)


def _time(source: Column, kind: T.DataType | None) -> Column:
    if isinstance(kind, T.TimestampType):
        return source
    if isinstance(kind, (T.TimestampNTZType, T.DateType)):
        return source.cast("timestamp")  # the session time zone is UTC: a time without zone is UTC
    if isinstance(kind, T.NumericType):
        return _epoch(source.cast("double"))
    text = source.cast("string")
    return (F.when(text.rlike(_NUMBER), _epoch(try_cast(text, T.DoubleType())))
            .when(text.rlike(_DATE), try_cast(text, T.TimestampType())))


def _epoch(number: Column) -> Column:
    # Rounded to whole microseconds in both branches, as DuckDB's make_timestamp does.
    return (F.when(F.abs(number) < EPOCH_MS_FROM, F.timestamp_micros(F.round(number * 1_000_000).cast("long")))
            .when(F.abs(number) < EPOCH_LIMIT, F.timestamp_micros(F.round(number * 1000).cast("long"))))


def _integer(source: Column, kind: T.DataType | None) -> Column:
    if isinstance(kind, T.IntegralType):
        return source.cast("long")
    if isinstance(kind, (T.FloatType, T.DoubleType, T.DecimalType)):
        return F.when(source == F.floor(source), try_cast(source, T.LongType()))
    text = source.cast("string")
    return F.when(text.rlike(_INTEGER), try_cast(F.regexp_replace(F.trim(text), r"\.0+$", ""), T.LongType()))
