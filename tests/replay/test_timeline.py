"""`nonatomic timeline`: the timeline model, the text and Markdown drawings (golden files), Mermaid structure.

Golden files live in tests/replay/golden/; after a reviewed change of the
drawing, rewrite them with NONATOMIC_UPDATE_GOLDEN=1 and read the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from nonatomic.cli import main
from nonatomic.replay.api import open_logs
from nonatomic.replay.report import markdown as render_md
from nonatomic.replay.report import text as render_text
from nonatomic.replay.report.scale import FOLD_WIDTH, TICK_SPACING, Scale
from nonatomic.replay.timeline import build_timelines, tasks_to_draw

GOLDEN = Path(__file__).parent / "golden"
INCIDENT = GOLDEN / "incident.jsonl"


def timeline(*args, cwd=GOLDEN):
    """Run the CLI from the golden directory, so the logs are cited by their names only."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["timeline", *map(str, args)])
    finally:
        os.chdir(old)


def assert_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("NONATOMIC_UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8"), f"{name} changed (NONATOMIC_UPDATE_GOLDEN=1 rewrites it)"


def write(path: Path, *events: dict) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def ev(second: float, task: str = "t1", **fields) -> dict:
    return {"ts": f"2024-05-01T10:00:{second:06.3f}Z", "task_id": task, **fields}


def draw(path: Path, tasks=None, **options):
    with open_logs([path]) as replay:
        findings = replay.detect()
        names = tasks or tasks_to_draw(findings)[0]
        return build_timelines(replay.con, names, findings, **options)


# -- golden drawings -------------------------------------------------------------------------

def test_text_golden():
    result = timeline("incident.jsonl")
    assert result.exit_code == 0, result.output
    assert "\x1b[" not in result.output, "no colour when stdout is not a terminal"
    assert_golden("incident.txt", result.output)


def test_markdown_golden():
    result = timeline("--format", "md", "incident.jsonl")
    assert result.exit_code == 0, result.output
    assert_golden("incident.md", result.output)


def test_colour_only_when_asked():
    [t] = draw(INCIDENT)
    assert "\x1b[31m" in render_text.render([t], color=True)
    assert "\x1b[" not in render_text.render([t], color=False)


# -- the model ---------------------------------------------------------------------------------

def test_unknown_outcome_stays_open_until_a_verify_settles_it():
    [t] = draw(INCIDENT)
    rows = {row.pos: i for i, row in enumerate(t.rows) if row.kind == "event"}
    [timed_out] = [s for s in t.spans if s.kind == "call" and s.outcome == "unknown"]
    assert (timed_out.start, timed_out.end, timed_out.settled) == (rows[3], rows[4], rows[9])
    assert timed_out.dangling
    states = t.lane_states()
    step1 = next(i for i, lane in enumerate(t.lanes) if lane.key == "1")
    assert [states[rows[p]][step1] for p in (6, 7, 8)] == ["dangling"] * 3
    assert states[rows[10]][step1] is None, "settled by the verify at #9"


def test_a_write_never_verified_stays_open_to_the_end(tmp_path):
    log = write(tmp_path / "l.jsonl", ev(0, op="call", step=1, attempt=1, status="timeout", tool="charge", target="o"),
                ev(1, op="call", step=1, attempt=2, status="ok", tool="charge", target="o"))
    [t] = draw(log, ["t1"])
    [first] = [s for s in t.spans if s.outcome == "unknown"]
    assert first.dangling and first.settled is None
    assert t.lane_states()[-1][first.lane] == "dangling"


def test_lease_runs_to_its_ttl_expiry_row():
    [t] = draw(INCIDENT)
    [lease] = [s for s in t.spans if s.kind == "lease"]
    expiry = t.rows[lease.end]
    assert (lease.outcome, expiry.kind) == ("expired", "expiry")
    assert expiry.ts_ms - t.start_ms == 30_100 and expiry is t.rows[-1]


