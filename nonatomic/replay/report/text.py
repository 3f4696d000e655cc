"""Timelines for a terminal or a CI log: one row per event, one narrow column per lane.

    #  time (UTC)    +s      T 1 L1  event
    3  10:00:00.200   0.200    ┌ ┃   call refund_payment order:1 #1 start
    4  10:00:10.200  10.200    ? ┃   call refund_payment order:1 #1 end → timeout 504  ◀ [2]

Colour only when asked (the CLI asks on a TTY).  Log values are printed with
control and bidi characters escaped, so a log line cannot move the cursor,
recolour the terminal or reorder what the reader sees.
"""

from __future__ import annotations

import json
import re
import textwrap

import click

from nonatomic.replay.report.model import (TEXT_QUARANTINE_SHOWN, CodeGroups, Row, Timeline, changes_line, cite, clock,
                                           duration, evidence, extras, seconds, spans_line, when)
from nonatomic.replay.report.scale import Scale
from nonatomic.rules.severity import COLOURS as SEVERITY_COLOURS

_GLYPHS = {"task_start": "▶", "task_end": "■", "start": "┌", "acquire": "┏", "release": "┗", "expiry": "╧"}
_ENDS = {"ok": "└", "failed": "✗", "unknown": "?"}
_INSTANTS = {"ok": "●", "failed": "✗", "unknown": "?"}
_STATES = {"held": "┃", "flight": "│", "dangling": "┆", None: " "}
_COLOURS = {"ok": "green", "failed": "red", "unknown": "yellow"}
LEGEND = ("┌ └ start/end of an op  ● instant  ✗ failed  ? outcome unknown  ┆ may still take effect  "
          "┏ ┃ ┗ lock held  ╧ lease ran out  ▶ ■ task start/end  ◀ [n] finding n  ~ quiet stretch folded  "
          "rows without # are another task's lock events or lease ends")
EXTRAS_WIDTH = 80
"""Extra log fields are cut here: a row stays one line."""
EVENT_MIN = 30
"""Columns kept for the event text when lanes compete for a narrow terminal."""

# C0/C1 controls (ESC starts terminal sequences) and the bidi overrides of "Trojan Source".
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(value: object) -> str:
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                       str(value))


def render(timelines: list[Timeline], omitted_tasks: int = 0, *, color: bool = False, width: int | None = None) -> str:
    """The timelines for a terminal; with `width`, every line fits in that many columns."""
    style = click.style if color else (lambda text, **_: text)
    out: list[str] = []
    for timeline in timelines:
        out += _timeline(timeline, style, width) + [""]
    if omitted_tasks:
        out += _wrap(f"… {omitted_tasks} more task(s) with findings not drawn: name them with --task", width)
    if timelines:
        out += [style(line, dim=True) for line in _wrap(LEGEND, width, "  ")]
    return "\n".join(out) + "\n"


def _wrap(text: str, width: int | None, indent: str = "      ") -> list[str]:
    return [text] if width is None else textwrap.wrap(text, width, subsequent_indent=indent) or [""]


