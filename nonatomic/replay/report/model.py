"""What the renderers draw: a task's timeline (lanes, rows, spans) and the values they share.

`nonatomic.replay.timeline` builds timelines from the database; the renderers
(text, markdown, html, svg) only read them, so none of them touches DuckDB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timezone

TEXT_QUARANTINE_SHOWN = 20
"""Quarantined lines listed in text/Markdown/HTML; JSON lists them all."""
CHANGED_FILES_SHOWN = 5
"""Grown or replaced files of a kept database named in a human report's summary."""
GROUP_SHOWN = 5
"""Findings shown in full per group (a code and one tool, lock or task) in text/Markdown/HTML."""
GROUPS_SHOWN = 20
"""Groups listed per code; the rest are counted.  JSON lists every finding."""

@dataclass
class Group:
    """Findings of one code about one subject (a tool, a lock or a task): a count and the first few."""

    code: str
    name: str
    severity: str
    """The most severe in the group."""
    subject_kind: str
    """tool, lock or task."""
    subject: str | None
    count: int
    shown: list[dict] = field(default_factory=list)

    @property
    def more(self) -> int:
        return self.count - len(self.shown)


@dataclass
class CodeGroups:
    """One code's findings in groups, the largest first; groups past the listed ones are only counted."""

    code: str
    name: str
    count: int
    groups: list[Group]
    hidden_groups: int = 0
    hidden_findings: int = 0


@dataclass(frozen=True)
class Lane:
    key: str
    """Short name for narrow columns: T (the task), a step number, L1, L2 ... (a lock's owners)."""
    label: str
    other_task: str | None = None
    """A lock owner's lane of another task: that task's id (its leases of this task's lock)."""


@dataclass
class Row:
    kind: str
    """`event` (a log line of the task), `foreign` (another task's lock event on one of the task's
    locks), `expiry` (a lease ran out: no log line) or `gap` (events left out)."""
    lane: int | None
    """Index into Timeline.lanes; None for a gap, which spans every lane."""
    ts_ms: int
    text: str
    role: str = "instant"
    """How the event is drawn: task_start, task_end, start, end, instant, acquire, release, expiry, gap."""
    outcome: str = "other"
    pos: int | None = None
    """The event's position in its task (1-based, the engine's event order); a gap's first left-out one."""
    omitted: int = 0
    event: dict = field(default_factory=dict)
    """The log line: canonical fields that are set, `ts` as RFC 3339, then the extra fields."""
    marks: list[int] = field(default_factory=list)
    """Numbers (1-based, in Timeline.findings) of the findings this event witnesses."""
    because: list[tuple[int, int, str]] = field(default_factory=list)
    """What this event shows for each finding it witnesses: (finding number, index of the
    line in the finding's `because`, that line without its file:line citation)."""


@dataclass(frozen=True)
class Span:
    lane: int
    kind: str
    """call, rollback, verify (an op interval) or lease."""
    start: int
    end: int | None
    """Row of the end; None: no end logged (the op or lease is still open when the log ends)."""
    outcome: str
    """ok, failed, unknown, open, other; for a lease how it ended: released, renewed, expired, open."""
    dangling: bool = False
    """The effect may still land after `end` (or the op never ended): drawn open-ended."""
    settled: int | None = None
    """Row of the verify that settles a dangling span; None: never settled."""


