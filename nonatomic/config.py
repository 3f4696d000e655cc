"""Finding and reading the configuration: `[tool.nonatomic]` in pyproject.toml, or
the same keys at the top level of a `nonatomic.toml` / `.nonatomic.toml`.

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


# In one directory the first of these wins, as ruff's `.ruff.toml`, `ruff.toml`,
# `pyproject.toml`; a pyproject.toml counts only with a [tool.nonatomic] table.
CONFIG_FILES = (".nonatomic.toml", "nonatomic.toml", "pyproject.toml")


def is_pyproject(path: Path) -> bool:
    """Whether the settings sit under [tool.nonatomic] (else at the file's top level)."""
    return path.name == "pyproject.toml"


def find_config(start: Path) -> Path | None:
    """The nearest nonatomic.toml, .nonatomic.toml or pyproject.toml with a
    [tool.nonatomic] table, walking up from start."""
    start = start.resolve()
    for directory in [start, *start.parents] if start.is_dir() else start.parents:
        for name in CONFIG_FILES:
            candidate = directory / name
            if candidate.is_file() and (not is_pyproject(candidate) or "nonatomic" in read_toml(candidate).get("tool", {})):
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
    """The nonatomic settings of a config file: the [tool.nonatomic] table of a
    pyproject.toml (or of any file that has one), else the file's top-level keys
    (a nonatomic.toml, as ruff.toml is to ruff).  Empty when there are none."""
    data = read_toml(path)
    tool = data.get("tool")
    if is_pyproject(path) or (isinstance(tool, dict) and "nonatomic" in tool):
        table = tool.get("nonatomic", {}) if isinstance(tool, dict) else {}
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.nonatomic] must be a table")
        return table
    return data


def table_prefix(path: Path | str) -> str:
    """How a nested table of `path` is named in messages: `tool.nonatomic.` or nothing."""
    return "tool.nonatomic." if not isinstance(path, Path) or is_pyproject(path) else ""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, where the system has one): the
    bound of --jobs and --threads, since more workers than CPUs only add overhead."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1
