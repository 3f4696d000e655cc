"""The one severity order: both engines, their rules and every renderer read it from here."""

from __future__ import annotations

SEVERITIES = ("error", "warning", "info")
"""Most severe first."""
