"""Finding and reading `[tool.nonatomic]` in pyproject.toml, and what the machine allows.

Shared by both engines; each interprets its own keys (lint: top level and
`tools`, replay: `replay`).  Kept free of heavy imports: lint starts fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class ConfigError(Exception):
    """A configuration file is missing, unreadable or invalid (exit code 2)."""


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.nonatomic] table, walking up from start."""
    start = start.resolve()
    for directory in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and "nonatomic" in read_toml(candidate).get("tool", {}):
            return candidate
    return None


def read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc


def load_tool_table(path: Path) -> dict:
    """The [tool.nonatomic] table of a pyproject.toml (empty when absent)."""
    table = read_toml(path).get("tool", {}).get("nonatomic", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.nonatomic] must be a table")
    return table


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, where the system has one): the
    bound of --jobs and --threads, since more workers than CPUs only add overhead."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1
