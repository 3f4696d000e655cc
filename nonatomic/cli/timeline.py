"""`nonatomic timeline`: draw the incident timeline of tasks in guard logs.

Exit codes: 0 drawn (findings do not fail a drawing; `replay` judges),
2 unreadable input, bad mapping or settings, or a --task with no events.
"""

from __future__ import annotations

import os
import shutil
import sys

import click

from nonatomic.cli.common import codes, wants_color, write
from nonatomic.cli.replay import bounded_memory, check_codes, open_session, replay, restrict
from nonatomic.replay.timeline import MAX_EVENTS, MAX_TASKS

_FROM_REPLAY = ("mapping", "db", "output", "select", "ignore", "memory_limit", "threads", "input_format",
                "max_line_bytes", "color")
"""Options that mean what they mean for `replay`: the same objects, so the two never drift."""


@click.command()
@click.argument("logs", nargs=-1, required=True)
@click.option("--task", "tasks", multiple=True, help="Draw this task (repeatable) [default: every task with findings].")
@click.option("--format", "fmt", type=click.Choice(["text", "md", "html"]), default="text", show_default=True,
              help="text: a terminal; md: Markdown with a Mermaid diagram; html: one self-contained page.")
@click.option("--max-events", type=click.IntRange(min=1), default=MAX_EVENTS, show_default=True,
              help="Events drawn per task (the findings' witnesses and their neighbours first).")
@click.option("--max-tasks", type=click.IntRange(min=1), default=MAX_TASKS, show_default=True,
              help="Tasks drawn when no --task is given (the most severe first).")
@bounded_memory
def timeline(logs, tasks, fmt, max_events, max_tasks, mapping, db, output, select, ignore, memory_limit, threads,
             input_format, max_line_bytes, color) -> None:
    """Draw the timeline of a task (--task), or of every task with findings (`-` as LOG: standard input)."""
    from nonatomic.replay.report import html, markdown, text

    check_codes(select, ignore)
    session = open_session(logs, mapping, db, input_format, memory_limit, threads, max_line_bytes)
    with session:
        restrict(session, tasks)  # one task out of a big log costs the scan plus a small query
        findings = session.find(codes(select), codes(ignore))
        timelines, omitted = session.timelines(findings, tasks, max_tasks=max_tasks, max_events=max_events)
    if not timelines:
        click.echo("nonatomic: no task has findings; name one with --task", err=True)
        return
    colour = wants_color(color, to_file=output is not None)
    if fmt == "text":
        drawing = text.render(timelines, omitted, color=colour, width=_terminal_width(output))
    elif fmt == "md":
        drawing = markdown.render(timelines, omitted)
    else:
        drawing = html.timeline_page(timelines, omitted)
    write(drawing, output, color=colour)


def _terminal_width(output) -> int | None:
    """The terminal's width (or COLUMNS) when drawing to one; a file or a pipe gets whole lines."""
    if output is None and ("COLUMNS" in os.environ or sys.stdout.isatty()):
        return shutil.get_terminal_size().columns
    return None


timeline.params += [p for p in replay.params if p.name in _FROM_REPLAY]
