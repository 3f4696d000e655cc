"""What the commands share: code lists, colour, the progress bar, usage errors and writing the output."""

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


def write(report: str | Iterable[str], output: str | os.PathLike | None, color: bool | None = None,
          err: bool = False) -> None:
    """The report (a text, or its pieces as they come) to `output` (a file, see `write_file`),
    else to standard output, or standard error with `err` (styled only if `color`)."""
    if output:
        write_file(output, report)
    else:
        for piece in [report] if isinstance(report, str) else report:
            click.echo(piece, nl=False, color=color, err=err)


color_option = click.option(
    "--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
    help="Colour the terminal output; auto: when writing to a terminal and NO_COLOR is not set.",
)


def wants_color(choice: str, *, to_file: bool = False) -> bool:
    """Whether to colour standard output: `always` wins over NO_COLOR (as in ruff and
    pytest); `auto` colours a terminal only, and never a report written to a file."""
    if choice == "always":
        return True
    if choice == "never" or to_file:
        return False
    # https://no-color.org: set and not empty
    return not os.environ.get("NO_COLOR") and sys.stdout.isatty()


def write_file(path: str | os.PathLike, text: str | Iterable[str]) -> None:
    """`text` (or its pieces as they come) to the file at `path`, its missing parent directories
    created (as ruff does); exit 2 naming the real OSError when it cannot be written.  A file
    name that is not UTF-8 in `text` keeps its bytes (surrogateescape)."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            for piece in [text] if isinstance(text, str) else text:
                fh.write(piece)
    except OSError as exc:
        raise usage_error(f"{os.fspath(path)}: cannot write: {exc.strerror or exc}") from exc


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
