"""The lint rule catalogue: one module per rule, named by its code (`na201_call_without_timeout.py`)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache

from nonatomic.rules.lint.base import LintRule

_MODULE = re.compile(r"^na\d{3}_\w+$")


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[LintRule], ...]:
    """Every lint rule class, ordered by code."""
    found = []
    for module_info in pkgutil.iter_modules(__path__):
        if _MODULE.match(module_info.name):
            module = importlib.import_module(f"{__name__}.{module_info.name}")
            found += [
                obj
                for obj in vars(module).values()
                if isinstance(obj, type) and issubclass(obj, LintRule) and obj.__module__ == module.__name__
            ]
    return tuple(sorted(found, key=lambda rule: rule.code))


def rule_for(code: str) -> type[LintRule] | None:
    return next((rule for rule in all_rules() if rule.code == code.upper()), None)
