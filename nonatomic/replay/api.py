"""The Python API for notebooks: open logs, get events, findings and quarantine as DataFrames.

    >>> from nonatomic.replay import open_logs
    >>> replay = open_logs(["logs/"], mapping="map.yaml")
    >>> replay.findings(select=["NR3"])        # pandas DataFrame
    >>> replay.events(task_id="t-42")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from nonatomic.replay.findings import BATCH, Findings
from nonatomic.replay.ingest import DEFAULT_MAX_LINE_BYTES, IngestResult, ingest
from nonatomic.replay.ingest.database import connect
from nonatomic.replay.ingest.inputs import LogFile, discover
from nonatomic.replay.ingest.mapping import FieldMapping, load_mapping, parse_mapping
from nonatomic.replay.ingest.schema import EVENT_ORDER
from nonatomic.replay.report.model import Timeline
from nonatomic.replay.timeline import MAX_EVENTS, MAX_TASKS, build_timelines, tasks_to_draw
from nonatomic.rules.replay.views import EVENT_ROWS, LOCK_OPS


class Replay:
    """Logs ingested into DuckDB (`.con`), with the detectors one call away."""

    def __init__(self, con, ingested: IngestResult, settings: dict | None = None) -> None:
        self.con = con
        self.ingested = ingested
        self.settings = settings

    def events(self, task_id: str | None = None) -> pd.DataFrame:
        """Events in task order (time, then seq, attempt and file position)."""
        where, params = ("WHERE task_id = $task", {"task": task_id}) if task_id is not None else ("", {})
        return self.con.execute(f"SELECT * FROM events {where} ORDER BY task_id, {EVENT_ORDER}", params).df()

    def quarantine(self) -> pd.DataFrame:
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
        found = {r[0] for r in self.con.execute(f"SELECT DISTINCT task_id FROM {EVENT_ROWS}").fetchall()}
        return [t for t in wanted if t not in found]

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
        """Findings as dicts; `tasks`/`since`/`until` keep those of these tasks and times."""
        return self.find(select, ignore, tasks, since, until).all()

    def findings(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> pd.DataFrame:
        return pd.DataFrame(self.detect(select, ignore))

    def summary(self, findings: list[dict] | Findings | None = None) -> dict:
        return summarize(self.con, findings if findings is not None else self.find())

    def quarantine_rows(self, limit: int | None = None) -> list[dict]:
        return quarantine_rows(self.con, limit)

    def quarantine_texts(self) -> Iterator[str]:
        """Every quarantined line as a JSON object's text, in order, fetched in batches (as
        Findings.json_texts: the connection serves nothing else until the last one is read)."""
        result = self.con.execute("SELECT CAST(to_json({'file': file, 'line': line, 'reason': reason, 'raw': raw}) "
                                  "AS VARCHAR) FROM quarantine ORDER BY file, line")
        while rows := result.fetchmany(BATCH):
            yield from (text for (text,) in rows)

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

    def close(self) -> None:
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
    """Ingest log files, directories or globs (into `db` if given, else in memory)."""
    if isinstance(logs, (str, Path)):
        logs = [logs]
    if isinstance(mapping, dict):
        mapping = parse_mapping(mapping)
    elif isinstance(mapping, (str, Path)):
        mapping = load_mapping(mapping)
    files = discover([str(p) for p in logs], input_format)
    con = connect(str(db) if db is not None else None, memory_limit=memory_limit, threads=threads)
    try:
        ingested = ingest(con, files, mapping, persistent=db is not None,
                          max_line_bytes=max_line_bytes, on_file=on_file)
    except BaseException:
        con.close()
        raise
    return Replay(con, ingested, settings)


def summarize(con, findings: list[dict] | Findings) -> dict:
    """Counts over the whole database (what was read, also when detectors saw one task), not only
    this run's files."""
    files, lines = con.execute("SELECT count(DISTINCT realpath), coalesce(sum(lines), 0) FROM ingested_files").fetchone()
    events, tasks = con.execute(f"SELECT count(*), count(DISTINCT task_id) FROM {_stored(con)}").fetchone()
    quarantined = con.execute("SELECT count(*) FROM quarantine").fetchone()[0]
    return {"files": files, "lines": int(lines), "events": events, "quarantined": quarantined,
            "tasks": tasks, "findings": findings.count() if isinstance(findings, Findings) else len(findings)}


def _stored(con) -> str:
    """The stored events' table by its full name (Replay.restrict shadows the short one)."""
    database = con.execute("SELECT current_database()").fetchone()[0]
    return '"' + database.replace('"', '""') + f'".main.{EVENT_ROWS}'


def quarantine_rows(con, limit: int | None = None) -> list[dict]:
    rows = con.execute("SELECT file, line, reason, raw FROM quarantine ORDER BY file, line"
                       + ("" if limit is None else " LIMIT $n"), {} if limit is None else {"n": limit}).fetchall()
    return [{"file": f, "line": n, "reason": r, "raw": raw} for f, n, r, raw in rows]
