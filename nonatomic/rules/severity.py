"""The one severity order: both engines, their rules and every renderer read it from here."""

from __future__ import annotations

SEVERITIES = ("error", "warning", "info")
"""Most severe first."""


def rank(severity: str) -> int:
    """0 for the most severe; a severity outside the order ranks below all of it."""
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)

COLOURS = {"error": "red", "warning": "yellow", "info": "blue"}
"""How a terminal shows each severity (lint findings and replay findings alike)."""
