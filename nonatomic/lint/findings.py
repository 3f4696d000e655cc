"""What the lint engine reports: findings and the errors that are not findings."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: str
    path: str
    line: int  # 1-based
    col: int  # 1-based
    end_line: int
    end_col: int
    message: str
    fix: str | None = None  # what the fix does, when the rule has one
    fix_safe: bool = False
    fingerprint: str = ""  # stable under unrelated edits: baselines and SARIF use it
    related: tuple[tuple[int, int], ...] = ()  # (line, col) of the hazard's other sites

    def __post_init__(self) -> None:
        # A cached finding comes back from JSON with lists.
        object.__setattr__(self, "related", tuple(tuple(where) for where in self.related))

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.code)


@dataclass(frozen=True)
class RuleCrash:
    """A rule raised on a file: reported on stderr, exit code 2, other rules still ran."""

    path: str
    code: str
    error: str


class Unparsable(Exception):
    """libcst could not parse a file (its error in `error`)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class OverBudget(Exception):
    """Linting a file passed its time budget (max-file-seconds)."""


def fingerprint(*parts: str) -> str:
    # surrogateescape: a file name that is not UTF-8 keeps its own bytes
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]
