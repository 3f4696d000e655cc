"""Timelines as Markdown for an incident ticket: an event table and a Mermaid sequence diagram.

The diagram has one participant per lane, its statements in the table's order
(a sequence diagram is not to scale: a long quiet stretch is a note saying
how long).  An op is an activation bar on its
step from start to end; a write whose outcome is unknown keeps its bar until
a verify settles it (or to the end of the diagram), and a lease keeps the
lock's bar until release or expiry.  Each message starts with the event's
number in the table, so the two read side by side.

Log values are escaped twice over: for Markdown (a value cannot close a table
cell or start a link) and for Mermaid, where everything but letters, digits
and plain punctuation becomes an entity code (`#35;`), so a value cannot end
a message, start a statement or smuggle in HTML.
"""

from __future__ import annotations

import re

from nonatomic.replay.report.model import (TEXT_QUARANTINE_SHOWN, CodeGroups, Row, Timeline, clock, duration, evidence,
                                           extras, seconds, summary_value, when)
from nonatomic.replay.report.scale import Scale
from nonatomic.replay.report.text import clean

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")
_MERMAID_PLAIN = frozenset(" _.,/=+()'-→⚠…")


def md(value: object) -> str:
    """A value as literal text inside a Markdown table cell (every Markdown output uses this one).
    Control and bidi characters are escaped as for a terminal: Markdown is read in one too."""
    return _MD_SPECIAL.sub(r"\\\1", clean(" ".join(str(value).split())))


def mermaid(value: object) -> str:
    """A value as literal text in a Mermaid label, message or note."""
    return "".join(ch if ch.isalnum() or ch in _MERMAID_PLAIN else f"#{ord(ch)};" for ch in str(value))


def render(timelines: list[Timeline], omitted_tasks: int = 0) -> str:
    out: list[str] = []
    for t in timelines:
        out += _timeline(t)
    if omitted_tasks:
        out += [f"{omitted_tasks} more task(s) with findings are not drawn: name them with `--task`.", ""]
    return "\n".join(out)


def _timeline(t: Timeline) -> list[str]:
    out = [f"## Task {md(t.task_id)}", "", md(t.headline()) + ".", "",
           "Lanes: " + " · ".join(f"**{md(lane.key)}** {md(lane.label)}" for lane in t.lanes) + ".", "",
           "| # | time (UTC) | +s | lane | event | findings | extra |", "|--:|---|--:|---|---|---|---|"]
    for row in t.rows:
        lane = "all" if row.lane is None else md(t.lanes[row.lane].key)
        extra = " ".join(f"{k}={v}" for k, v in extras(row).items())
        out.append(f"| {row.pos if row.kind == 'event' else ''} | {'' if row.kind == 'gap' else clock(row.ts_ms)} | "
                   f"{'' if row.kind == 'gap' else seconds(row.ts_ms - t.start_ms)} | {lane} | {md(row.text)} | "
                   f"{' '.join(f'[{n}]' for n in row.marks)} | {md(extra)} |")
    out += ["", "```mermaid", *sequence(t), "```", ""]
    if t.findings:
        out += ["| finding | code | name | severity | step | evidence | message |", "|---|---|---|---|--:|---|---|"]
        out += [f"| [{n}] | {f['code']} | {f['name']} | {f['severity']} | {md(_step(f))} | {md(evidence(f))} "
                f"| {'<br>'.join(md(line) for line in [f['message'], *f.get('because', ())])} |"
                for n, f in enumerate(t.findings, 1)]
        out.append("")
    return out


def _step(finding: dict) -> str:
    return "" if finding.get("step") is None else str(finding["step"])