@dataclass
class Timeline:
    task_id: str
    start_ms: int
    end_ms: int
    start_text: str
    end_text: str
    events_total: int
    lanes: list[Lane]
    rows: list[Row]
    spans: list[Span]
    findings: list[dict]

    @property
    def events_drawn(self) -> int:
        return sum(row.kind == "event" for row in self.rows)

    def headline(self) -> str:
        drawn = "" if self.events_drawn == self.events_total else f" ({self.events_drawn} drawn)"
        return (f"{self.events_total} event(s){drawn} from {self.start_text} to {self.end_text} "
                f"({duration(self.end_ms - self.start_ms)}), {len(self.findings)} finding(s)")

    def times(self) -> list[int]:
        """The moments drawn (epoch ms), every row's."""
        return [row.ts_ms for row in self.rows]

    def busy(self) -> list[tuple[int, int]]:
        """Op intervals in epoch ms: stretches that are never folded (leases and doubtful effects may be)."""
        return [(self.rows[s.start].ts_ms, self.rows[s.end].ts_ms) for s in self.spans
                if s.kind != "lease" and s.end is not None]

    def lane_states(self) -> list[list[str | None]]:
        """Per row and lane what passes through it: `held` (a lease), `flight` (an op between
        its start and end), `dangling` (an effect that may still land), or None."""
        states: list[list[str | None]] = [[None] * len(self.lanes) for _ in self.rows]
        for lane, first, last, state in self._passes():
            for row in range(first, last):
                if _RANK[state] > _RANK[states[row][lane]]:
                    states[row][lane] = state
        return states

    def passing_before(self, row: int) -> list[str | None]:
        """Per lane what passes between row - 1 and `row` (what a folded quiet stretch there holds)."""
        states: list[str | None] = [None] * len(self.lanes)
        for lane, first, last, state in self._passes():
            if first <= row <= last and _RANK[state] > _RANK[states[lane]]:
                states[lane] = state
        return states

    def _passes(self):
        """(lane, first row, row after the last, state) of what passes through rows."""
        end = len(self.rows)
        for span in self.spans:
            if span.kind == "lease":
                yield span.lane, span.start + 1, end if span.end is None else span.end, "held"
                continue
            if span.end is not None:
                yield span.lane, span.start + 1, span.end, "flight"
            if span.dangling:
                since = span.start if span.end is None else span.end
                yield span.lane, since + 1, end if span.settled is None else span.settled, "dangling"


_RANK = {None: 0, "dangling": 1, "flight": 2, "held": 3}


def extras(row: Row) -> dict:
    """The log line's fields that are not canonical (kept by ingest, shown on demand)."""
    return row.event.get("extra") or {}


def clock(ms: int) -> str:
    """A time of day in UTC to the millisecond; the header of a timeline gives the date."""
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%H:%M:%S.%f")[:12]


def seconds(ms: int) -> str:
    """An offset from the task's first event, in seconds to the millisecond."""
    return f"{ms / 1000:.3f}"


def when(value: object) -> str:
    """A time as RFC 3339 text, `-` when there is none."""
    return value.isoformat() if isinstance(value, (datetime, date)) else str(value or "-")


def cite(event: Mapping) -> str:
    """Where an event is: `file:line`, and the span for an event read from a trace."""
    span = f" span {event['span_id']}" if event.get("span_id") else ""
    return f"{event['file']}:{event['line']}{span}"


def spans_line(spans: Mapping) -> str:
    """The spans a run read from traces, for the human formats."""
    kinds = ", ".join(f"{kind} {n}" for kind, n in spans["ignored_by_kind"].items())
    spanless = spans.get("documents_without_spans")
    return (f"{spans['read']} span(s) read = {spans['tool']} tool span(s) + {spans['ignored']} ignored"
            + (f" ({kinds})" if kinds else "") + (f"; {spanless} trace document(s) without spans" if spanless else ""))


def changes_line(changes: Mapping) -> str:
    """What a run into a kept database did to each file (new, grown, replaced, unchanged ->
    files), for the human formats: counts, and the names of the files grown or replaced."""
    def named(files: list) -> str:
        more = ", ..." if len(files) > CHANGED_FILES_SHOWN else ""
        return f" ({', '.join(files[:CHANGED_FILES_SHOWN])}{more})"

    return "; ".join(f"{change} {len(files)}" + (named(files) if change in ("grown", "replaced") else "")
                     for change, files in changes.items() if files)


def summary_value(key: str, value: object) -> object:
    """A summary value for a table cell: the nested ones (spans, changes) in words."""
    in_words = {"spans": spans_line, "changes": changes_line}.get(key)
    return in_words(value) if in_words else value


def evidence(finding: Mapping) -> str:
    return ", ".join(cite(e) for e in finding.get("events") or ()) or "-"


def duration(ms: float) -> str:
    """Milliseconds for a reader: '40 ms', '0.9 s', '2.5 min', '1.2 h'."""
    ms = float(ms)
    if abs(ms) < 100:
        return f"{ms:.0f} ms"
    if abs(ms) < 60_000:
        return f"{ms / 1000:.1f} s"
    if abs(ms) < 3_600_000:
        return f"{ms / 60_000:.1f} min"
    return f"{ms / 3_600_000:.1f} h"
