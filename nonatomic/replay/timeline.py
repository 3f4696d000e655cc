"""The timeline of a task, built from the database: the model (report.model) the renderers draw.

A timeline is a list of rows in the task's event order (one per log line,
plus a row where a lock lease ran out by its TTL and a row for each run of
events left out), a set of lanes (the task, each step, each lock) and spans
over rows: op intervals and lock leases.  Positions, not times, place rows:
a retry 5 ms after a timeout and a verify an hour later both stay visible,
and "before" means what the detectors mean by it (the event order).

Intervals, outcomes and leases come from the detectors' own stages
(`nonatomic.rules.replay.views`), run over the drawn tasks only: the engine
that finds a hazard and the picture that shows it agree on what happened.
An `unknown` or never-ended write stays open (drawn dashed, like Jepsen's
indeterminate operations) until a completed verify of its step settles it.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable, Mapping

from nonatomic.replay.ingest.schema import EVENT_ORDER
from nonatomic.replay.report.model import Lane, Row, Span, Timeline, duration
from nonatomic.replay.settings import DEFAULT_SETTINGS
from nonatomic.rules.replay.views import EVENT_ROWS, LEASES, LOCK_EVENTS, OPS, OUTCOME, WRITE, events_stage
from nonatomic.rules.severity import rank

MAX_EVENTS = 200
"""Events drawn per task; witnesses of findings, task start/end and their neighbours first."""
MAX_TASKS = 100
"""Tasks drawn per page or terminal run; the rest are named in a note."""

_LOCK_OPS = ("lock_acquire", "lock_release")
_COLUMNS = ("event_id", "file", "line", "ts", "seq", "step", "attempt", "op", "phase", "status", "code",
            "tool", "target", "idempotency_key", "owner", "ttl_ms", "error")


def tasks_to_draw(findings: Iterable[Mapping], limit: int = MAX_TASKS) -> tuple[list[str], int]:
    """Tasks with findings, the most severe first (then by id), and how many more were left out."""
    worst: dict[str, tuple[int, int]] = {}
    for f in findings:
        worst_rank, count = worst.get(f["task_id"], (rank(f["severity"]), 0))
        worst[f["task_id"]] = (min(worst_rank, rank(f["severity"])), count + 1)
    ordered = sorted(worst, key=lambda task: (worst[task][0], -worst[task][1], task))
    return ordered[:limit], max(0, len(ordered) - limit)


def build_timelines(con, task_ids: list[str], findings: Iterable[Mapping], *,
                    settings: Mapping[str, object] | None = None, max_events: int = MAX_EVENTS) -> list[Timeline]:
    """Timelines of these tasks (in this order; tasks without events are skipped), with their findings marked."""
    if not task_ids:
        return []
    by_task: dict[str, list[dict]] = {}
    for f in findings:
        by_task.setdefault(f["task_id"], []).append(dict(f))
    witnesses = sorted({e["event_id"] for fs in by_task.values() for f in fs for e in f.get("events") or ()})
    params = {"tasks": list(task_ids), "witnesses": witnesses}
    events = _group(con.execute(_EVENTS_SQL, {**params, "max_events": max_events}).fetchall())
    read_tools = {**DEFAULT_SETTINGS, **(settings or {})}["read_tools"]
    ops = _group(con.execute(_OPS_SQL, {"tasks": params["tasks"], "read_tools": read_tools}).fetchall())
    leases = _group(con.execute(_LEASES_SQL, {"tasks": params["tasks"]}).fetchall())
    return [_timeline(task, events[task], ops.get(task, []), leases.get(task, []), by_task.get(task, []))
            for task in task_ids if task in events]


def describe(event: Mapping) -> str:
    """One line for a reader: `call refund_payment order:1 #2 end → timeout 504 error='...'`."""
    words = [str(event.get("op") or "event")]
    words += [str(event[k]) for k in ("tool", "target") if event.get(k) is not None]
    if event.get("attempt") is not None:
        words.append(f"#{event['attempt']}")
    if event.get("phase") is not None:
        words.append(str(event["phase"]))
    if event.get("status") not in (None, "started"):
        words.append(f"→ {event['status']}")
    if event.get("code") is not None:
        words.append(str(event["code"]))
    for key, label in (("idempotency_key", "key"), ("owner", "owner")):
        if event.get(key) is not None:
            words.append(f"{label}={event[key]}")
    if event.get("ttl_ms") is not None:
        words.append(f"ttl={duration(event['ttl_ms'])}")
    if event.get("error") is not None:
        words.append(f"error={event['error']!r}")
    return " ".join(words)


# The detectors' stages read the stored events and `events`: CTEs of those names scope them to the tasks drawn.
_SCOPE = ",\n".join(f"{name} AS (SELECT * FROM main.{name} WHERE list_contains(CAST($tasks AS VARCHAR[]), task_id))"
                    for name in (EVENT_ROWS, "events"))
_POSITIONS = f"""positions AS (
    SELECT event_id, task_id, ROW_NUMBER() OVER (PARTITION BY task_id ORDER BY {EVENT_ORDER}) AS pos
    FROM events)"""


def _with(*stages) -> str:
    return "WITH " + ",\n".join([_SCOPE, _POSITIONS, *(f"{s.name} AS ({s.sql})" for s in stages)])


_EVENTS_SQL = _with() + f""",
ordered AS (
    SELECT e.*, p.pos, count(*) OVER (PARTITION BY e.task_id) AS total,
           list_contains(CAST($witnesses AS BIGINT[]), e.event_id) AS witness
    FROM events e JOIN positions p USING (event_id)
),
near AS (
    SELECT *, bool_or(witness) OVER (PARTITION BY task_id ORDER BY pos
                                     ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) AS near_witness
    FROM ordered
),
ranked AS (
    SELECT *, ROW_NUMBER() OVER (
        PARTITION BY task_id
        ORDER BY CASE WHEN witness THEN 0 WHEN op IN ('task_start', 'task_end') THEN 1
                      WHEN near_witness THEN 2 ELSE 3 END, pos) AS keep
    FROM near
)
SELECT task_id, pos, total, epoch_ms(ts) AS ts_ms,
       {", ".join(c if c != "ts" else "strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%gZ') AS ts"
                  for c in _COLUMNS)}, extra
