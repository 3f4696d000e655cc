"""Replay settings: every setting a detector binds, its default, and where users override it.

Both engines (DuckDB and Spark) and the timelines read them from here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from nonatomic.config import ConfigError, find_config, load_tool_table
from nonatomic.rules.replay import DETECTORS
from nonatomic.rules.replay.base import SHARED_PARAMS
from nonatomic.rules.write_levels import NameLevels

DEFAULT_SETTINGS: dict[str, object] = {
    **SHARED_PARAMS,
    **{name: value for d in DETECTORS.values() for name, value in d.params.items()},
}
"""Every setting a detector binds, with its default (see each detector's params)."""


def load_settings(path: Path | None = None, start: Path | None = None) -> dict[str, object]:
    """Replay settings from a YAML file or a TOML config, else from the nearest config.

    In pyproject.toml they live in `[tool.nonatomic.replay]`, in a nonatomic.toml in
    `[replay]`; a YAML file holds them at its top level or under `replay:`.  Keys may use `-` or `_`
    (`min-backoff-ms = 500`).  Only overrides are returned; defaults stay in
    DEFAULT_SETTINGS.
    """
    if path is None:
        path = find_config(start or Path.cwd())
        if path is None:
            return {}
    if path.suffix in (".yaml", ".yml"):
        try:
            table = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"{path}: cannot read replay settings: {exc}") from exc
        if isinstance(table, dict) and isinstance(table.get("replay"), dict):
            table = table["replay"]
    else:
        table = load_tool_table(path).get("replay", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: replay settings must be a table of key = value")
    try:
        return validate_settings(table)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def validate_settings(settings: Mapping[str, object]) -> dict[str, object]:
    """Settings with normalised keys, checked against what the detectors accept."""
    checked: dict[str, object] = {}
    for raw_key, value in settings.items():
        key = str(raw_key).replace("-", "_")
        if key not in DEFAULT_SETTINGS:
            known = ", ".join(sorted(DEFAULT_SETTINGS))
            raise ConfigError(f"unknown replay setting {raw_key!r} (known: {known})")
        checked[key] = _SETTING_CHECKS[key](raw_key, value)
    return checked


def _status_codes(key, value) -> list[int]:
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise ConfigError(f"{key} must be a list of status codes, e.g. [400, 401, 403, 404, 422]")
    return sorted(set(value))


def _milliseconds(key, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{key} must be a whole number of milliseconds >= 0")
    return value


def _pattern(key, value) -> str:
    try:
        re.compile(value)
    except (TypeError, re.error) as exc:
        raise ConfigError(f"{key} must be a regular expression: {exc}") from exc
    return value


_SETTING_CHECKS = {"non_retryable": _status_codes, "min_backoff_ms": _milliseconds, "read_tools": _pattern}


@functools.lru_cache(maxsize=8)
def _levels_for(config: Path | None) -> NameLevels:
    table = load_tool_table(config).get("tools", {}) if config is not None else {}
    return NameLevels(table if isinstance(table, dict) else {})


def project_levels(start: Path | None = None) -> NameLevels:
    """The shipped registry extended by the `tools` table of the nearest config (`[tool.nonatomic.tools]`
    of a pyproject.toml), as lint reads it."""
    return _levels_for(find_config(start or Path.cwd()))
