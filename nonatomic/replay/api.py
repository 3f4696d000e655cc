"""The Python API for notebooks: open logs, get events, findings and quarantine as DataFrames.

    >>> from nonatomic.replay import open_logs
    >>> replay = open_logs(["logs/"], mapping="map.yaml")
    >>> replay.findings(select=["NR3"])        # pandas DataFrame, ts as timestamps
    >>> replay.events(task_id="t-42")
    >>> replay.timeline("t-42")                # drawn in Jupyter (HTML), as text elsewhere
    >>> replay.con.sql("SELECT tool, count(*) FROM events GROUP BY tool")
"""

from __future__ import annotations

import html as html_escape
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from nonatomic.replay.findings import BATCH, Findings
from nonatomic.replay.ingest import DEFAULT_MAX_LINE_BYTES, IngestResult, ingest
from nonatomic.replay.ingest.budget import default_memory_limit, threads_for
from nonatomic.replay.ingest.database import connect
from nonatomic.replay.ingest.inputs import LogFile, discover
from nonatomic.replay.ingest.ledger import CHANGES
from nonatomic.replay.ingest.mapping import FieldMapping, load_mapping, parse_mapping
from nonatomic.replay.ingest.schema import EVENT_ORDER
from nonatomic.replay.notices import notices, unscanned_notice
from nonatomic.replay.report.model import Timeline
from nonatomic.replay.timeline import MAX_EVENTS, MAX_TASKS, build_timelines, tasks_to_draw
from nonatomic.rules.replay.views import EVENT_ROWS, LOCK_OPS

if TYPE_CHECKING:  # imported where a DataFrame is made: the command line never needs pandas (50 MB)
    import pandas as pd


@dataclass(frozen=True)
class TimelineView:
    """Drawn timelines for a notebook: Jupyter displays the HTML drawing (inline SVG,
    isolated in a frame), a console prints the text drawing; `.html()` is the
    self-contained page to save."""

    timelines: tuple[Timeline, ...]

    def html(self) -> str:
        """The self-contained HTML page of these timelines (no network, every value escaped)."""
        from nonatomic.replay.report import html

        return html.timeline_page(list(self.timelines), 0)

    def _repr_html_(self) -> str:
        # a sandboxed frame: the page's styles and policy stay its own, the notebook's untouched
        return (f'<iframe sandbox="" srcdoc="{html_escape.escape(self.html(), quote=True)}" '
                f'style="width: 100%; height: 480px; border: 0; resize: vertical"></iframe>')

    def __str__(self) -> str:
        from nonatomic.replay.report import text

        return text.render(list(self.timelines))

    def __repr__(self) -> str:
        return str(self)