FROM ranked
WHERE keep <= $max_events
ORDER BY task_id, pos
"""

_OPS_SQL = _with(events_stage(EVENT_ORDER), OPS) + f""",
settling AS (
    -- the first completed verify of the step after an op whose effect is in doubt
    SELECT o.*, (
        SELECT arg_min(v.end_id, v.end_pos) FROM nr_ops v
        WHERE v.op = 'verify' AND v.outcome = 'ok' AND v.task_id = o.task_id AND v.step = o.step
          AND v.end_pos > COALESCE(o.end_pos, o.start_pos)
    ) AS settled_id,
    o.end_id IS NULL OR (o.outcome = 'unknown' AND o.op <> 'verify' AND {WRITE.format(op="o")}) AS dangling
    FROM nr_ops o
)
SELECT s.task_id, s.op, s.step, s.outcome, s.dangling, ps.pos, pe.pos, CASE WHEN s.dangling THEN pv.pos END
FROM settling s
JOIN positions ps ON ps.event_id = s.start_id
LEFT JOIN positions pe ON pe.event_id = s.end_id
LEFT JOIN positions pv ON pv.event_id = s.settled_id
ORDER BY s.task_id, ps.pos
"""

_LEASES_SQL = _with(events_stage(EVENT_ORDER), LOCK_EVENTS, LEASES) + """
SELECT l.task_id, l.lock_name, l.owner, l.ttl_ms, l.end_kind, l.end_ms, pa.pos,
       -- the lock event that ended the lease, when it is one of this task's
       CASE WHEN l.end_kind IN ('released', 'renewed') AND pn.task_id = l.task_id THEN pn.pos END
