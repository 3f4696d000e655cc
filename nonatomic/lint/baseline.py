"""Baselines: adopt the linter on a legacy codebase, failing only on new findings.

A baseline file records fingerprints (rule, file, flagged source text and its
enclosing function), not line numbers, so unrelated edits do not resurrect
old findings.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from nonatomic import __version__
from nonatomic.config import ConfigError
from nonatomic.lint.findings import Finding


def baseline_text(findings: list[Finding]) -> str:
    """The baseline file recording these findings (the CLI writes it)."""
    entries = sorted({(f.fingerprint, f.code, f.path) for f in findings})
    payload = {
        "version": __version__,
        "findings": [{"fingerprint": fp, "code": code, "path": p} for fp, code, p in entries],
    }
    return json.dumps(payload, indent=2) + "\n"


def read_baseline(path: Path) -> Counter[str]:
    try:
        payload = json.loads(path.read_text("utf-8"))
        return Counter(entry["fingerprint"] for entry in payload["findings"])
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read baseline: {exc.strerror}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a nonatomic baseline file") from exc


def new_findings(findings: list[Finding], baseline: Counter[str]) -> list[Finding]:
    return [f for f in findings if f.fingerprint not in baseline]
