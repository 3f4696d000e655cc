"""Field mappings: read logs whose field names and values are not the canonical ones.

A mapping file (YAML) has two optional sections::

    fields:            # canonical: theirs
      task_id: trace_id
      tool: span_data.name                    # a nested field (a key with dots is read first)
      op: {const: call}                       # the same value on every record
      status: {from: span_data.error, present: error, absent: ok}   # from a field's presence
    values:            # canonical field -> {theirs: canonical}
      op: {invoke: call}

Anything else in the file is an error: a typo in a mapping would otherwise
quietly quarantine every line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from nonatomic.replay.ingest.fields import FIELDS, TEXT, default_sources


class MappingError(Exception):
    """The mapping file is missing, not YAML, or not a valid mapping (exit code 2)."""


@dataclass(frozen=True)
class Presence:
    """A canonical value chosen by whether a field of the log is present (non-null)."""

    source: str
    present: str
    absent: str | None


@dataclass(frozen=True)
class FieldMapping:
    fields: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    presence: dict[str, Presence] = field(default_factory=dict)

    def sources(self, canonical: str) -> tuple[str, ...]:
        """The log field names a canonical field is read from, first present wins."""
        if canonical in self.constants:
            return ()
        if canonical in self.presence:
            return (self.presence[canonical].source,)
        if canonical in self.fields:
            return (self.fields[canonical],)
        return default_sources(canonical)

    def plain(self) -> bool:
        """Only renamed top-level fields: no constant, no derived value, no nested path."""
        return not self.constants and not self.presence and not any("." in n for n in self.fields.values())

    def consumed(self) -> set[str]:
        """Every log field name that feeds a canonical field (the rest are extras)."""
        return {name for canonical in FIELDS for name in self.sources(canonical)}


def load_mapping(path: str | Path) -> FieldMapping:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MappingError(f"{path}: cannot read mapping: {exc}") from exc
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise MappingError(f"{path}: invalid YAML: {exc}") from exc
    return parse_mapping(document or {}, source=str(path))


def parse_mapping(document: object, source: str = "mapping") -> FieldMapping:
    if not isinstance(document, dict):
        raise MappingError(f"{source}: a mapping must be a YAML mapping with 'fields' and/or 'values'")
    unknown = set(document) - {"fields", "values"}
    if unknown:
        raise MappingError(f"{source}: unknown section(s) {_names(unknown)}; expected 'fields' and/or 'values'")
    fields, constants, presence = {}, {}, {}
    for canonical, theirs in _section(document.get("fields"), source, "fields").items():
        _check_canonical(canonical, source, "fields")
        if isinstance(theirs, dict) and set(theirs) == {"const"}:
            constants[canonical] = _scalar(theirs["const"], source, canonical, "fields")
        elif isinstance(theirs, dict) and "from" in theirs and set(theirs) <= {"from", "present", "absent"} \
                and "present" in theirs:
            if not isinstance(theirs["from"], str) or not theirs["from"]:
                raise MappingError(f"{source}: fields.{canonical}.from must name one field of your logs")
            absent = theirs.get("absent")
            presence[canonical] = Presence(theirs["from"], _scalar(theirs["present"], source, canonical, "fields"),
                                           None if absent is None else _scalar(absent, source, canonical, "fields"))
        elif isinstance(theirs, str) and theirs:
            fields[canonical] = theirs
        else:
            raise MappingError(f"{source}: fields.{canonical} must name one field of your logs ({{const: value}} "
                               f"for a constant, {{from: field, present: value, absent: value}} for a value "
                               f"derived from a field's presence), got {theirs!r}")
    shared = {theirs for theirs in fields.values() if list(fields.values()).count(theirs) > 1}
    if shared:
        raise MappingError(f"{source}: fields: {_names(shared)} mapped to more than one canonical field")
    values = {}
    for canonical, table in _section(document.get("values"), source, "values").items():
        _check_canonical(canonical, source, "values")
        if FIELDS[canonical] != TEXT:
            raise MappingError(f"{source}: values.{canonical}: only text fields can have their values mapped")
        table = _section(table, source, f"values.{canonical}")
        values[canonical] = {_scalar(k, source, canonical): _scalar(v, source, canonical) for k, v in table.items()}
    return FieldMapping(fields=fields, values=values, constants=constants, presence=presence)


def _section(value: object, source: str, name: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MappingError(f"{source}: {name} must be a mapping, got {type(value).__name__}")
    return value


def _check_canonical(name: object, source: str, section: str) -> None:
    if name not in FIELDS:
        raise MappingError(f"{source}: {section}: {name!r} is not a canonical field (one of {', '.join(FIELDS)})")


def _scalar(value: object, source: str, canonical: str, section: str = "values") -> str:
    # YAML reads `yes`, `200` or `1.5` as non-strings; logs carry them as text.
    if isinstance(value, (dict, list)) or value is None:
        raise MappingError(f"{source}: {section}.{canonical}: {value!r} is not a single value")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _names(names: set) -> str:
    return ", ".join(repr(n) for n in sorted(map(str, names)))
