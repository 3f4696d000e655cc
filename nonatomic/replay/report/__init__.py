"""Replay reports: the format dispatcher.  Each format is a module (json_format, text,
markdown, html) fed with built findings, quarantine and timelines, never a connection.

JSON follows the contract exactly: `{"summary": {...}, "findings": [...],
"quarantine": [...], "warnings": [...]}` (the human formats leave warnings to stderr).  Text and Markdown cite evidence as `file:line` so a
reader can open the log line.
"""

from __future__ import annotations

from collections.abc import Sequence

from nonatomic.replay.report import html, json_format, markdown, text
from nonatomic.replay.report.model import Timeline


def render(fmt: str, summary: dict, findings: list[dict], quarantine: list[dict],
           timelines: Sequence[Timeline] = (), omitted_tasks: int = 0, warnings: Sequence[dict] = (), *,
           color: bool = False) -> str:
    """The report in `fmt`; `html` also draws `timelines` (and notes `omitted_tasks` not drawn);
    `json` carries the `warnings` (the others leave them to stderr); `color` styles the text format
    for a terminal."""
    if fmt == "html":
        return html.report(summary, findings, quarantine, list(timelines), omitted_tasks)
    if fmt == "json":
        return json_format.report(summary, findings, quarantine, list(warnings))
    if fmt == "text":
        return text.report(summary, findings, quarantine, color=color)
    return markdown.report(summary, findings, quarantine)
