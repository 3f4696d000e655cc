"""Run the replay detectors over the `events` table and shape what they find.

Every detector is a query in the catalogue (`nonatomic.rules.replay`); the
work happens inside DuckDB.  Python picks the detectors, binds the settings as
named parameters and materialises the shared stages once; DuckDB builds the
findings into a table (`findings.py`) that reports read in pieces.
`shape_findings` builds the same findings from rows in Python, for an engine
whose rows come back to the driver (Spark).
"""

from __future__ import annotations

import functools
import hashlib
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

from nonatomic.config import ConfigError
from nonatomic.replay import findings as table
from nonatomic.replay.findings import Findings
from nonatomic.replay.ingest.database import unordered
from nonatomic.replay.ingest.schema import EVENT_ORDER
from nonatomic.replay.report.model import cite, duration
from nonatomic.replay.settings import DEFAULT_SETTINGS, project_levels, validate_settings
from nonatomic.rules.replay import DETECTORS
from nonatomic.rules.replay.base import Detector
from nonatomic.rules.replay.views import SAME_TIME_IN_A_TASK, STAGES, Stage, events_stage
from nonatomic.rules.write_levels import NameLevels

_RAW = "nr_rows"
"""One detector's rows, numbered (`rid`), while its findings are built."""


def run_detectors(
    con,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    settings: Mapping[str, object] | None = None,
) -> list[dict]:
    """Findings of the chosen detectors over `events` in `con`, sorted deterministically.

    `select`/`ignore` hold codes or prefixes (`NR1` is NR1xx); `settings`
    overrides DEFAULT_SETTINGS (e.g. `non_retryable`, `min_backoff_ms`).
    """
    return build_findings(con, select, ignore, settings).all()


def build_findings(
    con,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    settings: Mapping[str, object] | None = None,
    tasks: Iterable[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    levels: NameLevels | None = None,
) -> Findings:
    """Run the chosen detectors into the findings table of `con` (replacing an earlier run's),
    keeping findings of `tasks` (all when None) at or after `since` and before `until`;
    `levels` grades the findings of writes (default: the project's tool registry)."""
    detectors = choose(select, ignore)
    params = {**DEFAULT_SETTINGS, **validate_settings(settings or {})}
    stages = stages_for(
        detectors, lambda: events_stage(EVENT_ORDER, con.execute(SAME_TIME_IN_A_TASK).fetchone()[0]))
    con.execute(table.DDL)
    # Stages are sets: letting DuckDB write them in any order saves re-ordering window output.
    with unordered(con):
        try:
            _run(con, detectors, stages, params, table.filters(tasks, since, until), levels or project_levels())
        finally:
            con.execute(f"DROP TABLE IF EXISTS {_RAW}")
            for stage in reversed(stages):
                con.execute(f"DROP {_kind(stage)} IF EXISTS {stage.name}")
    return Findings(con)


def shape_findings(raw: list[tuple[Detector, dict]], evidence: Mapping[int, dict],
                   levels: NameLevels | None = None) -> list[dict]:
    """Findings from detector rows and the evidence of their witnesses (`witness_ids`), sorted,
    as the DuckDB engine builds them in SQL (tests pin the two equal).  `levels` grades the
    findings of writes (default: the project's tool registry, write_levels)."""
    return [finding for finding, _ in shape_grouped(raw, evidence, levels)]


def shape_grouped(raw: list[tuple[Detector, dict]], evidence: Mapping[int, dict],
                  levels: NameLevels | None = None) -> list[tuple[dict, tuple]]:
    """Each finding of shape_findings with what the reports group it by: (kind, subject)."""
    levels = levels or project_levels()
    shaped = []
    for detector, row in raw:
        subject = table.subject_field(detector)
        group = (subject[1], row[subject[0]]) if subject else ("task", row["task_id"])
        shaped.append((_finding(detector, row, evidence, levels), group))
    return sorted(shaped, key=lambda pair: _sort_key(pair[0]))


def _kind(stage: Stage) -> str:
    return "TABLE" if stage.materialized else "VIEW"


def _run(con, detectors: list[Detector], stages: list[Stage], params: dict, where: tuple[str, dict],
         levels: NameLevels) -> None:
    # Each detector runs as soon as its stages exist and a stage is dropped after its last
    # reader, so the lock stages are gone before the attempts are built (a lower peak).
    built: list[Stage] = []
    for i, detector in enumerate(detectors):
        for stage in stages:
            if stage not in built and _needed(stage, [detector], stages, built):
                con.execute(f"CREATE OR REPLACE TEMP {_kind(stage)} {stage.name} AS {stage.sql}")
                built.append(stage)
                _drop_unneeded(con, detectors[i:], stages, built)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_RAW} AS SELECT ROW_NUMBER() OVER () AS rid, * "
                    f"FROM ({detector.sql})", {p: params[p] for p in detector.parameters()})
        columns = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {_RAW})").fetchall())
        bound = dict(where[1])
        if table.graded(detector, columns):
            # the registry is Python's: each distinct tool is looked up once, the severe ones bound as a list
            tools = con.execute(f"SELECT DISTINCT CAST(tool AS VARCHAR) FROM {_RAW} WHERE tool IS NOT NULL").fetchall()
            bound["severe_tools"] = [t for (t,) in tools if levels.write_severity(t) == "error"]
        con.execute(table.insert_sql(detector, _RAW, columns, where[0]), bound)
        _drop_unneeded(con, detectors[i + 1:], stages, built)


