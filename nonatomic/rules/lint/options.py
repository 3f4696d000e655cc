"""The types of the rules' options, checked when the configuration is loaded.

A rule reads its options (`[tool.nonatomic.<rule-name>]`) with plain `.get`; its
catalogue entry declares what each one must be, so a wrong value (`fix-timeout =
"ten"`) is a configuration error naming the key (exit code 2) instead of a crash
in the middle of a run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], str | None]
"""None when the value is acceptable, else what it must be ("a positive number")."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def positive_number(value: Any) -> str | None:
    return None if _is_number(value) and value > 0 else "a positive number"


def positive_int(value: Any) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) and value > 0 else "a positive integer"


def strings(value: Any) -> str | None:
    ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    return None if ok else "a list of strings"


def one_of(*choices: str) -> Check:
    def check(value: Any) -> str | None:
        return None if value in choices else "one of " + ", ".join(f"{c!r}" for c in choices)

    return check


def call_specs(value: Any) -> str | None:
    """`extra-calls`: "module.func" names, or tables shaped like timeouts.yaml's entries."""
    def good(item: Any) -> bool:
        return isinstance(item, str) or (isinstance(item, dict) and strings(item.get("names")) is None)

    ok = isinstance(value, list) and all(good(item) for item in value)
    return None if ok else 'a list of "module.func" names or tables with `names = [...]`'
