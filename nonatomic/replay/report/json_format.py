"""The replay report as JSON: every finding and every quarantined line (the contract's shape)."""

from __future__ import annotations

import json
from datetime import date, datetime


def report(summary: dict, findings: list[dict], quarantine: list[dict], warnings: list[dict] = ()) -> str:
    document = {"summary": summary, "findings": findings, "quarantine": quarantine, "warnings": list(warnings)}
    return json.dumps(document, indent=2, default=_plain, ensure_ascii=False) + "\n"


def _plain(value: object) -> object:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)
