"""Every replay detector against its own fixtures, plus the runner's contract."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import duckdb
import pytest

from nonatomic.config import ConfigError
from nonatomic.replay.detect import (
    DEFAULT_SETTINGS,
    choose,
    duration,
    load_settings,
    run_detectors,
)
from nonatomic.replay.schema import EVENTS_DDL
from nonatomic.rules.replay import DETECTORS
from nonatomic.rules.replay.base import call, ev

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
COLUMNS = (
    "event_id, file, line, ts, seq, task_id, step, attempt, op, phase, status, code, tool,"
    " target, idempotency_key, owner, ttl_ms, error, extra"
)
FIELDS = [c.strip() for c in COLUMNS.split(",")][4:-2]


def load(events: list[dict], *, first_id: int = 1, file: str = "fixture.jsonl"):
    """An in-memory database whose `events` are these fixture events (ts in seconds from T0).

    Lines follow list order, so a fixture can put lines out of time order."""
    con = duckdb.connect()
    con.execute(EVENTS_DDL)
    rows = [
        (first_id + i, file, i + 1, T0 + timedelta(seconds=e["ts"]), *[e.get(f) for f in FIELDS], None, None)
        for i, e in enumerate(events)
    ]
    if rows:
        con.executemany(f"INSERT INTO events ({COLUMNS}) VALUES ({', '.join('?' * 19)})", rows)
    return con


def found(events, code=None, **settings) -> set[tuple[str, str, int | None]]:
    findings = run_detectors(load(events), select=[code] if code else None, settings=settings)
    return {(f["task_id"], f["code"], f["step"]) for f in findings}


CASES = [
    pytest.param(detector, c, id=f"{detector.code}-{c.name}")
    for detector in DETECTORS.values()
    for c in detector.cases
]


@pytest.mark.parametrize("detector, case", CASES)
def test_detector_fixture(detector, case):
    expected = {(task, detector.code, step) for task, step in case.expect}
    assert found(list(case.events), detector.code, **case.settings) == expected


@pytest.mark.parametrize("detector", DETECTORS.values(), ids=lambda d: d.code)
def test_every_detector_has_positive_and_near_miss_fixtures(detector):
    assert any(c.expect for c in detector.cases)
    assert any(not c.expect for c in detector.cases)
