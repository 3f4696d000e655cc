from __future__ import annotations

from pathlib import Path

import pytest

from nonatomic.lint.config import LintSettings, select_codes
from nonatomic.lint.runner import RulePlan, lint_source


def make_settings(root: Path | None = None, **overrides) -> LintSettings:
    settings = LintSettings(root=root or Path.cwd(), enabled=select_codes(None, []))
    for key, value in overrides.items():
        setattr(settings, key, value)
    return settings


def lint_snippet(code: str, *, select: list[str] | None = None, fix: bool = False, **overrides):
    """Findings (and the fixed source, with `fix`) of one snippet under the given rules."""
    settings = make_settings(**overrides)
    if select is not None:
        settings.enabled = select_codes(select, [])
    result = lint_source("snippet.py", code.encode(), RulePlan(settings), fix=fix, unsafe_fixes=fix)
    assert not result.crashes, result.crashes
    return result


@pytest.fixture
def lint():
    return lint_snippet