def _timeline(t: Timeline, style, width: int | None) -> list[str]:
    number = max(len(str(t.events_total)), 1)
    offsets = [seconds(row.ts_ms - t.start_ms) for row in t.rows]
    offset = max(len("+s"), *(len(o) for o in offsets))
    prefix = 2 + number + 2 + 12 + 2 + offset + 2
    shown = _lanes_shown(t, None if width is None else width - prefix - EVENT_MIN)
    keys = [t.lanes[i].key for i in shown] + (["+"] if len(shown) < len(t.lanes) else [])
    widths = [len(k) for k in keys]
    hidden = [t.lanes[i].key for i in range(len(t.lanes)) if i not in shown]
    note = f" (lanes {', '.join(hidden)} share column +)" if hidden else ""
    title = f"task {clean(t.task_id)}"
    headline = _wrap(f"{title}: {t.headline()}", width)
    out = [style(title, bold=True) + headline[0][len(title):], *headline[1:],
           *_wrap("  lanes: " + " · ".join(f"{lane.key} {clean(lane.label)}" for lane in t.lanes) + note, width), ""]
    out.append(f"  {'#'.rjust(number)}  {'time (UTC)':12}  {'+s'.rjust(offset)}  "
               f"{' '.join(k.ljust(w) for k, w in zip(keys, widths))}  event")
    room = None if width is None else width - prefix - sum(widths) - len(widths) - 1
    folds = {s.t1: s for s in Scale(t.times(), t.busy(), 0, 1).folds}
    columns = [[i] for i in shown] + ([[i for i in range(len(t.lanes)) if i not in shown]] if hidden else [])

    def cells(row: Row, states: list[str | None]) -> str:
        # pad outside the styling: escape codes have no width
        return " ".join(_column(row, lanes, states, style) + " " * (w - 1) for lanes, w in zip(columns, widths))

    for i, (row, states, moment) in enumerate(zip(t.rows, t.lane_states(), offsets)):
        fold = folds.pop(row.ts_ms, None) if row.kind != "gap" else None
        if fold is not None:  # what is held or in flight passes through the quiet stretch
            quiet = _fit(f"~ quiet for {duration(fold.t1 - fold.t0)} (folded) ~", room)
            out.append(f"  {'':>{number}}  {'':12}  {'':>{offset}}  {cells(_QUIET, t.passing_before(i))}  "
                       + style(quiet, dim=True))
        if row.kind == "gap":
            out.append(style(f"  {'…'.rjust(number)}  {'':12}  {'':>{offset}}  {cells(row, states)}  "
                             f"{_fit(clean(row.text), room)}",
                             dim=True))
            continue
        line = f"  {str(row.pos or '').rjust(number)}  {clock(row.ts_ms)}  {moment.rjust(offset)}  {cells(row, states)}  "
        marks = "◀ " + " ".join(f"[{n}]" for n in row.marks) if row.marks else ""
        text = clean(row.text)
        if room is not None:  # the marks matter more than the end of a long event text
            text = _fit(text, max(8, room - (len(marks) + 2 if marks else 0)))
        line += style(text, fg=_colour(row))
        left = None if room is None else room - len(text)
        if marks:
            line += "  " + style(marks, fg="red", bold=True)
            left = None if left is None else left - len(marks) - 2
        if extras(row) and (left is None or left > 8):
            line += "  " + style(_extras(row) if left is None else _fit(_extras(row), left - 2), dim=True)
        out.append(line)
    out.append("")
    for n, f in enumerate(t.findings, 1):
        head = f"  [{n}] {f['code']} {f['name']} ({f['severity']})"
        rest = (f" step {clean(f.get('step') if f.get('step') is not None else '-')}: {clean(f['message'])} "
                f"({clean(evidence(f))})")
        lines = _wrap(head + rest, width)
        out.append(style(head, fg="red", bold=True) + lines[0][len(head):])
        out += lines[1:]
        for line in f.get("because") or ():  # one per named witness: what it shows, and where
            out += _wrap("      " + clean(line), width, "        ")
    return out


_QUIET = Row("gap", None, 0, "")
"""A row in no lane: its cells show only what passes through."""


def _lanes_shown(t: Timeline, room: int | None) -> list[int]:
    """The lanes that get a column of their own in `room` columns; the rest share one (`+`).
    The task's lane and the lanes of the findings' witnesses come first."""
    if room is None or sum(len(lane.key) + 1 for lane in t.lanes) <= room:
        return list(range(len(t.lanes)))
    witnessed = {row.lane for row in t.rows if row.marks}
    order = sorted(range(len(t.lanes)), key=lambda i: (i != 0, i not in witnessed, i))
    shown, used = [], 2  # the shared column
    for i in order:
        if used + len(t.lanes[i].key) + 1 > room:
            break
        shown.append(i)
        used += len(t.lanes[i].key) + 1
    return sorted(shown)


def _fit(text: str, room: int | None) -> str:
    return text if room is None or len(text) <= room else text[: max(room - 1, 0)] + "…"


