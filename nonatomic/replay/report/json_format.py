"""The replay report as JSON: every finding, every quarantined line and the warnings (the contract's shape).

Findings arrive as JSON texts, built by the engine, and are written one per
line as they come, a batch at a time: the document is streamed, never held whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from itertools import islice

_BATCH = 1000


def report(summary: dict, findings: Iterable[str], quarantine: Iterable[str],
           warnings: Sequence[dict] = ()) -> Iterator[str]:
    """The document in pieces: summary, then each finding and each quarantined line (JSON texts) in
    order, then the warnings."""
    yield '{\n  "summary": ' + _dumps(summary) + ',\n  "findings": '
    yield from _array(findings)
    yield ',\n  "quarantine": '
    yield from _array(quarantine)
    yield ',\n  "warnings": '
    yield from _array(json.dumps(w, default=_plain, ensure_ascii=False) for w in warnings)
    yield "\n}\n"


def _array(texts: Iterable[str]) -> Iterator[str]:
    # joined a batch at a time: one write per thousand findings, not one per finding
    texts = iter(texts)
    separator = "[\n    "
    while batch := list(islice(texts, _BATCH)):
        yield separator + ",\n    ".join(batch)
        separator = ",\n    "
    yield "[]" if separator == "[\n    " else "\n  ]"


def _dumps(value: object) -> str:
    text = json.dumps(value, indent=2, default=_plain, ensure_ascii=False)
    return text.replace("\n", "\n  ")


def _plain(value: object) -> object:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)
