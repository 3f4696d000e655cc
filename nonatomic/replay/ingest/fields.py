"""The canonical event fields: their kind, and the names they are read from by default.

Every input format delivers a source value per field; `convert.py` turns it
into the typed column of the events table (see schema.py) or a quarantine
reason.  The kind decides the conversion rules.
"""

from __future__ import annotations

TIME, INT, TEXT = "time", "int", "text"

FIELDS: dict[str, str] = {
    "ts": TIME,
    "seq": INT,
    "task_id": TEXT,
    "step": INT,
    "attempt": INT,
    "op": TEXT,
    "phase": TEXT,
    "status": TEXT,
    "code": INT,
    "tool": TEXT,
    "target": TEXT,
    "idempotency_key": TEXT,
    "owner": TEXT,
    "ttl_ms": INT,
    "error": TEXT,
}
"""Canonical field -> kind, in the column order of the events table."""

REQUIRED = ("ts", "task_id")

CITED = ("trace_id", "span_id")
"""Extra fields (kept in `extra`, not columns) that a finding's evidence cites when an event has a
span id: an event read from a trace, or a guard log that names its spans."""

ALIASES: dict[str, tuple[str, ...]] = {"step": ("step_no",)}
"""Other names a field is read from when the log has no field of its own name."""

NARROW_INT = {"code": "INTEGER"}
"""Integer fields whose column is narrower than BIGINT."""


def default_sources(field: str) -> tuple[str, ...]:
    return (field, *ALIASES.get(field, ()))
