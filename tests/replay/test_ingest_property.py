"""Line accounting holds for any log: lines = events + quarantined, every bad line cited once."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nonatomic.replay.api import open_logs

GOOD = st.fixed_dictionaries({
    "ts": st.one_of(st.just("2024-05-01T10:00:00Z"), st.integers(1_600_000_000, 1_800_000_000)),
    "task_id": st.sampled_from(["a", "b", "c"]),
    "attempt": st.integers(1, 5),
})
CORRUPTIONS = {
    "invalid JSON": lambda b: b[: len(b) // 2],
    "not UTF-8": lambda b: b[:-1] + b'\xff"}',
    "no task": lambda b: json.dumps({"ts": "2024-05-01T10:00:00Z"}).encode(),
    "bad ts": lambda b: json.dumps({"ts": "soon", "task_id": "a"}).encode(),
    "bad attempt": lambda b: json.dumps({"ts": 1, "task_id": "a", "attempt": "first"}).encode(),
    "blank": lambda b: b"",
}


@settings(max_examples=int(os.environ.get("NONATOMIC_FUZZ_EXAMPLES", "0")) or 40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.tuples(GOOD, st.one_of(st.none(), st.sampled_from(sorted(CORRUPTIONS)))), max_size=40),
       final_newline=st.booleans())
def test_every_line_is_an_event_or_quarantined(tmp_path_factory, records, final_newline):
    lines, bad = [], []
    for number, (record, corruption) in enumerate(records, start=1):
        text = json.dumps({**record, "i": number}).encode()
        if corruption is not None:
            text = CORRUPTIONS[corruption](text)
            if corruption != "blank":
                bad.append(number)
        lines.append(text)
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    log = tmp_path_factory.mktemp("prop") / "log.jsonl"
    log.write_bytes(data)
    with open_logs(log) as replay:
        summary = replay.summary(findings=[])
        quarantined = [n for (n,) in replay.con.execute("SELECT line FROM quarantine ORDER BY line").fetchall()]
        event_lines = replay.con.execute("SELECT line, extra->>'i' FROM events ORDER BY line").fetchall()
    blank = sum(1 for text in lines if not text)
    assert summary["lines"] == len(lines) - blank
    assert summary["lines"] == summary["events"] + summary["quarantined"]
    assert quarantined == bad
    assert all(int(i) == n for n, i in event_lines)