def test_lanes_are_task_steps_then_lock_owners_named_in_words():
    [t] = draw(INCIDENT)
    assert [lane.key for lane in t.lanes] == ["T", "1", "2", "L1"]
    assert [lane.label for lane in t.lanes[1:]] == [
        "step 1 refund_payment, 2 attempts; verify get_refund; rollback reverse_refund",
        "step 2 send_email, 2 attempts", "lock lock:order:8821, owner w-3"]


def test_findings_are_marked_at_their_witnesses():
    [t] = draw(INCIDENT)
    marked = {row.pos: row.marks for row in t.rows if row.marks}
    assert marked == {2: [1], 3: [2], 4: [2], 5: [2], 12: [1]}
    assert [f["code"] for f in t.findings] == ["NR201", "NR303"]


def test_each_witness_says_what_it_shows_for_its_finding():
    [t] = draw(INCIDENT)
    because = {row.pos: row.because for row in t.rows if row.because}
    assert because == {2: [(1, 0, "because w-3 acquired lock `lock:order:8821` in step 1")],
                       3: [(2, 0, "because attempt 1 `refund_payment` of step 1 started")],
                       4: [(2, 1, "because its outcome was timeout")],
                       5: [(2, 2, "because attempt 2 started 0.1 s later, with no verify before it")],
                       12: [(1, 1, "because the task ended (timeout) with no release by w-3")]}
    # each line of a finding's because is some witness's, in every format
    assert all(any(k == i for row in t.rows for n, i, _ in row.because if n == number)
               for number, f in enumerate(t.findings, 1) for k in range(len(f["because"])))
    assert "    Note over S1: #91;2#93; because its outcome was timeout" in render_md.sequence(t)
    assert "      because its outcome was timeout (" in render_text.render([t])


def test_cap_keeps_witnesses_and_says_what_was_left_out(tmp_path):
    noise = [ev(i / 100, op="call", step=2, attempt=1, status="ok", tool="get_status", target=f"x{i}")
             for i in range(1, 300)]
    log = write(tmp_path / "l.jsonl", ev(0, op="task_start"), *noise,
                ev(5, op="call", step=1, attempt=1, status="timeout", tool="charge", target="o"),
                ev(6, op="call", step=1, attempt=2, status="ok", tool="charge", target="o"),
                *[ev(7 + i / 100, op="call", step=3, attempt=1, status="ok", tool="get_x", target=f"y{i}")
                  for i in range(100)],
                ev(9, op="task_end", status="completed"))
    [t] = draw(log, max_events=20)
    assert t.events_total == 403 and t.events_drawn == 20
    drawn = [row for row in t.rows if row.kind == "event"]
    assert {r.event["op"] for r in drawn} >= {"task_start", "task_end"}
    assert all(r.pos in {row.pos for row in drawn} for r in t.rows if r.marks)
    assert sum(row.omitted for row in t.rows if row.kind == "gap") == 403 - 20
    text = render_text.render([t])
    assert "(20 drawn)" in text and "event(s) not drawn" in text


def test_tasks_with_findings_most_severe_first():
    findings = [{"task_id": "b", "severity": "warning"}, {"task_id": "c", "severity": "error"},
                {"task_id": "a", "severity": "warning"}, {"task_id": "a", "severity": "warning"}]
    assert tasks_to_draw(findings) == (["c", "a", "b"], 0)
    assert tasks_to_draw(findings, limit=1) == (["c"], 2)


# -- escaping ----------------------------------------------------------------------------------

HOSTILE_TEXT = "evil\x1b[2J\x1b]0;pwned\x07\r\nnext\u202eline"


def test_text_escapes_terminal_controls_and_bidi(tmp_path):
    log = write(tmp_path / "l.jsonl", ev(0, task=HOSTILE_TEXT, op="call", step=1, attempt=1, status="timeout",
                                         tool=HOSTILE_TEXT, target=HOSTILE_TEXT, error=HOSTILE_TEXT, note=HOSTILE_TEXT),
                ev(1, task=HOSTILE_TEXT, op="call", step=1, attempt=2, status="ok", tool=HOSTILE_TEXT,
                   target=HOSTILE_TEXT))
    out = render_text.render(draw(log)) + render_text.render(draw(log), width=50)
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f\u202e]", out), "only newlines of our own"
    assert "evil\\x1b[2J" in out and "\\u202e" in out


