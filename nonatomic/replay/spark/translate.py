"""The detector SQL for Spark: the DuckDB queries of the catalogue, transpiled by sqlglot.

There is one copy of every stage and detector, in DuckDB SQL (`nonatomic.rules.replay`).
For Spark it is parsed by sqlglot, its named parameters (`$min_backoff_ms`) are
replaced by literal expressions sqlglot builds from the values (the generator
quotes and escapes them for the target dialect; no value is ever formatted
into SQL text), and the tree is written out as Spark SQL.

sqlglot raises on a construct it cannot write for Spark.  One construct it
writes wrongly: DuckDB's `epoch_ms` is overloaded (milliseconds -> timestamp,
and timestamp -> milliseconds), and sqlglot always reads the former.  Our SQL
uses only the latter, on the `ts` column, so `_epoch_ms` rewrites it to
Spark's `unix_millis`; any other argument is refused rather than guessed.
Two functions it passes through by name, which Spark lacks or means otherwise
(`_SPARK_NAMES`): `epoch_us` is Spark's `unix_micros`, and DuckDB's `hash` is
64 bits where Spark's is a 32-bit murmur3, whose collisions among a million
keys would make every count of distinct hashes wrong: Spark's 64-bit hash is
`xxhash64`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from nonatomic.replay.detect import stages_for
from nonatomic.replay.ingest.schema import EVENT_ORDER
from nonatomic.rules.replay.base import Detector
from nonatomic.rules.replay.views import Stage, events_stage


_SPARK_NAMES = {"hash": "xxhash64", "epoch_us": "unix_micros"}


class TranslationError(Exception):
    """A query that sqlglot cannot translate faithfully to the target dialect."""


def translate(sql: str, params: Mapping[str, object], dialect: str = "spark") -> str:
    """`sql` (DuckDB) in `dialect`, with its `$name` parameters bound to `params` as literals."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
        tree = tree.transform(lambda node: _bind(node, params))
        if dialect == "spark":
            tree = tree.transform(_epoch_ms).transform(_spark_name)
        return tree.sql(dialect=dialect, pretty=True, unsupported_level=ErrorLevel.RAISE)
    except (sqlglot.errors.SqlglotError, KeyError) as exc:
        raise TranslationError(f"cannot translate to {dialect}: {exc}") from exc


def _bind(node: exp.Expression, params: Mapping[str, object]) -> exp.Expression:
    if isinstance(node, exp.Placeholder):
        return exp.convert(params[node.name])
    return node


def _epoch_ms(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.UnixToTime):
        if not (isinstance(node.this, exp.Column) and node.this.name == "ts" and node.args.get("scale")
                and node.args["scale"].name == "3"):
            raise TranslationError(f"ambiguous epoch function for Spark: {node.sql('duckdb')}")
        return exp.Anonymous(this="unix_millis", expressions=[node.this.copy()])
    return node


def _spark_name(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Anonymous) and str(node.this).lower() in _SPARK_NAMES:
        return exp.Anonymous(this=_SPARK_NAMES[str(node.this).lower()], expressions=[e.copy() for e in node.expressions])
    return node


def stages(detectors: list[Detector], same_time: Callable[[], bool] = lambda: True) -> list[Stage]:
    """The stages the detectors need, in dependency order.

    As on DuckDB, the time serves as the position when `same_time()` says no two
    events of a task share one (SAME_TIME_IN_A_TASK, asked only when a detector
    needs the events stage); otherwise the events are numbered in the event
    order, in place (see events_stage): ingest partitioned them by task.  SQL
    written for no data in particular (`--emit-sql`) numbers them, which is
    right for any log.
    """
    return stages_for(detectors, lambda: events_stage(EVENT_ORDER, same_time(), join_back=False))


def queries(detectors: list[Detector], params: Mapping[str, object],
            dialect: str = "spark") -> list[tuple[str, str]]:
    """(name, SQL) of every stage, then every detector, in the order they must run."""
    out = [(stage.name, translate(stage.sql, {}, dialect)) for stage in stages(detectors)]
    out += [(d.code, translate(d.sql, {p: params[p] for p in d.parameters()}, dialect)) for d in detectors]
    return out
