"""The `nonatomic` command line: a thin click layer over the two engines.

Commands are imported only when invoked, so `nonatomic lint` never pays for
duckdb or pandas, and the replay side never pays for libcst.
"""

from __future__ import annotations

import importlib

import click

from nonatomic import __version__

# command name -> "module:attribute"
COMMANDS = {
    "lint": "nonatomic.cli.lint:lint",
    "rules": "nonatomic.cli.lint:rules",
    "explain": "nonatomic.cli.lint:explain",
    "replay": "nonatomic.cli.replay:replay",
    "timeline": "nonatomic.cli.timeline:timeline",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target.split(":")
        return getattr(importlib.import_module(module), attribute)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nonatomic")
def main() -> None:
    """Find non-atomic tool-call hazards in agent code (lint) and gateway logs (replay)."""
