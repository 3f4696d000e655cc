"""The lint rule catalogue: `catalogue.py` lists every rule (what the engine needs
before importing one); each rule's module, named by its code and name
(`na201_call_without_timeout.py`), holds its documentation, cases and visitor.
Importing this package imports no rule and not libcst."""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import TYPE_CHECKING

from nonatomic.rules.lint.catalogue import CATALOGUE, entry_for

if TYPE_CHECKING:
    from nonatomic.rules.lint.base import LintRule


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[LintRule], ...]:
    """Every lint rule class, ordered by code."""
    return tuple(_load(entry.code) for entry in sorted(CATALOGUE, key=lambda entry: entry.code))


@lru_cache(maxsize=None)
def _load(code: str) -> type[LintRule]:
    from nonatomic.rules.lint.base import LintRule

    entry = entry_for(code)
    assert entry is not None
    module = importlib.import_module(entry.module)
    found = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, LintRule) and vars(obj).get("code") == code
    ]
    if len(found) != 1:
        raise ImportError(f"{entry.module} must define one rule class with code {code}")
    return found[0]


def rule_for(code: str) -> type[LintRule] | None:
    """The rule class of `code` (its module imported now), or None for an unknown code."""
    entry = entry_for(code)
    return _load(entry.code) if entry is not None else None
