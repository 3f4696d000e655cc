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

import click

from nonatomic.replay.report.model import (TEXT_QUARANTINE_SHOWN, CodeGroups, Row, Timeline, clock, evidence, extras,
                                           seconds, when)

_GLYPHS = {"task_start": "▶", "task_end": "■", "start": "┌", "acquire": "┏", "release": "┗", "expiry": "╧"}
_ENDS = {"ok": "└", "failed": "✗", "unknown": "?"}
_INSTANTS = {"ok": "●", "failed": "✗", "unknown": "?"}
_STATES = {"held": "┃", "flight": "│", "dangling": "┆", None: " "}
_COLOURS = {"ok": "green", "failed": "red", "unknown": "yellow"}
LEGEND = ("┌ └ start/end of an op  ● instant  ✗ failed  ? outcome unknown  ┆ may still take effect  "
          "┏ ┃ ┗ lock held  ╧ lease ran out  ▶ ■ task start/end  ◀ [n] finding n")
EXTRAS_WIDTH = 80
"""Extra log fields are cut here: a row stays one line."""

# C0/C1 controls (ESC starts terminal sequences) and the bidi overrides of "Trojan Source".
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(value: object) -> str:
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                       str(value))


def render(timelines: list[Timeline], omitted_tasks: int = 0, *, color: bool = False) -> str:
    style = click.style if color else (lambda text, **_: text)
    out: list[str] = []
    for timeline in timelines:
        out += _timeline(timeline, style) + [""]
    if omitted_tasks:
        out.append(f"… {omitted_tasks} more task(s) with findings not drawn: name them with --task")
    if timelines:
        out.append(style(LEGEND, dim=True))
    return "\n".join(out) + "\n"


def _timeline(t: Timeline, style) -> list[str]:
    out = [style(f"task {clean(t.task_id)}", bold=True) + f": {t.headline()}",
           "  lanes: " + " · ".join(f"{lane.key} {clean(lane.label)}" for lane in t.lanes), ""]
    widths = [len(lane.key) for lane in t.lanes]
    number = max(len(str(t.events_total)), 1)
    offsets = [seconds(row.ts_ms - t.start_ms) for row in t.rows]
    offset = max(len("+s"), *(len(o) for o in offsets))
    lanes = " ".join(lane.key.ljust(w) for lane, w in zip(t.lanes, widths))
    out.append(f"  {'#'.rjust(number)}  {'time (UTC)':12}  {'+s'.rjust(offset)}  {lanes}  event")
    for row, states, moment in zip(t.rows, t.lane_states(), offsets):
        # pad outside the styling: escape codes have no width
        cells = " ".join(_cell(row, i, state, style) + " " * (w - 1) for i, (state, w) in enumerate(zip(states, widths)))
        if row.kind == "gap":
            out.append(style(f"  {'…'.rjust(number)}  {'':12}  {'':>{offset}}  {cells}  {clean(row.text)}", dim=True))
            continue
        line = (f"  {str(row.pos or '').rjust(number)}  {clock(row.ts_ms)}  {moment.rjust(offset)}  {cells}  "
                + style(clean(row.text), fg=_colour(row)))
        if row.marks:
            line += "  " + style("◀ " + " ".join(f"[{n}]" for n in row.marks), fg="red", bold=True)
        if extras(row):
            line += "  " + style(_extras(row), dim=True)
        out.append(line)
    out.append("")
    for n, f in enumerate(t.findings, 1):
        out.append(style(f"  [{n}] {f['code']} {f['name']} ({f['severity']})", fg="red", bold=True)
                   + f" step {clean(f.get('step') if f.get('step') is not None else '-')}: {clean(f['message'])} "
                   f"({clean(evidence(f))})")
    return out


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


def report(summary: dict, groups: list[CodeGroups], quarantine: list[dict]) -> str:
    """Findings by code, then tool, lock or task: counts, the first few of each group in full."""
    out = []
    for code in groups:
        out.append(f"{code.code} {code.name}: {code.count} finding(s) in {len(code.groups) + code.hidden_groups} "
                   f"group(s)")
        for group in code.groups:
            out.append(f"  {group.subject_kind} {clean(group.subject)}: {group.count} finding(s), {group.severity}")
            for f in group.shown:
                out.append(f"    {clean(_where(f))}: {f['code']} {f['name']} [{f['severity']}] "
                           f"task {clean(f['task_id'])} step {clean(_step(f))} at {clean(when(f.get('ts')))}: "
                           f"{clean(f['message'])}")
                out.extend("        " + clean(line) for line in f.get("because") or ())
            if group.more:
                out.append(f"    ... and {group.more} more")
        if code.hidden_groups:
            out.append(f"  ... and {code.hidden_groups} more group(s) with {code.hidden_findings} finding(s)")
    if any(g.more for code in groups for g in code.groups) or any(code.hidden_groups for code in groups):
        out.append("(--format json lists every finding)")
    if quarantine:
        out.append(f"Quarantined {summary['quarantined']} line(s):")
        out.extend("  " + clean(f"{q['file']}:{q['line']}: {q['reason']}") for q in quarantine[:TEXT_QUARANTINE_SHOWN])
        if summary['quarantined'] > len(quarantine):
            out.append(f"  ... and {summary['quarantined'] - len(quarantine)} more (--format json lists all)")
    out.append(_counts_line(summary))
    return "\n".join(out) + "\n"


def _step(finding: dict) -> object:
    return "-" if finding.get("step") is None else finding["step"]


def _where(finding: dict) -> str:
    events = finding.get("events") or []
    return f"{events[0]['file']}:{events[0]['line']}" if events else "-"


def _counts_line(summary: dict) -> str:
    return (f"{summary['files']} file(s), {summary['lines']} line(s) = {summary['events']} event(s) "
            f"+ {summary['quarantined']} quarantined; {summary['tasks']} task(s); "
            f"{summary['findings']} finding(s)")
