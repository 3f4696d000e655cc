"""What the commands share: code lists, the progress bar, usage errors and writing the output."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

import click


def codes(value: str | None) -> list[str] | None:
    """A comma list of rule codes or prefixes (`--select NA1,NA2`); None when not given."""
    return [c.strip() for c in value.split(",") if c.strip()] if value else None


def usage_error(message: str) -> click.exceptions.Exit:
    """Exit 2 with `message` on stderr (bad input, mapping or settings: not a usage line)."""
    click.echo(f"nonatomic: error: {message}", err=True)
    return click.exceptions.Exit(2)


def write(report: str | Iterable[str], output: str | os.PathLike | None, color: bool | None = None) -> None:
    """The report (a text, or its pieces as they come) to `output` (a file), else to standard
    output (styled only if `color`)."""
    pieces = [report] if isinstance(report, str) else report
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            for piece in pieces:
                fh.write(piece)
    else:
        for piece in pieces:
            click.echo(piece, nl=False, color=color)


class progress:
    """A progress bar on stderr, only when stderr is a terminal and there are at least
    `min_total` items.  The context gives the callback `(item, total)` (or None); `shown`
    names the item beside the bar."""

    def __init__(self, label: str, min_total: int = 0, shown: Callable[[Any], str] | None = None) -> None:
        self.label = label
        self.min_total = min_total
        self.shown = shown
        self.bar = None

    def __enter__(self):
        return self.advance if sys.stderr.isatty() else None

    def advance(self, item: Any, total: int) -> None:
        if self.bar is None and total >= self.min_total:
            show = None if self.shown is None else (lambda name: name)
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr, show_pos=True,
                                         item_show_func=show)
            self.bar.__enter__()
        if self.bar is not None:
            self.bar.update(1, None if self.shown is None else self.shown(item))

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
