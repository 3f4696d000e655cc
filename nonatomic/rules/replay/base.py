"""What every replay detector shares: the Detector record and its fixtures.

A detector is one named SQL query over the shared stages of `views.py` (never
over raw lines).  Its module docstring is its documentation in ruff's shape
(what it finds / why is this bad / evidence), and its CASES are small event
logs the test suite replays: positives with the exact findings they must give
and near-misses that must give none.

The SQL of a detector returns one row per finding with these columns:

- `task_id`, `step`: where the finding belongs;
- `anchor_id`: the event the finding points at (its `ts` is the finding's);
- `witness_ids`: every event that proves it (a list; NULL entries are dropped),
  each named by the detector's `witnesses`, position by position: a name and the
  "because" clause that says what that event shows (`rollback_id`: "the rollback
  of step {step} started first"); a name ending in `_ids` takes the rest of the list;
- `variant` (optional): picks one of several message templates;
- `severity` (optional): overrides the detector's default for this row;
- `tool` (with `graded_by_write`): the write whose side-effect level grades the
  finding: error for a high or irreversible write (write_levels.py), else the
  detector's severity;
- any other column: a field for the message template.

Message templates are `str.format` strings over those fields; a `:dur` spec
renders milliseconds as a duration ("0.9 s", "40 ms").  Settings reach the
SQL as named parameters (`$min_backoff_ms`), with the defaults in `params`.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field

from nonatomic.rules.severity import SEVERITIES


@dataclass(frozen=True)
class Case:
    """A fixture log and the (task_id, step) findings it must give; none for a near-miss."""

    name: str
    events: tuple[dict, ...]
    expect: frozenset[tuple[str, int | None]] = frozenset()
    settings: Mapping[str, object] = field(default_factory=dict)


def case(name: str, events: list[dict], expect=(), **settings) -> Case:
    return Case(name, tuple(events), frozenset(expect), settings)


def ev(ts: float, op: str, task: str = "t1", **fields) -> dict:
    """One fixture event: `ts` in seconds from the fixture's start, then canonical fields."""
    return {"ts": ts, "task_id": task, "op": op, **fields}


def call(ts, step, attempt, status=None, *, tool="charge_card", target="order:1", **fields):
    """An instantaneous `call` event of a write tool (the fixtures' common case)."""
    return ev(ts, "call", step=step, attempt=attempt, status=status, tool=tool, target=target, **fields)


@dataclass(frozen=True)
class Detector:
    code: str
    name: str
    severity: str
    doc: str
    sql: str
    message: str | Mapping[str, str]
    requires: tuple[str, ...]
    cases: tuple[Case, ...]
    params: Mapping[str, object] = field(default_factory=dict)
    default_on: bool = True
    graded_by_write: bool = False
    """The severity follows the side-effect level of the row's `tool` (SPEC: NR303, NR402)."""
    needs_steps: bool = False
    """It compares the attempts of a step: a log whose calls carry no step gives it nothing to see."""
    witnesses: tuple[tuple[str, str], ...] = ()
    """(name, because clause) of each entry of `witness_ids`, in order (see the module docstring)."""

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"{self.code}: unknown severity {self.severity!r}")
        names = [name for name, _ in self.witnesses]
        if not names or any(not n.endswith(("_id", "_ids")) for n in names) or any(
                n.endswith("_ids") for n in names[:-1]):
            raise ValueError(f"{self.code}: witnesses must be names ending in _id (only the last in _ids)")
        missing = set(self.parameters()) - set(self.params) - set(SHARED_PARAMS)
        if missing:
            raise ValueError(f"{self.code}: SQL binds parameters without defaults: {sorted(missing)}")

    def parameters(self) -> list[str]:
        """Names of the named parameters ($name) the SQL binds, in first-use order."""
        return list(dict.fromkeys(re.findall(r"\$([a-z_]+)", self.sql)))

    def documentation(self) -> str:
        return textwrap.dedent(self.doc).strip()

    def summary(self) -> str:
        """The first paragraph of 'What it finds', for tables."""
        body = self.documentation().split("## What it finds", 1)[-1].strip().split("\n\n", 1)[0]
        return " ".join(body.split())

    def named_witnesses(self, ids) -> list[tuple[str, int]]:
        """(name, event id) of each non-NULL entry of a row's `witness_ids`."""
        names = [name for name, _ in self.witnesses]
        ids = list(ids or ())
        if len(ids) != len(names) and not (names[-1].endswith("_ids") and len(ids) >= len(names) - 1):
            raise ValueError(f"{self.code}: {len(ids)} witness ids for witnesses {names}")
        named = [(names[min(i, len(names) - 1)], event_id) for i, event_id in enumerate(ids)]
        return [(name, event_id) for name, event_id in named if event_id is not None]

    def template(self, variant: str | None) -> str:
        if isinstance(self.message, str):
            return self.message
        return self.message[variant]


SHARED_PARAMS: dict[str, object] = {
    # Tools named like reads (get_order, listInvoices, orders.search ...) have no
    # side effect: duplicates, zombies and unknown outcomes of reads are harmless.
    "read_tools": r"^(get|list|search|fetch|query|read|check|verify|status|lookup|describe)([^a-z]|$)",
}
"""Parameters of the shared SQL snippets (views.WRITE_CALL), with their defaults."""
