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
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from nonatomic.replay.detect import stages_for
from nonatomic.replay.ingest.schema import EVENT_ORDER
from nonatomic.rules.replay.base import Detector
from nonatomic.rules.replay.views import Stage, events_stage


class TranslationError(Exception):
    """A query that sqlglot cannot translate faithfully to the target dialect."""


def translate(sql: str, params: Mapping[str, object], dialect: str = "spark") -> str:
    """`sql` (DuckDB) in `dialect`, with its `$name` parameters bound to `params` as literals."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
        tree = tree.transform(lambda node: _bind(node, params))
        if dialect == "spark":
            tree = tree.transform(_epoch_ms)
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


def stages(detectors: list[Detector]) -> list[Stage]:
    """The stages the detectors need, in dependency order.

    Spark always numbers the events in the event order (DuckDB may use the
    time as the position when no two events of a task share one): a position
    only orders the events of a task, so findings do not depend on its form.
    The events are numbered in place (see events_stage): ingest partitioned them by task.
    """
    return stages_for(detectors, lambda: events_stage(EVENT_ORDER, join_back=False))


def queries(detectors: list[Detector], params: Mapping[str, object],
            dialect: str = "spark") -> list[tuple[str, str]]:
    """(name, SQL) of every stage, then every detector, in the order they must run."""
    out = [(stage.name, translate(stage.sql, {}, dialect)) for stage in stages(detectors)]
    out += [(d.code, translate(d.sql, {p: params[p] for p in d.parameters()}, dialect)) for d in detectors]
    return out