def sequence(t: Timeline) -> list[str]:
    """The Mermaid `sequenceDiagram` lines of a timeline."""
    ids = ["T"] + [("L" if lane.key.startswith("L") else "S") + str(i) for i, lane in enumerate(t.lanes) if i]
    out = ["sequenceDiagram"]
    out += [f"    participant {pid} as {mermaid(lane.label if i else f'task {t.task_id}')}"
            for i, (pid, lane) in enumerate(zip(ids, t.lanes))]
    opens, closes = _activations(t)
    last_witness = {n: i for i, row in enumerate(t.rows) for n in row.marks}
    folds = {s.t1: s for s in Scale(t.times(), t.busy(), 0, 1).folds}
    everyone = f"{ids[0]},{ids[-1]}" if len(ids) > 1 else ids[0]
    for i, row in enumerate(t.rows):
        fold = folds.pop(row.ts_ms, None) if row.kind != "gap" else None
        if fold is not None:
            out.append(f"    Note over {everyone}: {mermaid(f'… quiet for {duration(fold.t1 - fold.t0)} …')}")
        out += ["    " + line for line in _statement(row, ids)]
        if any(s.dangling and s.end == i for s in t.spans if s.kind != "lease"):
            out.append(f"    Note over {ids[row.lane]}: outcome unknown, may still take effect")
        out += [f"    activate {ids[lane]}" for lane in opens.get(i, ())]
        out += [f"    deactivate {ids[lane]}" for lane in closes.get(i, ())]
        out += [f"    Note over {ids[row.lane or 0]}: {mermaid(f'[{n}] {clause}')}" for n, _k, clause in row.because]
        for n in sorted(n for n, at in last_witness.items() if at == i):
            f = t.findings[n - 1]
            out.append(f"    Note over {ids[row.lane or 0]}: {mermaid(f'⚠ [{n}] ' + f['code'] + ' ' + f['name'])}")
    return out


def _statement(row: Row, ids: list[str]) -> list[str]:
    here = ids[row.lane] if row.lane is not None else None
    text = mermaid((f"{row.pos}. " if row.kind == "event" else "") + row.text
                   + ("".join(f" ⚠ [{n}]" for n in row.marks)))
    if row.kind == "gap":
        return [f"Note over {ids[0]},{ids[-1]}: {text}" if len(ids) > 1 else f"Note over {ids[0]}: {text}"]
    if row.kind in ("expiry", "foreign"):  # no message: nothing of this task's passed
        return [f"Note over {here}: {text}"]
    if row.role == "end":
        return [f"{here}{'-->>' if row.outcome in ('ok', 'other') else '--x'}T: {text}"]
    return [f"T{'-x' if row.outcome in ('failed', 'unknown') else '->>'}{here}: {text}"]


def _activations(t: Timeline) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Rows where a lane's bar starts and where it ends: an op from start to end (or to the
    verify that settles it, or never when nothing does), a lease from acquire to its end."""
    opens: dict[int, list[int]] = {}
    closes: dict[int, list[int]] = {}
    for span in t.spans:
        stop = span.settled if span.dangling else span.end
        if span.kind != "lease" and not span.dangling and span.end == span.start:
            continue  # an instant with a known outcome has no bar
        opens.setdefault(span.start, []).append(span.lane)
        if stop is not None:
            closes.setdefault(stop, []).append(span.lane)
    return opens, closes


def report(summary: dict, groups: list[CodeGroups], quarantine: list[dict]) -> str:
    """Findings by code, then tool, lock or task: a table of the groups, then the first few of each."""
    out = ["# nonatomic replay", "", "| " + " | ".join(summary) + " |",
           "|" + "---|" * len(summary),
           "| " + " | ".join(md(summary_value(k, v)) for k, v in summary.items()) + " |", ""]
    out += ["## Findings", ""]
    if not groups:
        out.append("No findings.")
    for code in groups:
        out += [f"### {code.code} {code.name} ({code.count})", "",
                "| group | findings | severity | listed |", "|---|--:|---|--:|"]
        out += [f"| {group.subject_kind} {md(group.subject)} | {group.count} | {group.severity} | {len(group.shown)} |"
                for group in code.groups]
        if code.hidden_groups:
            out.append(f"| {code.hidden_groups} more group(s) | {code.hidden_findings} | | 0 |")
        out.append("")
        for group in code.groups:
            if not group.shown:
                continue
            out += [f"#### {group.subject_kind} {md(group.subject)}", "",
                    "| task | step | ts | evidence | message |", "|---|---|---|---|---|"]
            out += ["| " + " | ".join(md(v) for v in (f["task_id"], _step(f), when(f.get("ts")), evidence(f)))
                    + " | " + "<br>".join(md(line) for line in [f["message"], *f.get("because", ())]) + " |"
                    for f in group.shown]
            if group.more:
                out += ["", f"... and {group.more} more (`--format json` lists every finding)."]
            out.append("")
    if quarantine:
        out += ["", "## Quarantine", "", "| file | line | reason |", "|---|---|---|"]
        out += [f"| {md(q['file'])} | {md(q['line'])} | {md(q['reason'])} |"
                for q in quarantine[:TEXT_QUARANTINE_SHOWN]]
        if summary['quarantined'] > len(quarantine):
            out += ["", f"... and {summary['quarantined'] - len(quarantine)} more (`--format json` lists all)."]
    return "\n".join(out) + "\n"