class Replay:
    """Logs ingested into DuckDB (`.con`, free for your own SQL), with the detectors one call away."""

    def __init__(self, con, ingested: IngestResult, settings: dict | None = None,
                 mapping: FieldMapping | None = None) -> None:
        self.con = con
        self.ingested = ingested
        self.settings = settings
        self.mapping = mapping

    def events(self, task_id: str | None = None) -> pd.DataFrame:
        """Events in task order (time, then seq, attempt and file position)."""
        where, params = ("WHERE task_id = $task", {"task": task_id}) if task_id is not None else ("", {})
        return self.con.execute(f"SELECT * FROM events {where} ORDER BY task_id, {EVENT_ORDER}", params).df()

    def quarantine(self) -> pd.DataFrame:
        """The lines that were not ingested: file, line (as `grep -n` counts), reason and raw text."""
        return self.con.execute("SELECT * FROM quarantine ORDER BY file, line").df()

    def restrict(self, tasks: Iterable[str]) -> list[str]:
        """Let detectors and timelines see only these tasks' events and the lock events of the locks
        they touched (other tasks' leases of them included); the tasks that have no events.

        The stored events stay as they are: a temporary table of the same name shadows them
        for this connection, so every stage is built from the few events kept."""
        wanted = sorted(set(tasks))
        stored = _stored(self.con)
        self.con.execute(
            f"""
            CREATE OR REPLACE TEMP TABLE {EVENT_ROWS} AS
            WITH mine AS (SELECT * FROM {stored} WHERE task_id IN (SELECT unnest($tasks)))
            SELECT * FROM mine
            UNION ALL
            SELECT * FROM {stored}
            WHERE op IN {LOCK_OPS} AND task_id NOT IN (SELECT unnest($tasks))
              AND target IN (SELECT target FROM mine WHERE op IN {LOCK_OPS})
            """, {"tasks": wanted})
        return self.missing_tasks(wanted)

    def find(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
             tasks: Iterable[str] | None = None, since: datetime | None = None,
             until: datetime | None = None) -> Findings:
        """The findings in the engine (see `Findings`); `tasks`/`since`/`until` keep those of these
        tasks and times."""
        from nonatomic.replay.detect import build_findings

        return build_findings(self.con, select, ignore, self.settings, tasks, since, until)

    def detect(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
               tasks: Iterable[str] | None = None, since: datetime | None = None,
               until: datetime | None = None) -> list[dict]:
        """Findings as dicts; `tasks`/`since`/`until` keep those of these tasks and times.
        An unknown code in `select`/`ignore` raises ConfigError."""
        return self.find(select, ignore, tasks, since, until).all()

    def findings(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> pd.DataFrame:
        """Findings as a DataFrame, one row each; `ts` is a UTC timestamp as in `events()`."""
        import pandas as pd

        frame = pd.DataFrame(self.detect(select, ignore))
        if "ts" in frame:
            frame["ts"] = pd.to_datetime(frame["ts"], utc=True, format="ISO8601")
        return frame

    def summary(self, findings: list[dict] | Findings | None = None) -> dict:
        """Counts over the whole database; with a kept database, also what this run did to
        each file it was given (`changes`: new, grown, replaced, unchanged -> files)."""
        summary = summarize(self.con, findings if findings is not None else self.find())
        if self.ingested.changes:
            summary["changes"] = {change: [path for path, c in self.ingested.changes.items() if c == change]
                                  for change in CHANGES}
        return summary

    def quarantine_rows(self, limit: int | None = None) -> list[dict]:
        """The quarantine as dicts (file, line, reason, raw), in file and line order; the first `limit`."""
        return quarantine_rows(self.con, limit)

    def quarantine_texts(self) -> Iterator[str]:
        """Every quarantined line as a JSON object's text, in order, fetched in batches (as
        Findings.json_texts: the connection serves nothing else until the last one is read)."""
        result = self.con.execute("SELECT CAST(to_json({'file': file, 'line': line, 'reason': reason, 'raw': raw}) "
                                  "AS VARCHAR) FROM quarantine ORDER BY file, line")
        while rows := result.fetchmany(BATCH):
            yield from (text for (text,) in rows)

    def warnings(self) -> list[dict]:
        """What the input hid from the detectors, with the likely cause (notices.py)."""
        return notices(self.con, self.mapping) + unscanned_notice(self.ingested.unscanned)

    def missing_tasks(self, tasks: Iterable[str]) -> list[str]:
        """Those of `tasks` that no stored event belongs to, sorted."""
        wanted = sorted(set(tasks))
        if not wanted:
            return []
        found = self.con.execute(f"SELECT DISTINCT task_id FROM {_stored(self.con)} WHERE list_contains($tasks, task_id)",
                                 {"tasks": wanted}).fetchall()
        return sorted(set(wanted) - {task for (task,) in found})

    def timelines(self, findings: list[dict] | Findings, tasks: Iterable[str] = (), *, max_tasks: int = MAX_TASKS,
                  max_events: int = MAX_EVENTS) -> tuple[list[Timeline], int]:
        """Timelines of `tasks` (default: the tasks with findings, the most severe first, at most
        `max_tasks`) with their findings marked, and how many tasks with findings were left out."""
        if isinstance(findings, Findings):
            names, omitted = (list(dict.fromkeys(tasks)), 0) if tasks else findings.worst_tasks(max_tasks)
            findings = findings.of_tasks(names)
        else:
            names, omitted = (list(dict.fromkeys(tasks)), 0) if tasks else tasks_to_draw(findings, max_tasks)
        return build_timelines(self.con, names, findings, settings=self.settings, max_events=max_events), omitted

    def timeline(self, *tasks: str, max_events: int = MAX_EVENTS) -> TimelineView:
        """The timeline of these tasks (default: every task with findings, the most severe
        first), findings marked: in Jupyter it is drawn as HTML.  An unknown task raises KeyError."""
        if missing := self.missing_tasks(tasks):
            raise KeyError(f"no events of task(s) {', '.join(map(repr, missing))} in the logs")
        drawn, _ = self.timelines(self.find(), tasks, max_events=max_events)
        return TimelineView(tuple(drawn))

    def close(self) -> None:
        """Close the DuckDB connection (a `with` block does it for you)."""
        self.con.close()

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def keep(findings: list[dict], tasks: Iterable[str] | None = None, since: datetime | None = None,
         until: datetime | None = None) -> list[dict]:
    """The findings of these tasks (all when None) at or after `since` and before `until`."""
    wanted = set(tasks) if tasks else None

    def in_window(finding: dict) -> bool:
        if since is None and until is None:
            return True
        moment = _instant(finding.get("ts"))
        return moment is not None and (since is None or moment >= since) and (until is None or moment < until)

    return [f for f in findings if (wanted is None or f["task_id"] in wanted) and in_window(f)]


def _instant(value: object) -> datetime | None:
    """A finding's time as an aware datetime (detectors may give it as RFC 3339 text)."""
    if value is None or isinstance(value, datetime):
        return value
    text = str(value)
    moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def open_logs(
    logs: Iterable[str | Path] | str | Path,
    mapping: str | Path | dict | FieldMapping | None = None,
    *,
    db: str | Path | None = None,
    input_format: str = "auto",
    memory_limit: str | None = None,
    threads: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    settings: dict | None = None,
    on_file: Callable[[LogFile, int], None] | None = None,
) -> Replay:
    """Ingest log files, directories or globs (into `db` if given, else in memory); without a
    `memory_limit` DuckDB gets one sized to the input, and with one, unless `threads` are
    given, the threads it affords (ingest.budget)."""
    if isinstance(logs, (str, Path)):
        logs = [logs]
    if isinstance(mapping, dict):
        mapping = parse_mapping(mapping)
    elif isinstance(mapping, (str, Path)):
        mapping = load_mapping(mapping)
    # standard input and pipes are copied here, and read only while ingesting
    with tempfile.TemporaryDirectory(prefix="nonatomic-") as spool:
        files = discover([str(p) for p in logs], input_format, spool_dir=spool)
        if memory_limit is not None and threads is None:
            threads = threads_for(memory_limit)
        con = connect(str(db) if db is not None else None, threads=threads,
                      memory_limit=memory_limit or default_memory_limit(files, None if db is None else str(db)))
        try:
            ingested = ingest(con, files, mapping, persistent=db is not None,
                              max_line_bytes=max_line_bytes, on_file=on_file)
        except BaseException:
            con.close()
            raise
    return Replay(con, ingested, settings, mapping)


def summarize(con, findings: list[dict] | Findings) -> dict:
    """Counts over the whole database (what was read, also when detectors saw one task), not only
    this run's files."""
    files, lines = _row(con, "SELECT count(DISTINCT realpath), coalesce(sum(lines), 0) FROM ingested_files")
    events, tasks = _row(con, f"SELECT count(*), count(DISTINCT task_id) FROM {_stored(con)}")
    (quarantined,) = _row(con, "SELECT count(*) FROM quarantine")
    summary = {"files": files, "lines": int(lines), "events": events, "quarantined": quarantined,
               "tasks": tasks, "findings": findings.count() if isinstance(findings, Findings) else len(findings)}
    spans = span_counts(con)
    if spans is not None:
        summary["spans"] = spans
    return summary


def span_counts(con) -> dict | None:
    """Spans read from trace files (None when no trace was read): tool spans by convention, the
    ignored by kind, and (when there are any) the documents that held no span."""
    rows = con.execute("SELECT tool, kind, sum(spans) FROM trace_spans GROUP BY ALL ORDER BY 3 DESC, 2").fetchall()
    (spanless,) = _row(con, "SELECT coalesce(sum(documents), 0) FROM spanless_documents")
    if not rows and not spanless:
        return None
    tool = {kind: int(n) for is_tool, kind, n in rows if is_tool}
    ignored = {kind: int(n) for is_tool, kind, n in rows if not is_tool}
    counts = {"read": sum(tool.values()) + sum(ignored.values()), "tool": sum(tool.values()),
              "ignored": sum(ignored.values()), "tool_by_convention": tool, "ignored_by_kind": ignored}
    if spanless:
        counts["documents_without_spans"] = int(spanless)
    return counts


def _row(con, sql: str) -> tuple:
    """The one row of `sql`, fetched to the end: a result left open by fetchone() would
    block the user's next `con.sql(...)` (DuckDB's ResourceInUseException)."""
    return con.execute(sql).fetchall()[0]


def _stored(con) -> str:
    """The stored events' table by its full name (Replay.restrict shadows the short one)."""
    (database,) = _row(con, "SELECT current_database()")
    return '"' + database.replace('"', '""') + f'".main.{EVENT_ROWS}'


def quarantine_rows(con, limit: int | None = None) -> list[dict]:
    rows = con.execute("SELECT file, line, reason, raw FROM quarantine ORDER BY file, line"
                       + ("" if limit is None else " LIMIT $n"), {} if limit is None else {"n": limit}).fetchall()
    return [{"file": f, "line": n, "reason": r, "raw": raw} for f, n, r, raw in rows]
