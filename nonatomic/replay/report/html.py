"""Self-contained HTML pages: the replay report and the timeline page.

One file each, no network: the stylesheet and script are inline and admitted
by hash (assets), the charts are inline SVG (svg).  Every value
from a log goes through `html.escape` (attributes too); ids and links are
built from counters, never from log values.  The report's findings table
sorts and filters with a few lines of plain JavaScript; everything else
works without it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from nonatomic import __version__
from nonatomic.replay.report.assets import CSS, SCRIPT, content_security_policy
from nonatomic.replay.report.model import (TEXT_QUARANTINE_SHOWN, CodeGroups, Row, Timeline, clock, extras, seconds,
                                           summary_value)
from nonatomic.replay.report.svg import escape_html, legend, overview, svg
from nonatomic.rules.severity import SEVERITIES, rank

VALUE_CHARS = 300
"""Longer log-derived texts in the findings table (messages, tasks, groups) are cut here, so the page
stays small whatever a log holds; `--format json` has them whole."""
EVIDENCE_SHOWN = 10
"""Evidence lines listed per finding in the table."""
REPORT_TASKS = 50
REPORT_EVENTS = 80
"""Timelines drawn in a report and events drawn per timeline: a report over thousands of
tasks stays a few megabytes; `nonatomic timeline --task` draws any task in full."""
_EVENT_FIELDS = ("step", "attempt", "op", "phase", "status", "code", "tool", "target", "idempotency_key",
                 "owner", "ttl_ms", "error", "seq")


def report(summary: Mapping, groups: list[CodeGroups], severities: Mapping[str, int], quarantine: list[dict],
           timelines: list[Timeline], omitted_tasks: int) -> str:
    """The replay report: summary, findings by group (the first few of each in a table) and the
    timelines of the most severe tasks."""
    drawn = {t.task_id: f"t{k}" for k, t in enumerate(timelines, 1)}
    body = ["<h1>nonatomic replay</h1>", _summary(summary, severities), _groups(groups),
            _findings_table([f for code in groups for g in code.groups for f in g.shown], summary["findings"],
                            drawn, timelines)]
    if quarantine:
        body.append(_quarantine(quarantine, summary["quarantined"]))
    body.append(_timelines(timelines, omitted_tasks, "Timelines of the tasks with findings"))
    return _page("nonatomic replay report", body, with_script=bool(summary["findings"] or timelines))


def timeline_page(timelines: list[Timeline], omitted_tasks: int) -> str:
    body = ["<h1>nonatomic timeline</h1>", _timelines(timelines, omitted_tasks, None)]
    return _page("nonatomic timeline", body, with_script=bool(timelines))


def _page(title: str, body: list[str], with_script: bool) -> str:
    head = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{escape_html(content_security_policy(with_script))}">\n'
            f'<meta name="referrer" content="no-referrer">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape_html(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n")
    tail = "\n</main>\n" + (f"<script>{SCRIPT}</script>\n" if with_script else "") + "</body>\n</html>\n"
    return head + "\n".join(body) + tail


def _summary(summary: Mapping, by_severity: Mapping[str, int]) -> str:
    cells = [*summary.items(), *((s, by_severity.get(s, 0)) for s in SEVERITIES)]
    items = "".join(f"<div><dt>{escape_html(k)}</dt><dd>{escape_html(summary_value(k, v))}</dd></div>"
                    for k, v in cells)
    return (f'<p class="meta">nonatomic {escape_html(__version__)}: lines read = events + quarantined '
            f'({escape_html(summary["lines"])} = {escape_html(summary["events"])} + {escape_html(summary["quarantined"])})</p>'
            f'<dl class="summary">{items}</dl>')


def _groups(groups: list[CodeGroups]) -> str:
    """The groups: per code, each tool, lock or task with its count and how many are listed."""
    if not groups:
        return ""
    rows = []
    for code in groups:
        for group in code.groups:
            rows.append(f'<tr><td class="nowrap">{escape_html(code.code)}</td><td class="nowrap">{escape_html(code.name)}</td>'
                        f"<td>{escape_html(group.subject_kind)} {_cut(group.subject)}</td><td>{group.count}</td>"
                        f'<td class="sev {escape_html(group.severity)}">{escape_html(group.severity)}</td><td>{len(group.shown)}</td>'
                        f'<td class="note">{f"… and {group.more} more" if group.more else ""}</td></tr>')
        if code.hidden_groups:
            rows.append(f'<tr><td class="nowrap">{escape_html(code.code)}</td><td class="nowrap">{escape_html(code.name)}</td>'
                        f'<td class="note">{code.hidden_groups} more group(s)</td><td>{code.hidden_findings}</td>'
                        f'<td></td><td>0</td><td class="note">not listed</td></tr>')
    heads = "".join(f"<th>{h}</th>" for h in ("code", "name", "group", "findings", "severity", "listed", ""))
    return (f'<h2>Findings by code and group</h2><table id="groups"><thead><tr>{heads}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _findings_table(findings: list[dict], total: int, drawn: Mapping[str, str], timelines: list[Timeline]) -> str:
    if not findings:
        return "<h2>Findings</h2><p>No findings.</p>" if not total else ""
    by_fingerprint = {f["fingerprint"]: n for t in timelines for n, f in enumerate(t.findings, 1)}
    rows = []
    for f in findings:
        anchor = drawn.get(f["task_id"])
        number = by_fingerprint.get(f["fingerprint"])
        code = escape_html(f["code"]) if anchor is None or number is None else f'<a href="#{anchor}-f{number}">{escape_html(f["code"])}</a>'
        task = _cut(f["task_id"]) if anchor is None else f'<a href="#{anchor}">{_cut(f["task_id"])}</a>'
        step = "" if f.get("step") is None else escape_html(f["step"])
        rows.append(f'<tr data-severity="{escape_html(f["severity"])}" data-fingerprint="{escape_html(f["fingerprint"])}">'
                    f'<td class="sev nowrap {escape_html(f["severity"])}" data-sort="{rank(f["severity"])}">'
                    f'{escape_html(f["severity"])}</td><td class="nowrap">{code}</td><td class="nowrap">{escape_html(f["name"])}</td>'
                    f'<td>{task}</td><td>{step}</td><td class="mono nowrap">{escape_html(f.get("ts") or "")}</td>'
                    f'<td class="message">{_cut(f["message"])}</td><td class="mono nowrap">{_evidence(f)}</td></tr>')
    heads = "".join(f'<th scope="col"><button type="button">{h}</button></th>'
                    for h in ("severity", "code", "name", "task", "step", "time (UTC)", "message", "evidence"))
    options = "".join(f'<option value="{s}">{s}</option>' for s in SEVERITIES)
    cut = (f'<p class="note">{len(findings)} of {total} findings are listed, the first of each group; '
           "<code>--format json</code> lists them all.</p>" if len(findings) < total else "")
    return (f"<h2>Findings ({total})</h2>"
            '<div class="controls"><input id="filter" type="search" placeholder="filter: code, task, message…" '
            f'aria-label="filter findings"><select id="severity" aria-label="severity"><option value="">'
            f'every severity</option>{options}</select><span id="shown" class="note"></span></div>'
            f'<table id="findings-table"><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table>{cut}')


def _cut(value: object) -> str:
    """A log-derived text, escaped, cut to VALUE_CHARS."""
    text = "" if value is None else str(value)
    return escape_html(text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 1] + "…")


def _because(t: Timeline, anchor: str, n: int, finding: Mapping) -> str:
    """The finding's "because" lines (one per named witness) under it, each a link to the first
    event it cites; pointing at one lights up its witnesses in the chart."""
    cited = {k: row.pos for row in t.rows if row.kind == "event" for m, k, _ in row.because if m == n}
    items = []
    for k, line in enumerate(finding.get("because") or ()):
        text = escape_html(line) if k not in cited else f'<a href="#{anchor}-e{cited[k]}">{escape_html(line)}</a>'
        items.append(f'<li data-witness="{n}.{k}" data-chart="{anchor}-chart">{text}</li>')
    return f'<ul class="because">{"".join(items)}</ul>' if items else ""


def _evidence(finding: Mapping) -> str:
    events = finding.get("events") or ()
    more = f"<br>… and {len(events) - EVIDENCE_SHOWN} more" if len(events) > EVIDENCE_SHOWN else ""
    return "<br>".join(_where(ev) for ev in events[:EVIDENCE_SHOWN]) + more


def _quarantine(quarantine: list[dict], total: int) -> str:
    rows = "".join(f"<tr><td>{escape_html(q['file'])}</td><td>{escape_html(q['line'])}</td><td>{escape_html(q['reason'])}</td>"
                   f"<td class=\"extra\">{escape_html((q.get('raw') or '')[:200])}</td></tr>"
                   for q in quarantine[:TEXT_QUARANTINE_SHOWN])
    more = (f'<p class="note">… and {total - len(quarantine)} more '
            "(<code>--format json</code> lists all).</p>" if total > len(quarantine) else "")
    return (f"<h2>Quarantined lines ({total})</h2><table><thead><tr><th>file</th><th>line</th>"
            f"<th>reason</th><th>raw</th></tr></thead><tbody>{rows}</tbody></table>{more}")


def _timelines(timelines: list[Timeline], omitted_tasks: int, heading: str | None) -> str:
    out = [f"<h2>{escape_html(heading)}</h2>"] if heading else []
    anchors = [f"t{k}" for k in range(1, len(timelines) + 1)]
    if timelines:
        out.append(legend())
    if len(timelines) > 1:
        out.append('<section class="overview"><h3>Every task drawn, one row each, on one time scale</h3>'
                   f'{_zoom("overview")}<div class="svgwrap">{overview(timelines, anchors)}</div></section>')
    out += [_article(t, anchor) for t, anchor in zip(timelines, anchors)]
    if omitted_tasks:
        out.append(f'<p class="note">{omitted_tasks} more task(s) with findings are not drawn, to keep this page '
                   "small; draw one with <code>nonatomic timeline LOG --task ID --format html</code>.</p>")
    return "\n".join(out)


def _article(t: Timeline, anchor: str) -> str:
    items = []
    for n, f in enumerate(t.findings, 1):
        where = ", ".join(_event_link(t, anchor, ev) for ev in f.get("events") or ())
        step = "" if f.get("step") is None else f" step {escape_html(f['step'])}"
        items.append(f'<li id="{anchor}-f{n}" data-finding="{n}" data-chart="{anchor}-chart" tabindex="0">'
                     f'<span class="sev {escape_html(f["severity"])}">{escape_html(f["severity"])}</span> '
                     f"<b>{escape_html(f['code'])}</b> {escape_html(f['name'])}{step}: {escape_html(f['message'])} "
                     f'<span class="note">({where})</span>{_because(t, anchor, n, f)}</li>')
    findings = f'<ol class="findings">{"".join(items)}</ol>' if items else ""
    return (f'<article class="timeline" id="{anchor}"><h3>task {escape_html(t.task_id)}</h3>'
            f'<p class="meta">{escape_html(t.headline())}</p>{_zoom(anchor)}<div class="svgwrap">{svg(t, anchor)}</div>{findings}'
            f"<details><summary>events and their extra fields ({t.events_drawn} drawn)</summary>"
            f"{_events_table(t, anchor)}</details></article>")


def _zoom(anchor: str) -> str:
    """The zoom buttons of a chart (the page script drives them; dragging across the chart zooms too)."""
    buttons = "".join(f'<button type="button" data-zoom="{z}">{label}</button>'
                      for z, label in (("in", "zoom in"), ("out", "zoom out"), ("reset", "whole time")))
    return (f'<div class="zoom" data-chart="{anchor}-chart">{buttons}'
            '<span class="note">or drag across the chart to zoom into that stretch</span></div>')


def _event_link(t: Timeline, anchor: str, witness: Mapping) -> str:
    pos = next((r.pos for r in t.rows if r.kind == "event" and r.event["event_id"] == witness["event_id"]), None)
    return f'<a href="#{anchor}-e{pos}">{_where(witness)}</a>' if pos is not None else _where(witness)


def _where(event: Mapping) -> str:
    """`name:line` of a log line; the full path on hover (paths are long, names tell logs apart)."""
    name = re.split(r"[\\/]", str(event["file"]))[-1]
    return f'<span title="{escape_html(event["file"])}">{escape_html(name)}:{escape_html(event["line"])}</span>'


def _events_table(t: Timeline, anchor: str) -> str:
    events = [row for row in t.rows if row.kind == "event"]
    fields = [k for k in _EVENT_FIELDS if any(k in row.event for row in events)]  # no empty columns
    heads = "".join(f"<th>{h}</th>" for h in ("#", "time (UTC)", "+s", "lane", *fields, "findings", "log line",
                                               "extra fields"))
    rows = "".join(_event_row(t, anchor, row, fields) for row in t.rows)
    return f'<div class="scroll"><table class="events"><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table></div>'


def _event_row(t: Timeline, anchor: str, row: Row, fields: list[str]) -> str:
    columns = len(fields) + 7
    if row.kind == "gap":
        return f'<tr><td></td><td colspan="{columns - 1}" class="note">{escape_html(row.text)}</td></tr>'
    time = (f'<td class="nowrap">{clock(row.ts_ms)}</td><td>{seconds(row.ts_ms - t.start_ms)}</td>'
            f"<td>{escape_html(t.lanes[row.lane].label)}</td>")
    if row.kind == "expiry":
        return f'<tr><td></td>{time}<td colspan="{columns - 4}" class="note">{escape_html(row.text)}</td></tr>'
    if row.kind == "foreign":
        return (f'<tr class="foreign"><td></td>{time}<td colspan="{columns - 7}" class="note">{escape_html(row.text)}</td>'
                f'<td>{" ".join(f"[{n}]" for n in row.marks)}</td><td class="nowrap">{_where(row.event)}</td>'
                "<td></td></tr>")
    values = "".join(f"<td>{escape_html(row.event.get(k, ''))}</td>" for k in fields)
    marks = " ".join(f'<a href="#{anchor}-f{n}">[{n}]</a>' for n in row.marks)
    more = "\n".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                     for k, v in extras(row).items())
    witness = ' class="witness"' if row.marks else ""
    return (f'<tr id="{anchor}-e{row.pos}"{witness}><td>{row.pos}</td>{time}{values}<td>{marks}</td>'
            f'<td class="nowrap">{_where(row.event)}</td><td class="extra">{escape_html(more)}</td></tr>')
