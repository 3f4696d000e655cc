"""Replay reports: the format dispatcher.  Each format is a module (json_format, text,
markdown, html) fed with built findings, quarantine and timelines, never a connection.

JSON follows the contract exactly: `{"summary": {...}, "findings": [...],
"quarantine": [...], "warnings": [...]}`, every finding, streamed from the JSON texts the
engine built (the human formats leave warnings to stderr).  The human formats get the findings
in groups (`model.CodeGroups`).  Text and Markdown cite evidence as `file:line` so a reader can
open the log line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from nonatomic.replay.report import html, json_format, markdown, text
from nonatomic.replay.report.model import CodeGroups, Timeline


def render_json(summary: dict, findings: Iterable[str], quarantine: Iterable[str],
                warnings: Sequence[dict] = ()) -> Iterator[str]:
    """The JSON document in pieces, from the findings' and quarantined lines' JSON texts in order;
    it carries the `warnings` (the human formats leave them to stderr)."""
    return json_format.report(summary, findings, quarantine, warnings)


def render(fmt: str, summary: dict, groups: list[CodeGroups], severities: Mapping[str, int], quarantine: list[dict],
           timelines: Sequence[Timeline] = (), omitted_tasks: int = 0, *, color: bool = False) -> str:
    """The report in a human format; `html` also draws `timelines` (and notes `omitted_tasks` not drawn);
    `color` styles the text format for a terminal.  `quarantine` holds the first quarantined lines;
    the summary counts them all."""
    if fmt == "html":
        return html.report(summary, groups, severities, quarantine, list(timelines), omitted_tasks)
    if fmt == "text":
        return text.report(summary, groups, quarantine, color=color)
    return markdown.report(summary, groups, quarantine)
