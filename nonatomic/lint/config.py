"""Lint settings: the configuration file plus command-line overrides, validated once."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nonatomic import __version__
from nonatomic.config import ConfigError, find_config, load_tool_table, table_prefix
from nonatomic.rules.lint.catalogue import CATALOGUE, Entry
from nonatomic.rules.lint.semantics.tool_config import validate_tools_table

_LIST_KEYS = ("select", "ignore", "exclude", "extend-exclude")
_TABLE_KEYS = ("per-file-ignores", "tools", "replay")
_SCALAR_KEYS = ("max-file-bytes", "max-file-seconds")
# Bigger files (generated data, vendored bundles) get CPython's syntax check only:
# libcst takes seconds per megabyte and such files hold no tool calls worth the wait.
DEFAULT_MAX_FILE_BYTES = 1024 * 1024
# A file whose rules have not finished after this long gets the syntax check only (a
# shape the size and depth guards do not foresee must not stall a pre-commit hook).
DEFAULT_MAX_FILE_SECONDS = 10.0


@dataclass
class LintSettings:
    root: Path  # paths in output, excludes and the cache are relative to it
    enabled: tuple[str, ...]  # rule codes, sorted
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)  # by code
    tools: dict[str, Any] = field(default_factory=dict)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_file_seconds: float = DEFAULT_MAX_FILE_SECONDS
    source: Path | None = None  # the configuration file read, if any
    warnings: list[str] = field(default_factory=list)  # for the user, not errors: the CLI prints them

    def options_for(self, code: str) -> dict[str, Any]:
        return self.rule_options.get(code, {})

    def cache_key(self) -> str:
        """Changes whenever a result could change: version, rules and their options."""
        blob = json.dumps(
            [__version__, self.enabled, self.per_file_ignores, self.rule_options, self.tools, self.max_file_bytes],
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _codes_matching(spec: str, *, explicit_enables_off: bool) -> set[str]:
    spec = spec.strip().upper()
    if spec == "ALL":  # as in ruff: every rule, the off-by-default ones too
        return {r.code for r in CATALOGUE}
    rules = CATALOGUE
    exact = [r for r in rules if r.code == spec]
    if exact:
        return {r.code for r in exact if r.default_on or explicit_enables_off}
    matched = {r.code for r in rules if r.code.startswith(spec) and r.default_on}
    if not matched and not any(r.code.startswith(spec) for r in rules):
        raise ConfigError(f"unknown rule code or prefix: {spec!r} (see `nonatomic rules`)")
    return matched


def select_codes(select: list[str] | None, ignore: list[str]) -> tuple[str, ...]:
    """Rules enabled by select/ignore.  A prefix (`NA1`) takes the default-on rules
    under it; an exact code (`NA106`) enables that rule even when it is off by
    default, and `ALL` every rule; NA000 stays on unless ignored."""
    if select is None:
        chosen = {r.code for r in CATALOGUE if r.default_on}
    else:
        chosen = set()
        for spec in select:
            chosen |= _codes_matching(spec, explicit_enables_off=True)
        chosen.add("NA000")  # as in ruff, a file that does not parse is always reported
    for spec in ignore:
        upper = spec.strip().upper()
        _codes_matching(upper, explicit_enables_off=True)  # validates the code
        chosen = {code for code in chosen if not code.startswith(upper if upper != "ALL" else "NA")}
    return tuple(sorted(chosen))


def _string_list(table: dict, key: str, where: Path | str) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return [v.strip() for v in value]


def _rule_tables(table: dict, where: Path) -> dict[str, dict[str, Any]]:
    prefix = table_prefix(where)
    by_key = {rule.name: rule for rule in CATALOGUE} | {rule.code: rule for rule in CATALOGUE}
    options: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        if key in _LIST_KEYS or key in _TABLE_KEYS or key in _SCALAR_KEYS:
            continue
        rule: Entry | None = by_key.get(key) or by_key.get(key.upper())
        if rule is None:
            known = ", ".join([*_LIST_KEYS, *_TABLE_KEYS, *_SCALAR_KEYS, "<rule-name>"])
            raise ConfigError(f"{where}: unknown key `{key}`{' in [tool.nonatomic]' if prefix else ''} (known: {known})")
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: [{prefix}{key}] must be a table")
        for option, setting in value.items():
            check = rule.options.get(option)
            if check is None:
                known = ", ".join(rule.options) or "none"
                raise ConfigError(f"{where}: unknown option `{option}` in [{prefix}{key}] (known: {known})")
            if (expected := check(setting)) is not None:
                raise ConfigError(f"{where}: `{key}.{option}` must be {expected}, not {setting!r}")
        options[rule.code] = value
    return options


def load_settings(
    *,
    start: Path,
    config_file: Path | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
) -> LintSettings:
    """Settings for linting `start`: the given or nearest config, then CLI overrides."""
    source = config_file if config_file is not None else find_config(start)
    if config_file is not None and not config_file.is_file():
        raise ConfigError(f"{config_file}: no such config file")
    table = load_tool_table(source) if source is not None else {}
    warnings = []
    if config_file is not None and not table:
        where_settings = "[tool.nonatomic] table" if table_prefix(config_file) else "nonatomic settings"
        warnings.append(f"{config_file} holds no {where_settings}: the defaults apply")
    where = source or "configuration"
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
    per_file_ignores = {glob: _string_list(per_file, glob, where) for glob in per_file}
    for codes in per_file_ignores.values():
        select_codes([], codes)  # validates every code
    tools = table.get("tools", {})
    if not isinstance(tools, dict):
        raise ConfigError(f"{where}: [{table_prefix(where)}tools] must be a table")
    if errors := validate_tools_table(tools):
        raise ConfigError(f"{where}: " + "; ".join(errors))
    config_select = _string_list(table, "select", where) if "select" in table else None
    enabled = select_codes(
        select if select is not None else config_select,
        [*_string_list(table, "ignore", where), *(ignore or [])],
    )
    max_file_bytes = table.get("max-file-bytes", DEFAULT_MAX_FILE_BYTES)
    if not isinstance(max_file_bytes, int) or isinstance(max_file_bytes, bool) or max_file_bytes < 1:
        raise ConfigError(f"{where}: `max-file-bytes` must be a positive integer")
    max_file_seconds = table.get("max-file-seconds", DEFAULT_MAX_FILE_SECONDS)
    if not isinstance(max_file_seconds, (int, float)) or isinstance(max_file_seconds, bool) or max_file_seconds <= 0:
        raise ConfigError(f"{where}: `max-file-seconds` must be a positive number")
    root = source.parent.resolve() if source is not None else Path.cwd().resolve()
    return LintSettings(
        root=root,
        enabled=enabled,
        exclude=[*_string_list(table, "exclude", where), *_string_list(table, "extend-exclude", where)],
        per_file_ignores=per_file_ignores,
        rule_options=_rule_tables(table, source or Path("pyproject.toml")),
        tools=tools,
        max_file_bytes=max_file_bytes,
        max_file_seconds=float(max_file_seconds),
        source=source,
        warnings=warnings,
    )
