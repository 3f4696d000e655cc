"""Replay reports: the summary, and text, JSON and Markdown renderings (HTML: render_html).

JSON follows the contract exactly: `{"summary": {...}, "findings": [...],
"quarantine": [...]}`.  Text and Markdown cite evidence as `file:line` so a
reader can open the log line.
"""

from __future__ import annotations

import json
from datetime import date, datetime

SEVERITIES = ("error", "warning", "info")
TEXT_QUARANTINE_SHOWN = 20
"""Quarantined lines listed in text/Markdown; JSON lists them all."""


def summarize(con, findings: list[dict]) -> dict:
    """Counts over the whole database (what the detectors saw), not only this run's files."""
    files, lines = con.execute("SELECT count(DISTINCT realpath), coalesce(sum(lines), 0) FROM ingested_files").fetchone()
    events, tasks = con.execute("SELECT count(*), count(DISTINCT task_id) FROM event_rows").fetchone()
    quarantined = con.execute("SELECT count(*) FROM quarantine").fetchone()[0]
    return {"files": files, "lines": int(lines), "events": events, "quarantined": quarantined,
            "tasks": tasks, "findings": len(findings)}


def quarantine_rows(con) -> list[dict]:
    rows = con.execute("SELECT file, line, reason, raw FROM quarantine ORDER BY file, line").fetchall()
    return [{"file": f, "line": n, "reason": r, "raw": raw} for f, n, r, raw in rows]


def render(fmt: str, summary: dict, findings: list[dict], quarantine: list[dict], con=None,
           settings: dict | None = None) -> str:
    """The report in `fmt`; `html` also draws timelines, so it needs the connection (and settings)."""
    if fmt == "html":
        from nonatomic.replay.render_html import report

        return report(con, summary, findings, quarantine, settings)
    return {"json": _json, "text": _text, "md": _markdown}[fmt](summary, findings, quarantine)


def _json(summary: dict, findings: list[dict], quarantine: list[dict]) -> str:
    document = {"summary": summary, "findings": findings, "quarantine": quarantine}
    return json.dumps(document, indent=2, default=_plain, ensure_ascii=False) + "\n"


def _plain(value: object) -> object:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)


def _where(finding: dict) -> str:
    events = finding.get("events") or []
    return f"{events[0]['file']}:{events[0]['line']}" if events else "-"


def _when(value: object) -> str:
    return value.isoformat() if isinstance(value, (datetime, date)) else str(value or "-")


def _counts_line(summary: dict) -> str:
    return (f"{summary['files']} file(s), {summary['lines']} line(s) = {summary['events']} event(s) "
            f"+ {summary['quarantined']} quarantined; {summary['tasks']} task(s); "
            f"{summary['findings']} finding(s)")


def _text(summary: dict, findings: list[dict], quarantine: list[dict]) -> str:
    out = []
    for f in findings:
        out.append(f"{_where(f)}: {f['code']} {f['name']} [{f['severity']}] "
                   f"task {f['task_id']} step {f.get('step', '-')} at {_when(f.get('ts'))}: {f['message']}")
        for event in (f.get("events") or [])[1:]:
            out.append(f"    also {event['file']}:{event['line']}")
    if quarantine:
        out.append(f"Quarantined {len(quarantine)} line(s):")
        out.extend(f"  {q['file']}:{q['line']}: {q['reason']}" for q in quarantine[:TEXT_QUARANTINE_SHOWN])
        if len(quarantine) > TEXT_QUARANTINE_SHOWN:
            out.append(f"  ... and {len(quarantine) - TEXT_QUARANTINE_SHOWN} more (--format json lists all)")
    out.append(_counts_line(summary))
    return "\n".join(out) + "\n"


def _cell(value: object) -> str:
    # Log values end up here: keep them from closing the cell or the table row.
    text = _when(value) if isinstance(value, (datetime, date)) else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _markdown(summary: dict, findings: list[dict], quarantine: list[dict]) -> str:
    out = ["# nonatomic replay", "", "| " + " | ".join(summary) + " |",
           "|" + "---|" * len(summary), "| " + " | ".join(str(v) for v in summary.values()) + " |", ""]
    out += ["## Findings", ""]
    if findings:
        out += ["| code | name | severity | task | step | ts | evidence | message |",
                "|---|---|---|---|---|---|---|---|"]
        out += ["| " + " | ".join(_cell(v) for v in (
            f["code"], f["name"], f["severity"], f["task_id"], f.get("step", ""), _when(f.get("ts")),
            ", ".join(f"{e['file']}:{e['line']}" for e in f.get("events") or []), f["message"])) + " |"
            for f in findings]
    else:
        out.append("No findings.")
    if quarantine:
        out += ["", "## Quarantine", "", "| file | line | reason |", "|---|---|---|"]
        out += [f"| {_cell(q['file'])} | {q['line']} | {_cell(q['reason'])} |"
                for q in quarantine[:TEXT_QUARANTINE_SHOWN]]
        if len(quarantine) > TEXT_QUARANTINE_SHOWN:
            out += ["", f"... and {len(quarantine) - TEXT_QUARANTINE_SHOWN} more (`--format json` lists all)."]
    return "\n".join(out) + "\n"