def test_markdown_values_cannot_break_the_table_or_the_diagram(tmp_path):
    nasty = "a|b\n```\n<script>alert(1)</script>; end\nNote over T: x %% [c](http://x)"
    log = write(tmp_path / "l.jsonl",
                ev(0, task=nasty, op="lock_acquire", step=1, target=nasty, owner=nasty, ttl_ms=1000),
                ev(1, task=nasty, op="call", step=1, attempt=1, status="timeout", tool=nasty, target=nasty,
                   error=nasty, extra_note=nasty),
                ev(2, task=nasty, op="call", step=1, attempt=2, status="ok", tool=nasty, target=nasty),
                ev(3, task=nasty, op="task_end", status="failed"),
                ev(0.5, task=nasty + "2", op="lock_acquire", step=1, target=nasty, owner=nasty + "2", ttl_ms=1000))
    timelines = draw(log, [nasty])
    assert any(row.kind == "foreign" for row in timelines[0].rows)
    md = render_md.render(timelines)
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert len({len(re.findall(r"(?<!\\)\|", line)) for line in table if line.startswith("| ") and "finding" not in line
                and not line.startswith("| [")}) == 1, "a value split a cell"
    assert "<script>" not in md and "\\<script\\>" in md
    check_mermaid(md)


# -- Mermaid -----------------------------------------------------------------------------------

_STATEMENT = re.compile(
    r"    (?:participant (?P<declared>[A-Z]\d*) as (?P<label>.+)"
    r"|(?P<source>[A-Z]\d*)(?:->>|-->>|--x|-x)(?P<target>[A-Z]\d*): (?P<message>.+)"
    r"|Note over (?P<over>[A-Z]\d*)(?:,(?P<over2>[A-Z]\d*))?: (?P<note>.+)"
    r"|(?P<toggle>activate|deactivate) (?P<who>[A-Z]\d*))")
_ENTITY_OR_PLAIN = re.compile(r"(?:#\d+;|[\w .,/=+()'\-→⚠…])*")


def check_mermaid(markdown: str) -> int:
    """Every diagram: a sequenceDiagram of known statements, texts entity-encoded, participants
    declared before use, activations balanced.  Returns how many diagrams were checked."""
    blocks = re.findall(r"```mermaid\n(.*?)\n```", markdown, re.S)
    for block in blocks:
        lines = block.splitlines()
        assert lines[0] == "sequenceDiagram"
        declared: set[str] = set()
        active: dict[str, int] = {}
        for line in lines[1:]:
            m = _STATEMENT.fullmatch(line)
            assert m, f"not a statement: {line!r}"
            text = m["label"] or m["message"] or m["note"]
            if text is not None:
                assert _ENTITY_OR_PLAIN.fullmatch(text), f"unescaped text: {text!r}"
            if m["declared"]:
                assert not active, "participants come first"
                declared.add(m["declared"])
            used = {m[k] for k in ("source", "target", "over", "over2", "who") if m[k]}
            assert used <= declared, f"undeclared participant in {line!r}"
            if m["toggle"] == "activate":
                active[m["who"]] = active.get(m["who"], 0) + 1
            elif m["toggle"] == "deactivate":
                assert active.get(m["who"], 0) > 0, f"deactivates an inactive participant: {line!r}"
                active[m["who"]] -= 1
    return len(blocks)


def test_golden_mermaid_is_well_formed():
    assert check_mermaid((GOLDEN / "incident.md").read_text(encoding="utf-8")) == 1


