"""`--color auto|always|never` and NO_COLOR, the same for every command."""

from __future__ import annotations

import os
import sys

import click

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
