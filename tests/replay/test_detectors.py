"""Every replay detector against its own fixtures, plus the runner's contract."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from nonatomic.config import ConfigError
from nonatomic.replay.detect import choose, run_detectors
from nonatomic.replay.ingest.database import connect
from nonatomic.replay.report.model import duration
from nonatomic.replay.settings import DEFAULT_SETTINGS, load_settings
from nonatomic.rules.replay import DETECTORS
from nonatomic.rules.replay.base import call, ev
from nonatomic.rules.replay.views import STAGES

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
COLUMNS = (
    "event_id, file_id, line, ts, seq, task_id, step, attempt, op, phase, status, code, tool,"
    " target, idempotency_key, owner, ttl_ms, error, extra"
)
FIELDS = [c.strip() for c in COLUMNS.split(",")][4:-2]


def load(events: list[dict], *, first_id: int = 1, file: str = "fixture.jsonl"):
    """An in-memory database whose `events` are these fixture events (ts in seconds from T0).

    Lines follow list order, so a fixture can put lines out of time order."""
    con = connect()
    con.execute("INSERT INTO log_files VALUES (1, ?)", [file])
    rows = [
        (first_id + i, 1, i + 1, T0 + timedelta(seconds=e["ts"]), *[e.get(f) for f in FIELDS], None, None)
        for i, e in enumerate(events)
    ]
    if rows:
        con.executemany(f"INSERT INTO event_rows ({COLUMNS}) VALUES ({', '.join('?' * 19)})", rows)
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


def test_message_tells_what_happened_in_order():
    (finding,) = run_detectors(load(list(DETECTORS["NR101"].cases[0].events)))
    assert finding["message"] == (
        "attempt 2 of step 2 `charge_card` started 0.9 s after the rollback of step 2 began:"
        " the retry re-applied what the rollback removed"
    )
    assert finding["ts"] == "2024-05-01T12:00:01.900Z"
    assert finding["events"] == [
        {"event_id": 2, "file": "fixture.jsonl", "line": 2, "ts": "2024-05-01T12:00:01.000Z", "role": "rollback"},
        {"event_id": 3, "file": "fixture.jsonl", "line": 3, "ts": "2024-05-01T12:00:01.900Z", "role": "retry"},
    ]
    # each named witness is one "because" line, in the order the detector names them
    assert finding["because"] == [
        "because the rollback of step 2 started first (fixture.jsonl:2)",
        "because attempt 2 `charge_card` started 0.9 s later (fixture.jsonl:3)",
    ]
    assert finding["severity"] == "error" and finding["name"] == "retry-after-rollback"


def test_every_positive_case_names_every_witness():
    # the names cover witness_ids exactly (a missing or extra id raises) and every event has a role
    for detector in DETECTORS.values():
        for case in (c for c in detector.cases if c.expect):
            for finding in run_detectors(load(list(case.events)), select=[detector.code], settings=case.settings):
                assert finding["because"], (detector.code, case.name)
                assert all(e["role"] != "anchor" for e in finding["events"]), (detector.code, case.name)


def test_lock_leak_is_an_error_without_ttl_and_a_warning_with_one():
    cases = {c.name: c for c in DETECTORS["NR201"].cases}
    (no_ttl,) = run_detectors(load(list(cases["no-ttl-never-released"].events)), select=["NR201"])
    (ttl,) = run_detectors(load(list(cases["only-the-ttl-freed-it"].events)), select=["NR201"])
    assert (no_ttl["severity"], ttl["severity"]) == ("error", "warning")


INCIDENT = [  # one task that trips several detectors at once
    call(0.0, 1, 1, "timeout", tool="refund_payment", target="order:8821"),
    call(0.02, 1, 2, "ok", tool="refund_payment", target="order:8821"),
    call(0.04, 1, 3, "ok", tool="refund_payment", target="order:8821"),
    ev(1.0, "task_end", status="completed"),
    ev(2.0, "rollback", step=1, status="ok", tool="reverse_refund"),
]


def test_fingerprints_do_not_depend_on_event_ids_or_directories():
    first = run_detectors(load(INCIDENT))
    again = run_detectors(load(INCIDENT, first_id=7000, file="/var/log/gateway/fixture.jsonl"))
    assert [f["fingerprint"] for f in first] == [f["fingerprint"] for f in again]
    assert len({f["fingerprint"] for f in first}) == len(first) == 5


def test_findings_are_sorted_by_task_then_time():
    findings = run_detectors(load(INCIDENT))
    assert [(f["code"], f["ts"]) for f in findings] == [
        ("NR303", "2024-05-01T12:00:00.020Z"),
        ("NR304", "2024-05-01T12:00:00.020Z"),
        ("NR301", "2024-05-01T12:00:00.040Z"),
        ("NR102", "2024-05-01T12:00:02.000Z"),  # the timed-out attempt 1 may land after it
        ("NR401", "2024-05-01T12:00:02.000Z"),
    ]


@pytest.mark.parametrize(
    "select, ignore, codes",
    [
        (["NR1"], None, ["NR101", "NR102"]),
        (["nr201", "NR30"], ["NR302", "NR303"], ["NR201", "NR301", "NR304"]),
        (None, ["NR1", "NR2", "NR3"], ["NR401", "NR402", "NR403"]),
    ],
)
def test_select_and_ignore_take_codes_and_prefixes(select, ignore, codes):
    assert [d.code for d in choose(select, ignore)] == codes


@pytest.mark.parametrize("select, ignore", [(["NA1"], None), (["NR999"], None), (None, ["NR5"])])
def test_a_code_no_detector_has_is_an_error_not_an_empty_run(select, ignore):
    with pytest.raises(ConfigError, match="NA1|NR999|NR5"):
        choose(select, ignore)


def test_ignored_detectors_do_not_report():
    assert {f["code"] for f in run_detectors(load(INCIDENT), ignore=["NR1", "NR3"])} == {"NR401"}


def test_settings_are_bound_not_spliced_into_sql():
    # A quote in the pattern would break (or inject into) string-formatted SQL.
    events = [call(0.0, 1, 1, "ok", tool="it's_a_read"), call(1.0, 1, 2, "ok", tool="it's_a_read")]
    assert found(events, "NR301", read_tools="^it's") == set()
    assert found(events, "NR301") == {("t1", "NR301", 1)}


def test_an_empty_non_retryable_set_retries_everything():
    events = [call(0.0, 1, 1, "error", code=422), call(1.0, 1, 2, "ok")]
    assert found(events, "NR302") == {("t1", "NR302", 1)}
    assert found(events, "NR302", non_retryable=[]) == set()


def test_no_events_no_findings():
    assert run_detectors(load([])) == []


def test_settings_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.nonatomic.replay]\nnon-retryable = [400, 409]\nmin-backoff-ms = 500\n"
    )
    (tmp_path / "logs").mkdir()
    assert load_settings(start=tmp_path / "logs") == {"non_retryable": [400, 409], "min_backoff_ms": 500}


def test_settings_from_yaml(tmp_path):
    path = tmp_path / "replay.yaml"
    path.write_text("replay:\n  min_backoff_ms: 250\n  read-tools: '^(get|peek)_'\n")
    assert load_settings(path) == {"min_backoff_ms": 250, "read_tools": "^(get|peek)_"}


def test_no_pyproject_means_defaults(tmp_path):
    assert load_settings(start=tmp_path) == {}
    assert DEFAULT_SETTINGS["non_retryable"] == [400, 401, 403, 404, 422]
    assert DEFAULT_SETTINGS["min_backoff_ms"] == 100


@pytest.mark.parametrize(
    "text, error",
    [
        ("min-backoff-ms = -1", "min-backoff-ms must be"),
        ('non-retryable = ["400"]', "non-retryable must be a list of status codes"),
        ("max-attempts = 3", "unknown replay setting 'max-attempts'"),
        ('read-tools = "(unclosed"', "read-tools must be a regular expression"),
    ],
)
def test_bad_settings_are_configuration_errors(tmp_path, text, error):
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[tool.nonatomic.replay]\n{text}\n")
    with pytest.raises(ConfigError, match=error):
        load_settings(path)


@pytest.mark.parametrize(
    "ms, text", [(40, "40 ms"), (900, "0.9 s"), (12_345, "12.3 s"), (150_000, "2.5 min"), (7_200_000, "2.0 h")]
)
def test_durations_read_naturally(ms, text):
    assert duration(ms) == text


def test_the_catalogue_imports_no_engine():
    import subprocess
    import sys

    code = (
        "import sys, nonatomic.rules.replay;"
        "bad = [m for m in sys.modules if m.split('.')[0] == 'duckdb'"
        " or m.startswith(('nonatomic.replay', 'nonatomic.lint'))];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


class _Recording:
    """A connection that notes the stage tables and views created and dropped, in order."""

    def __init__(self, con):
        self.con, self.log = con, []

    def execute(self, sql, *args):
        words = sql.split()
        if words[0] in ("CREATE", "DROP"):
            self.log.append((words[0], next(w for w in words if w.startswith("nr_"))))
        return self.con.execute(sql, *args)


def test_stages_are_built_once_and_freed_after_their_last_reader():
    events = [e for d in DETECTORS.values() for c in d.cases for e in c.events]
    recording = _Recording(load(events))
    run_detectors(recording, select=["NR"])
    stages = {"nr_events", *STAGES}
    log = [(verb, name) for verb, name in recording.log if name in stages]
    created = [name for verb, name in log if verb == "CREATE"]
    assert len(created) == len(set(created)) and {"nr_ops", "nr_attempts", "nr_leases"} <= set(created)
    # The lock stages are gone before the attempts are built: they never share memory.
    attempts = log.index(("CREATE", "nr_attempts"))
    assert ("DROP", "nr_lock_events") in log[:attempts] and ("DROP", "nr_leases") in log[:attempts]
    # What is left is the findings, which the reports read.
    temporary = recording.con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
    assert temporary == [("nr_findings",)]