def test_mermaid_keeps_the_unknown_write_active_until_the_verify():
    [t] = draw(INCIDENT)
    lines = render_md.sequence(t)
    start = lines.index(next(line for line in lines if ": 3. call" in line))
    verify = lines.index(next(line for line in lines if ": 9. verify" in line))
    step1 = lines[start].split("->>")[1].split(":")[0]
    assert lines[start + 1] == f"    activate {step1}"
    assert f"    deactivate {step1}" == lines[verify + 1]
    assert f"    deactivate {step1}" not in lines[start + 1:verify]


# -- the command -------------------------------------------------------------------------------

def test_named_task_and_unknown_task():
    clean = timeline("--task", "clean-1", "incident.jsonl")
    assert clean.exit_code == 0 and "task clean-1: 3 event(s)" in clean.output and "refund-8821" not in clean.output
    missing = timeline("--task", "nope", "incident.jsonl")
    assert missing.exit_code == 2 and "no events of task(s) 'nope'" in missing.output


def test_no_findings_says_so(tmp_path):
    log = write(tmp_path / "l.jsonl", ev(0, op="task_start"), ev(1, op="task_end", status="completed"))
    result = timeline(log, cwd=tmp_path)
    assert result.exit_code == 0 and "no task has findings" in result.output


def test_max_tasks_names_what_was_left_out(tmp_path):
    events = [e for n in range(3) for e in (
        ev(0, task=f"t{n}", op="call", step=1, attempt=1, status="timeout", tool="charge", target="o"),
        ev(1, task=f"t{n}", op="call", step=1, attempt=2, status="ok", tool="charge", target="o"))]
    result = timeline("--max-tasks", "2", write(tmp_path / "l.jsonl", *events), cwd=tmp_path)
    assert result.output.count("\ntask t") + result.output.startswith("task t") == 2
    assert "1 more task(s) with findings not drawn" in result.output


@pytest.mark.parametrize("fmt", ["text", "md", "html"])
def test_every_format_writes_to_output(fmt, tmp_path):
    out = tmp_path / f"timeline.{fmt}"
    assert timeline("--format", fmt, "--output", out, "incident.jsonl").exit_code == 0
    assert "refund-8821" in out.read_text(encoding="utf-8")


# -- time to scale -------------------------------------------------------------------------------

def test_scale_is_proportional_and_folds_only_quiet_stretches():
    # a 10 s call in flight is drawn to scale; the 30 s after it, with nothing in flight, is folded
    scale = Scale([0, 100, 10_100, 10_200, 40_200], [(100, 10_100)], 0, 1000)
    [fold] = scale.folds
    assert (fold.t0, fold.t1, fold.x1 - fold.x0) == (10_200, 40_200, FOLD_WIDTH)
    assert scale.x(10_100) - scale.x(100) == pytest.approx(100 * (scale.x(200) - scale.x(100)))
    assert scale.x(40_200) == pytest.approx(1000)


def test_a_steady_poll_is_drawn_to_scale_and_tasks_an_hour_apart_are_folded():
    assert Scale(range(0, 60_000, 3_000), [], 0, 800).folds == []
    bursts = [hour * 3_600_000 + ms for hour in range(8) for ms in (0, 200, 450, 900)]
    scale = Scale(bursts, [], 0, 800)
    assert len(scale.folds) == 7
    assert scale.x(bursts[2]) - scale.x(bursts[1]) == pytest.approx(250 * scale.px_per_ms)


@pytest.mark.parametrize("times", [[0, 3, 5, 12_092, 12_092, 12_427], [0, 1, 2], [5, 5],
                                   [0, 250, 251, 252, 90_000, 90_001, 200_000]])
def test_ticks_never_repeat_and_keep_apart(times):
    scale = Scale(times, [], 0, 800)
    ticks = scale.ticks(times[0])
    labels = [text for _, text in ticks]
    assert ticks and len(set(labels)) == len(labels), labels
    assert all(b[0] - a[0] >= TICK_SPACING / 2 for a, b in zip(ticks, ticks[1:]))