FROM nr_leases l
JOIN positions pa ON pa.event_id = l.acquire_id
JOIN nr_lock_events le ON le.event_id = l.acquire_id
LEFT JOIN positions pn ON pn.event_id = le.next_id
ORDER BY l.task_id, pa.pos
"""


def _group(rows: list[tuple]) -> dict[str, list[tuple]]:
    grouped: dict[str, list[tuple]] = {}
    for row in rows:
        grouped.setdefault(row[0], []).append(row[1:])
    return grouped


class _Lanes:
    """Lanes in first-use order within their kind: the task, steps by number, locks."""

    def __init__(self) -> None:
        self.steps: dict[int, list[str]] = {}
        self.locks: list[str] = []

    def note(self, step: int | None, lock: str | None, tool: str | None = None) -> None:
        if lock is not None:
            if lock not in self.locks:
                self.locks.append(lock)
        elif step is not None:
            tools = self.steps.setdefault(step, [])
            if tool is not None and tool not in tools:
                tools.append(tool)

    def build(self) -> tuple[list[Lane], dict]:
        lanes = [Lane("T", "task")]
        index: dict = {}
        for step in sorted(self.steps):
            tools = self.steps[step]
            label = f"step {step}" + (f" {tools[0]}" if tools else "") + (f" +{len(tools) - 1}" if len(tools) > 1 else "")
            index[("step", step)] = len(lanes)
            lanes.append(Lane(str(step), label))
        for n, lock in enumerate(self.locks, 1):
            index[("lock", lock)] = len(lanes)
            lanes.append(Lane(f"L{n}", f"lock {lock}"))
        return lanes, index


def _lane_key(event: Mapping) -> tuple[int | None, str | None]:
    """(step, lock) of an event: lock events live in their lock's lane, ops in their step's."""
    if event.get("op") in _LOCK_OPS and event.get("target") is not None:
        return None, event["target"]
    return event.get("step"), None


def _role(event: Mapping) -> str:
    op = event.get("op")
    if op in ("task_start", "task_end"):
        return op
    if op in _LOCK_OPS:
        return "acquire" if op == "lock_acquire" else "release"
    return {"start": "start", "end": "end"}.get(event.get("phase"), "instant")


def _timeline(task_id: str, event_rows: list[tuple], ops: list[tuple], leases: list[tuple],
              findings: list[dict]) -> Timeline:
    total = event_rows[0][1]
    marks: dict[int, list[int]] = {}
    for number, finding in enumerate(findings, 1):
        for e in finding.get("events") or ():
            marks.setdefault(e["event_id"], []).append(number)

    lanes = _Lanes()
    rows: list[Row] = []
    last_pos = 0
    for pos, _total, ts_ms, *values, extra in event_rows:
        if pos > last_pos + 1:
            rows.append(_gap(last_pos + 1, pos - last_pos - 1, rows))
        event = {k: v for k, v in zip(_COLUMNS, values) if v is not None}
        if extra:
            event["extra"] = json.loads(extra)
        # a step is labelled by the tools it writes with, not by those it verifies with
        lanes.note(*_lane_key(event), event.get("tool") if event.get("op") in ("call", "rollback") else None)
        rows.append(Row("event", None, ts_ms, describe(event), _role(event), OUTCOME.get(event.get("status"), "other"),
                        pos, event=event, marks=marks.get(event["event_id"], [])))
        last_pos = pos
    if total > last_pos:
        rows.append(_gap(last_pos + 1, total - last_pos, rows))
    for _op, step, *_ in ops:
        lanes.note(step, None)
    for lease in leases:
        lanes.note(None, lease[0])

    # Leases that ran out (or ended at another task's lock event) end where no drawn row is.
    endings = [_lease_end(lease) for lease in leases]
    for row in sorted((r for r in endings if r is not None), key=lambda r: r.ts_ms):
        rows.insert(bisect_right([r.ts_ms for r in rows], row.ts_ms), row)

    lane_list, lane_index = lanes.build()
    for row in rows:
        if row.kind == "event":
            step, lock = _lane_key(row.event)
            row.lane = lane_index.get(("lock", lock) if lock is not None else ("step", step), 0)
        elif row.kind == "expiry":
            row.lane = lane_index[("lock", row.event["target"])]
    at = _Positions(rows)

    spans = [Span(lane_index.get(("step", step), 0), op, at(start), None if end is None else at(end), outcome,
                  dangling, None if settled is None else at(settled))
             for op, step, outcome, dangling, start, end, settled in ops]
    for lease, ending in zip(leases, endings):
        lock, _owner, _ttl, end_kind, _end_ms, start, end = lease
        end_row = _index(rows, ending) if ending is not None else (None if end is None else at(end))
        spans.append(Span(lane_index[("lock", lock)], "lease", at(start), end_row, end_kind))

    events = [r for r in rows if r.kind == "event"]
    return Timeline(task_id, min(r.ts_ms for r in events), max(r.ts_ms for r in events),
                    events[0].event["ts"], max(events, key=lambda r: r.ts_ms).event["ts"], total,
                    lane_list, rows, spans, findings)


def _gap(first: int, count: int, rows: list[Row]) -> Row:
    # A gap has no time of its own; it sorts after the event drawn before it.
    ts_ms = rows[-1].ts_ms if rows else 0
    return Row("gap", None, ts_ms, f"… {count} event(s) not drawn", "gap", pos=first, omitted=count)


def _lease_end(lease: tuple) -> Row | None:
    lock, owner, ttl_ms, end_kind, end_ms, _start, end = lease
    if end_kind == "expired":
        text = f"lease of {lock} (owner {owner}) ran out after ttl={duration(ttl_ms)}"
    elif end_kind in ("released", "renewed") and end is None:
        text = f"lease of {lock} (owner {owner}) {end_kind} by another task's lock event"
    else:
        return None
    return Row("expiry", None, end_ms, text, "expiry", event={"target": lock})


def _index(rows: list[Row], row: Row) -> int:
    return next(i for i, r in enumerate(rows) if r is row)


class _Positions:
    """Row index of a task position: its event's row, or the gap that left it out."""

    def __init__(self, rows: list[Row]) -> None:
        placed = [(r.pos, i) for i, r in enumerate(rows) if r.pos is not None]
        self.starts = [p for p, _ in placed]
        self.rows = [i for _, i in placed]

    def __call__(self, pos: int) -> int:
        return self.rows[bisect_right(self.starts, pos) - 1]