def _needed(stage: Stage, readers: list[Detector], stages: list[Stage], built: list[Stage]) -> bool:
    """Does one of `readers` read the stage, directly or through a stage not yet built?"""
    # Detector SQL may read stages beyond its `requires` (shared snippets read nr_ops).
    return any(re.search(rf"\b{stage.name}\b", d.sql) for d in readers) or any(
        stage.name in s.requires and s not in built and _needed(s, readers, stages, built) for s in stages)


def _drop_unneeded(con, readers: list[Detector], stages: list[Stage], built: list[Stage]) -> None:
    for stage in list(built):
        if not _needed(stage, readers, stages, built):
            con.execute(f"DROP {_kind(stage)} {stage.name}")
            built.remove(stage)


def choose(select: Iterable[str] | None, ignore: Iterable[str] | None) -> list[Detector]:
    """Detectors whose code matches a `select` entry (default: those on by default), minus `ignore`."""

    def matches(code: str, patterns: Iterable[str]) -> bool:
        return any(code.startswith(p.strip().upper()) for p in patterns if p.strip())

    for pattern in [*(select or ()), *(ignore or ())]:
        check_code(pattern)
    chosen = [
        d
        for d in DETECTORS.values()
        if (d.default_on if select is None else matches(d.code, select))
        and not matches(d.code, ignore or ())
    ]
    return sorted(chosen, key=lambda d: d.code)


def check_code(pattern: str) -> None:
    """A ConfigError (exit code 2) unless `pattern` is the code or a prefix of some detector:
    a typo must not run nothing and pass."""
    spec = pattern.strip().upper()
    if not spec or any(code.startswith(spec) for code in DETECTORS):
        return
    if spec.startswith("NA"):
        raise ConfigError(f"{pattern.strip()!r} is a lint rule code: replay runs the NR detectors "
                          f"(lint code with `nonatomic lint --select {spec}`)")
    raise ConfigError(f"unknown detector code or prefix: {pattern.strip()!r} (see `nonatomic rules`)")


def stages_for(detectors: list[Detector], nr_events: Callable[[], Stage]) -> list[Stage]:
    """The stages these detectors need, dependencies first; `nr_events()` builds the engine's first stage."""
    ordered: list[Stage] = []

    def add(name: str) -> None:
        if any(s.name == name for s in ordered):
            return
        stage = nr_events() if name == "nr_events" else STAGES[name]
        for dependency in stage.requires:
            add(dependency)
        ordered.append(stage)

    for detector in detectors:
        for name in detector.requires:
            add(name)
    return ordered


def witness_ids(row: Mapping) -> list[int]:
    ids = [row["anchor_id"], *(row["witness_ids"] or ())]
    return [i for i in dict.fromkeys(ids) if i is not None]


def _finding(detector: Detector, row: dict, evidence: dict[int, dict], levels: NameLevels) -> dict:
    named = detector.named_witnesses(row["witness_ids"])
    roles: dict[int, str] = {}
    for name, event_id in named:
        roles.setdefault(event_id, name.rpartition("_")[0])
    events = sorted(
        ({**evidence[i], "role": roles.get(i, "anchor")} for i in witness_ids(row)),
        key=lambda e: (e["ts"], e["file"], e["line"]),
    )
    fields = {k: v for k, v in row.items() if k not in ("anchor_id", "witness_ids")}
    severity = fields.pop("severity", None) or detector.severity
    if detector.graded_by_write and levels.write_severity(row.get("tool")) == "error":
        severity = "error"
    template = detector.template(fields.pop("variant", None))
    values = {k: _Field(v) for k, v in fields.items()}
    finding = {
        "code": detector.code,
        "name": detector.name,
        "severity": severity,
        "task_id": row["task_id"],
        "step": row["step"],
        "message": template.format_map(values),
        "because": _because(detector, named, values, evidence),
        "ts": evidence[row["anchor_id"]]["ts"],
        "events": events,
    }
    finding["fingerprint"] = fingerprint(finding)
    return finding


def _because(detector: Detector, named: list[tuple[str, int]], values: Mapping, evidence: dict[int, dict]) -> list[str]:
    """One line per named witness, as Elle explains an anomaly: what the event shows, and where it is."""
    lines = []
    for name, clause in detector.witnesses:
        # in time order: the order of a list a detector aggregates (NR301's effects) is the engine's, not the log's
        cited = sorted((evidence[i] for n, i in named if n == name), key=lambda e: (e["ts"], e["file"], e["line"]))
        where = ", ".join(cite(e) for e in cited)
        if where:
            lines.append(f"because {clause.format_map(values)} ({where})")
    return lines


def fingerprint(finding: Mapping) -> str:
    """A stable id of a finding: its code, task, step and witness lines (not event ids,
    which depend on ingest order, nor the directory the logs were read from)."""
    witnesses = sorted(f"{_file_name(e['file'])}:{e['line']}" for e in finding["events"])
    key = "\x1f".join([finding["code"], finding["task_id"], str(finding["step"]), *witnesses])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1024)
def _file_name(file: str) -> str:
    # Cached: a run's findings cite a few files many times over.
    return posixpath.basename(str(file).replace("\\", "/"))


def _sort_key(finding: dict) -> tuple:
    step = finding["step"]
    return (finding["task_id"], finding["ts"], finding["code"], step is not None, step or 0, finding["fingerprint"])


class _Field:
    """A message field for str.format: `:dur` (milliseconds as a human duration), None shown as '?'.

    A wrapper keeps formatting in C's str.format (a string.Formatter subclass
    parses every template in Python, the larger part of shaping many findings).
    """

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def __format__(self, format_spec: str) -> str:
        if self.value is None:
            return "?"
        if format_spec == "dur":
            return duration(self.value)
        return format(self.value, format_spec)