def test_the_text_timeline_marks_a_folded_quiet_stretch():
    [t] = draw(INCIDENT)
    text = render_text.render([t])
    assert "~ quiet for 15.1 s (folded) ~" in text
    assert "~ quiet" not in text.split("task_end")[0], "the 10 s timeout is in flight: drawn, not folded"


# -- other owners of a lock ------------------------------------------------------------------------

def test_other_tasks_leases_of_the_lock_are_drawn(tmp_path):
    # worker-b takes the lock after worker-a's TTL ran out; worker-a's release comes while b holds it
    log = write(tmp_path / "l.jsonl",
                ev(0, task="a", op="lock_acquire", step=1, target="lock:x", owner="worker-a", ttl_ms=2000),
                ev(3, task="b", op="lock_acquire", step=1, target="lock:x", owner="worker-b", ttl_ms=5000),
                ev(4, task="a", op="lock_release", step=1, target="lock:x", owner="worker-a"),
                ev(6, task="b", op="lock_release", step=1, target="lock:x", owner="worker-b"),
                ev(9, task="c", op="lock_acquire", step=1, target="lock:x", owner="worker-c", ttl_ms=1000),
                ev(9.5, task="c", op="lock_release", step=1, target="lock:x", owner="worker-c"))
    [t] = draw(log, ["a"])
    assert [lane.label for lane in t.lanes] == ["task", "lock lock:x, owner worker-a",
                                                "lock lock:x, owner worker-b (task b)"]
    [other] = [s for s in t.spans if s.kind == "lease" and t.lanes[s.lane].other_task == "b"]
    assert (t.rows[other.start].kind, t.rows[other.start].ts_ms - t.start_ms) == ("foreign", 3000)
    assert other.outcome == "released" and t.rows[other.end].ts_ms - t.start_ms == 6000
    assert not any("worker-c" in row.text for row in t.rows), "task c's lease is after a's window"
    assert [s.outcome for s in t.spans if s.kind == "lease" and t.lanes[s.lane].other_task is None] == ["expired"]
    # the same picture in every format
    assert "lock_acquire lock:x owner=worker-b ttl=5.0 s (task b)" in render_text.render([t])
    md = render_md.render([t])
    assert "Note over L2: lock_acquire lock#58;x owner=worker-b ttl=5.0 s (task b)" in md
    check_mermaid(md)


def test_an_open_lease_reaches_later_owners(tmp_path):
    # a lock without TTL never released: the next owner's failed acquire, minutes later, is in the picture
    log = write(tmp_path / "l.jsonl",
                ev(0, task="a", op="lock_acquire", step=1, target="lock:x", owner="worker-a"),
                ev(1, task="a", op="task_end", status="timeout"),
                {"ts": "2024-05-01T10:05:00Z", "task_id": "b", "op": "lock_acquire", "step": 1, "target": "lock:x",
                 "owner": "worker-b", "status": "error"})
    [t] = draw(log, ["a"])
    [foreign] = [row for row in t.rows if row.kind == "foreign"]
    assert foreign.outcome == "failed" and t.lanes[foreign.lane].other_task == "b"


# -- the terminal's width ----------------------------------------------------------------------------

def test_the_terminal_timeline_fits_the_terminal(tmp_path):
    steps = [e for n in range(1, 40) for e in (
        ev(n / 10, op="call", step=n, attempt=1, status="timeout", tool=f"write_{n}", target="o"),
        ev(n / 10 + 0.01, op="call", step=n, attempt=2, status="ok", tool=f"write_{n}", target="o"))]
    log = write(tmp_path / "l.jsonl", *steps)
    for columns in (60, 100):
        result = CliRunner().invoke(main, ["timeline", str(log)], env={"COLUMNS": str(columns)})
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert max(len(line) for line in lines) <= columns, max(lines, key=len)
        assert "share column +" in result.output and "◀ [1]" in result.output
    whole = CliRunner().invoke(main, ["timeline", str(log)], env={"COLUMNS": None}).output
    assert max(len(line) for line in whole.splitlines()) > 100, "a file or a pipe gets whole lines"