def _column(row: Row, lanes: list[int], states: list[str | None], style) -> str:
    """One column's glyph: the row's own mark when it is in one of `lanes`, else what passes through them."""
    if row.lane in lanes:
        return _cell(row, row.lane, states[row.lane], style)
    return _STATES[min((states[i] for i in lanes), key=list(_STATES).index)]  # _STATES: the strongest first


def _cell(row: Row, lane: int, state: str | None, style) -> str:
    if row.lane != lane:
        return _STATES[state]
    glyph = _GLYPHS.get(row.role) or (_ENDS if row.role == "end" else _INSTANTS).get(row.outcome, "└" if row.role == "end" else "●")
    if row.role in ("acquire", "release") and row.outcome == "failed":
        glyph = "✗"
    return style(glyph, fg=_colour(row))


def _colour(row: Row) -> str | None:
    # a start says nothing yet about how the op went; an acquire's success is the norm
    return _COLOURS.get(row.outcome) if row.role not in ("start", "acquire") or row.outcome == "failed" else None


def _extras(row: Row) -> str:
    text = clean(" ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in extras(row).items()))
    return text if len(text) <= EXTRAS_WIDTH else text[: EXTRAS_WIDTH - 1] + "…"


def report(summary: dict, groups: list[CodeGroups], quarantine: list[dict], *, color: bool = False) -> str:
    """The replay report for a terminal: findings by code, then tool, lock or task (counts, the first
    few of each group in full with their witness lines), the first quarantined lines, the counts;
    every value from a log passes through `clean`."""
    style = click.style if color else (lambda text, **_: text)
    out = []
    for code in groups:
        out.append(f"{style(f'{code.code} {code.name}', bold=True)}: {code.count} finding(s) in "
                   f"{len(code.groups) + code.hidden_groups} group(s)")
        for group in code.groups:
            out.append(f"  {group.subject_kind} {clean(group.subject)}: {group.count} finding(s), {group.severity}")
            for f in group.shown:
                out.append(f"    {style(_where(f), bold=True)}: "
                           f"{style(f['code'], fg=SEVERITY_COLOURS.get(f['severity']), bold=True)} {f['name']} "
                           f"[{f['severity']}] task {clean(f['task_id'])} step {clean(_step(f))} "
                           f"at {clean(when(f.get('ts')))}: {clean(f['message'])}")
                out.extend("        " + clean(line) for line in f.get("because") or ())
            if group.more:
                out.append(f"    ... and {group.more} more")
        if code.hidden_groups:
            out.append(f"  ... and {code.hidden_groups} more group(s) with {code.hidden_findings} finding(s)")
    if any(g.more for code in groups for g in code.groups) or any(code.hidden_groups for code in groups):
        out.append("(--format json lists every finding)")
    if quarantine:
        out.append(style(f"Quarantined {summary['quarantined']} line(s):", fg="yellow"))
        out.extend(f"  {clean(q['file'])}:{q['line']}: {clean(q['reason'])}" for q in quarantine[:TEXT_QUARANTINE_SHOWN])
        if summary['quarantined'] > len(quarantine):
            out.append(f"  ... and {summary['quarantined'] - len(quarantine)} more (--format json lists all)")
    out.append(_counts_line(summary))
    return "\n".join(out) + "\n"


def _step(finding: dict) -> object:
    return "-" if finding.get("step") is None else finding["step"]


def _where(finding: dict) -> str:
    events = finding.get("events") or []
    return clean(cite(events[0])) if events else "-"


def _counts_line(summary: dict) -> str:
    line = (f"{summary['files']} file(s), {summary['lines']} line(s) = {summary['events']} event(s) "
            f"+ {summary['quarantined']} quarantined; {summary['tasks']} task(s); "
            f"{summary['findings']} finding(s)")
    if "spans" in summary:  # read from traces: the spans, accounted for
        line = f"{clean(spans_line(summary['spans']))}\n{line}"
    changes = summary.get("changes")  # a kept database: what this run did to each file
    if changes:
        line += "\nThis run: " + clean(changes_line(changes))
    return line
