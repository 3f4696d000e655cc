"""`nonatomic replay`: ingest guard logs, run the detectors, report.

Exit codes: 0 nothing at or above --fail-on, 1 findings, 2 unreadable
input, bad mapping or settings, or --strict with quarantined lines.
"""

from __future__ import annotations

import functools
import sys
from datetime import datetime, timezone

import click

from nonatomic.cli.common import codes, color_option, progress, usage_error, wants_color, write
from nonatomic.config import ConfigError
from nonatomic.rules.severity import SEVERITIES, rank


def bounded_memory(command):
    """DuckDB could not stay within the memory it was given (`--memory-limit`, or the
    default budget): exit 2 with the engine's reason and what to do, not a traceback."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        import duckdb

        try:
            return command(*args, **kwargs)
        except duckdb.OutOfMemoryException as exc:
            given = f"--memory-limit {kwargs['memory_limit']}" if kwargs.get("memory_limit") else \
                "the default memory budget"
            reason = str(exc).splitlines()[0]
            click.echo(f"nonatomic: error: out of memory under {given} ({reason}): raise --memory-limit, "
                       "or lower --threads", err=True)
            sys.exit(2)

    return run


class _Instant(click.ParamType):
    """An RFC 3339 time or date; without an offset it is UTC."""

    name = "TIME"

    def convert(self, value, param, ctx):
        if isinstance(value, datetime):
            return value
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            self.fail(f"{value!r} is not an RFC 3339 time such as 2024-05-01T10:00:00Z", param, ctx)
        return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


@click.command()
@click.argument("logs", nargs=-1)
@click.option("--mapping", type=click.Path(dir_okay=False), help="YAML file mapping your field names and values.")
@click.option("--db", type=click.Path(dir_okay=False), help="DuckDB file to keep; later runs add to it.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md", "html"]), default="text", show_default=True,
              help="html: a self-contained page with the findings and the timelines of their tasks.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE.")
@click.option("--select", help="Comma list of detector codes or prefixes to run (NR3 = NR3xx).")
@click.option("--ignore", help="Comma list of detector codes or prefixes to skip.")
@click.option("--task", "tasks", multiple=True,
              help="Replay this task only (repeatable): its events and those of the locks it touched.")
@click.option("--since", type=_Instant(), help="Report findings at or after this time.")
@click.option("--until", type=_Instant(), help="Report findings before this time.")
@click.option("--max-findings", type=click.IntRange(min=0),
              help="List at most N findings in full (any format); the summary still counts all.")
@click.option("--fail-on", type=click.Choice([*SEVERITIES, "never"]), default="error", show_default=True,
              help="Lowest severity that makes the exit code 1.")
@click.option("--strict", is_flag=True, help="Exit 2 when any line was quarantined.")
@click.option("--memory-limit", help="DuckDB memory limit, e.g. 1GB (larger data spills to disk) "
                                     "[default: 1.5x the logs as rows, at least 256MB].")
@click.option("--threads", type=click.IntRange(min=1), help="DuckDB threads [default: CPUs; with --memory-limit, one per GB of it].")
@click.option("--input-format", type=click.Choice(["auto", "jsonl", "csv", "parquet", "otlp"]), default="auto",
              show_default=True, help="Read every LOG as this format (otlp: OTLP/JSON trace exports).")
@click.option("--max-line-bytes", type=click.IntRange(min=1024), default=1 << 20, show_default=True,
              help="Longer lines are quarantined.")
@color_option
@click.option("--engine", type=click.Choice(["duckdb", "spark"]), default="duckdb", show_default=True,
              help="spark: run on the active or a local Spark (pip install 'nonatomic[spark]'); "
                   "LOGS may be object-store URIs.")
@click.option("--emit-sql", type=click.Choice(["duckdb", "spark"]),
              help="Print the detector queries in this dialect (settings bound) and exit; reads no LOGS.")
@bounded_memory
def replay(logs, mapping, db, fmt, output, select, ignore, tasks, since, until, max_findings, fail_on, strict,
           memory_limit, threads, input_format, max_line_bytes, color, engine, emit_sql) -> None:
    """Replay guard logs (files, directories, globs; `-`: standard input) and find non-atomic hazards."""
    from nonatomic.replay.report import render, render_json
    from nonatomic.replay.report.html import REPORT_EVENTS, REPORT_TASKS
    from nonatomic.replay.report.model import GROUP_SHOWN, GROUPS_SHOWN, TEXT_QUARANTINE_SHOWN
    from nonatomic.replay.report.text import clean

    if emit_sql:
        write(_queries(emit_sql, codes(select), codes(ignore)), output)
        return
    if not logs:
        raise click.UsageError("Missing argument 'LOGS...'.")
    check_codes(select, ignore)
    if engine == "spark":
        session = _spark_session(logs, mapping, db, fmt, input_format, memory_limit, threads, max_line_bytes)
    else:
        session = open_session(logs, mapping, db, input_format, memory_limit, threads, max_line_bytes)
    with session:
        warnings = session.warnings()  # judged over the whole database, before a --task restriction
        restrict(session, tasks)
        found = session.find(codes(select), codes(ignore), tasks=tasks, since=since, until=until)
        summary = session.summary(found)
        severities = found.severities()
        if fmt == "json":
            # streamed from the engine while it is written: the connection must stay open
            write(render_json(summary, found.json_texts(max_findings), session.quarantine_texts(), warnings), output)
        else:
            quarantine = session.quarantine_rows(TEXT_QUARANTINE_SHOWN)
            timelines, omitted = session.timelines(found, max_tasks=REPORT_TASKS, max_events=REPORT_EVENTS) \
                if fmt == "html" else ([], 0)
            groups = found.grouped(GROUP_SHOWN, GROUPS_SHOWN, max_findings)
            colour = wants_color(color, to_file=output is not None)
            write(render(fmt, summary, groups, severities, quarantine, timelines, omitted, color=colour), output,
                  color=colour)
    for warning in warnings:  # a file name is a value from outside: escaped for the terminal as the report is
        click.echo("nonatomic: warning: " + clean(f"{warning['file'] + ': ' if warning['file'] else ''}"
                                                  f"{warning['message']}"), err=True)
    if strict and (summary["quarantined"] or any(w["file"] for w in warnings)):
        click.echo(f"nonatomic: --strict: {summary['quarantined']} line(s) quarantined, "
                   f"{sum(1 for w in warnings if w['file'])} file(s) with nothing to replay", err=True)
        sys.exit(2)
    failing = fail_on != "never" and any(rank(s) <= rank(fail_on) for s in severities)
    sys.exit(1 if failing else 0)


def check_codes(select: str | None, ignore: str | None) -> None:
    """Exit 2 on a --select/--ignore code no detector has, before any log is read."""
    from nonatomic.replay.detect import choose

    try:
        choose(codes(select), codes(ignore))
    except ConfigError as exc:
        raise usage_error(str(exc))


def restrict(session, tasks) -> None:
    """With --task, the engine sees only those tasks' events (and their locks'); a --task with no
    event in the logs exits 2: a typo must not report nothing and pass."""
    if tasks:
        missing = session.restrict(tasks)
        if missing:
            raise usage_error(f"no events of task(s) {', '.join(map(repr, missing))} in the logs")


def open_session(logs, mapping, db, input_format, memory_limit, threads, max_line_bytes):
    """The logs ingested (a `Replay`), with the project's replay settings; bad input exits 2."""
    from nonatomic.replay.api import open_logs
    from nonatomic.replay.ingest.database import DatabaseError
    from nonatomic.replay.ingest.inputs import InputError
    from nonatomic.replay.ingest.mapping import MappingError
    from nonatomic.replay.settings import load_settings

    try:
        settings = load_settings()
        with progress("ingesting", shown=lambda log: log.path) as on_file:
            return open_logs(list(logs), mapping, db=db, input_format=input_format, memory_limit=memory_limit,
                             threads=threads, max_line_bytes=max_line_bytes, settings=settings, on_file=on_file)
    except (InputError, MappingError, DatabaseError, ConfigError) as exc:
        raise usage_error(str(exc))


def _spark_session(logs, mapping, db, fmt, input_format, memory_limit, threads, max_line_bytes):
    """The logs ingested on Spark; options only DuckDB has, and bad input, exit 2."""
    from nonatomic.replay.ingest.inputs import InputError
    from nonatomic.replay.ingest.mapping import MappingError, load_mapping
    from nonatomic.replay.settings import load_settings

    unsupported = {"--db": db, "--memory-limit": memory_limit, "--threads": threads,
                   "--format html (timelines are drawn from DuckDB)": fmt == "html" or None}
    for option, value in unsupported.items():
        if value is not None:
            raise usage_error(f"--engine spark does not take {option}; size Spark with its own configuration")
    from nonatomic.replay.spark import open_logs
    from nonatomic.replay.spark.session import SparkUnavailable

    try:
        return open_logs(list(logs), load_mapping(mapping) if mapping else None, input_format=input_format,
                         max_line_bytes=max_line_bytes, settings=load_settings())
    except (InputError, MappingError, ConfigError, SparkUnavailable) as exc:
        raise usage_error(str(exc))


def _queries(dialect: str, select, ignore) -> str:
    """The stages, then each detector, as SQL a scheduler can run after registering an `events` table."""
    from nonatomic.replay.detect import choose
    from nonatomic.replay.settings import DEFAULT_SETTINGS, load_settings

    try:
        from nonatomic.replay.spark.translate import TranslationError, queries
    except ImportError as exc:
        raise usage_error(f"--emit-sql needs sqlglot: pip install 'nonatomic[spark]' ({exc})")
    try:
        params = {**DEFAULT_SETTINGS, **load_settings()}
        named = queries(choose(select, ignore), params, dialect)
    except (ConfigError, TranslationError) as exc:
        raise usage_error(str(exc))
    out = ["-- nonatomic replay detectors over an `events` table (columns: nonatomic/replay/ingest/schema.py).",
           "-- Run in order: the stages are views the detectors read (cache them on large data);",
           "-- each detector returns one row per finding."]
    for name, sql in named:
        head = f"CREATE OR REPLACE TEMPORARY VIEW {name} AS\n" if name.startswith("nr_") else ""
        out.append(f"\n-- {name}\n{head}{sql};")
    return "\n".join(out) + "\n"


COMMANDS = [replay]
