"""The timeline of a task, built from the database: the model (report.model) the renderers draw.

A timeline is a list of rows in the task's event order (one per log line,
plus a row where a lock lease ran out by its TTL and a row for each run of
events left out), a set of lanes (the task, each step, each owner of each
lock) and spans over rows: op intervals and lock leases.  Rows keep the
detectors' order ("before" means what the detectors mean by it); each row
has its time, and the renderers draw time to scale.

A lock lane shows every owner's lease of that lock while the task ran
(until its own leases ended), other tasks' included: their lock events are
rows of kind `foreign` in lanes of their own, so a foreign release (NR202)
or two owners at once (NR203) are in the picture.

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
from nonatomic.rules.replay.views import (EVENT_ROWS, FOREVER_MS, LEASES, LOCK_EVENTS, OPS, OUTCOME, WRITE,
                                          events_stage)
from nonatomic.rules.severity import rank

MAX_EVENTS = 200
"""Events drawn per task; witnesses of findings, task start/end and their neighbours first."""
MAX_TASKS = 100
"""Tasks drawn per page or terminal run; the rest are named in a note."""

MAX_FOREIGN = 40
"""Other tasks' lock events drawn per timeline (a hot lock has thousands): the first in the window."""

FOREVER = int(FOREVER_MS)
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
    others = _other_owners(con, [_window(task, events[task], leases.get(task, [])) for task in task_ids
                                 if task in events])
    return [_timeline(task, events[task], ops.get(task, []), leases.get(task, []), by_task.get(task, []),
                      others.get(task, ([], [])))
            for task in task_ids if task in events]


def _window(task: str, event_rows: list[tuple], leases: list[tuple]) -> dict:
    """The locks a task touched and the time in which other owners' leases of them are drawn:
    from its first event until its last event or the end of its last lease (no end: open)."""
    op, target = (3 + _COLUMNS.index(k) for k in ("op", "target"))
    locks = {row[target] for row in event_rows if row[op] in _LOCK_OPS and row[target] is not None}
    ends = [row[2] for row in event_rows] + [lease[4] for lease in leases if lease[4] is not None]
    until = FOREVER if any(lease[3] == "open" for lease in leases) else max(ends)
    return {"task": task, "locks": sorted(locks | {lease[0] for lease in leases}),
            "since": min(row[2] for row in event_rows), "until": until}


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


# Other tasks' leases of the drawn tasks' locks: the lease stages over those locks' events only,
# each lease matched to the windows (one per drawn task, see _window) it overlaps.
_WINDOWS = "windows AS (SELECT UNNEST(CAST($windows AS STRUCT(task VARCHAR, locks VARCHAR[], since BIGINT, " \
           "until BIGINT)[]), recursive := true))"
_LOCKS_SCOPE = ",\n".join([_WINDOWS] + [
    f"{name} AS (SELECT * FROM main.{name} WHERE op IN {_LOCK_OPS} "
    f"AND target IN (SELECT UNNEST(locks) FROM windows))" for name in (EVENT_ROWS, "events")])

_OTHER_LEASES = "WITH " + ",\n".join(
    [_LOCKS_SCOPE, *(f"{s.name} AS ({s.sql})" for s in (events_stage(EVENT_ORDER), LOCK_EVENTS, LEASES))]) + """,
matched AS (
    SELECT w.task, l.acquire_id, CASE WHEN l.end_kind IN ('released', 'renewed') THEN le.next_id END AS end_id,
           l.lock_name, l.owner, l.task_id, l.ttl_ms, l.end_kind, l.end_ms, l.start_ms
    FROM nr_leases l
    JOIN nr_lock_events le ON le.event_id = l.acquire_id
    JOIN windows w ON list_contains(w.locks, l.lock_name) AND l.task_id <> w.task
         AND l.start_ms <= w.until AND (l.end_ms IS NULL OR l.end_ms >= w.since)
)"""

_OTHER_LEASES_SQL = _OTHER_LEASES + """
SELECT task, acquire_id, end_id, lock_name, owner, task_id, ttl_ms, end_kind, end_ms FROM matched
ORDER BY task, start_ms, acquire_id
"""

_OTHER_EVENTS_SQL = _OTHER_LEASES + f""",
wanted AS (
    SELECT w.task, e.*, ROW_NUMBER() OVER (PARTITION BY w.task ORDER BY e.ts, e.seq NULLS LAST, e.task_id, e.file, e.line)
           AS n
    FROM events e
    JOIN windows w ON list_contains(w.locks, e.target) AND e.task_id <> w.task
    WHERE (epoch_ms(e.ts) BETWEEN w.since AND w.until)
       OR e.event_id IN (SELECT acquire_id FROM matched m WHERE m.task = w.task
                         UNION ALL SELECT end_id FROM matched m WHERE m.task = w.task)
)
SELECT task, epoch_ms(ts) AS ts_ms,
       {", ".join(c if c != "ts" else "strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%gZ') AS ts" for c in _COLUMNS)},
       task_id, extra
FROM wanted
WHERE n <= $limit
ORDER BY task, n
"""


def _other_owners(con, windows: list[dict]) -> dict[str, tuple[list[tuple], list[tuple]]]:
    """Per drawn task: other tasks' leases of its locks that overlap its window, and their lock events there."""
    windows = [w for w in windows if w["locks"]]
    if not windows:
        return {}
    leases = _group(con.execute(_OTHER_LEASES_SQL, {"windows": windows}).fetchall())
    events = _group(con.execute(_OTHER_EVENTS_SQL, {"windows": windows, "limit": MAX_FOREIGN}).fetchall())
    return {w["task"]: (leases.get(w["task"], []), events.get(w["task"], [])) for w in windows}


def _group(rows: list[tuple]) -> dict[str, list[tuple]]:
    grouped: dict[str, list[tuple]] = {}
    for row in rows:
        grouped.setdefault(row[0], []).append(row[1:])
    return grouped


class _Lanes:
    """Lanes in first-use order within their kind: the task, steps by number, then each lock's
    owners (this task's first, then other tasks')."""

    def __init__(self) -> None:
        self.steps: dict[int, dict[tuple[str, str | None], set]] = {}
        self.owners: dict[tuple[str, str], str | None] = {}
        """(lock, owner) -> the other task holding it, None for this task's own."""

    def note(self, event: Mapping, task: str | None = None) -> None:
        """An event of this task, or of another `task` (then only its lock events are noted)."""
        key = _lane_key(event)
        if key[0] == "lock":
            self.owners.setdefault(key[1:], task)
        elif key[1] is not None:
            ops = self.steps.setdefault(key[1], {})
            if event.get("op") in ("call", "rollback", "verify"):
                ops.setdefault((event["op"], event.get("tool")), set()).add(event.get("attempt"))

    def build(self) -> tuple[list[Lane], dict]:
        lanes = [Lane("T", "task")]
        index: dict = {}
        for step in sorted(self.steps):
            index[("step", step)] = len(lanes)
            lanes.append(Lane(str(step), " ".join([f"step {step}", *_in_words(self.steps[step])])))
        owners = sorted(self.owners, key=lambda k: self.owners[k] is not None)  # stable: first use within each
        for n, (lock, owner) in enumerate(owners, 1):
            other = self.owners[(lock, owner)]
            index[("lock", lock, owner)] = len(lanes)
            lanes.append(Lane(f"L{n}", f"lock {lock}, owner {owner}" + (f" (task {other})" if other else ""),
                              other_task=other))
        return lanes, index


def _in_words(ops: Mapping[tuple[str, str | None], set]) -> list[str]:
    """What a step did, for its lane: `charge_card, 2 attempts; rollback void_charge; verify get_charge`."""
    words = []
    for (op, tool), attempts in ops.items():
        name = tool or "(no tool)"
        tries = len(attempts - {None}) or 1
        words.append((name if op == "call" else f"{op} {name}") + (f", {tries} attempts" if tries > 1 else ""))
    return ["; ".join(words)] if words else []


def _lane_key(event: Mapping) -> tuple:
    """Lock events live in their lock owner's lane (`("lock", lock, owner)`), ops in their step's."""
    if event.get("op") in _LOCK_OPS and event.get("target") is not None:
        return "lock", event["target"], str(event.get("owner") or event["task_id"])
    return "step", event.get("step")


def _role(event: Mapping) -> str:
    op = event.get("op")
    if op in ("task_start", "task_end"):
        return op
    if op in _LOCK_OPS:
        return "acquire" if op == "lock_acquire" else "release"
    return {"start": "start", "end": "end"}.get(event.get("phase"), "instant")


def _timeline(task_id: str, event_rows: list[tuple], ops: list[tuple], leases: list[tuple],
              findings: list[dict], others: tuple[list[tuple], list[tuple]]) -> Timeline:
    total = event_rows[0][1]
    marks: dict[int, list[int]] = {}
    because: dict[int, list[tuple[int, int, str]]] = {}
    for number, finding in enumerate(findings, 1):
        for e in finding.get("events") or ():
            marks.setdefault(e["event_id"], []).append(number)
        for k, line in enumerate(finding.get("because") or ()):
            for event_id, clause in _cited(line, finding.get("events") or ()):
                because.setdefault(event_id, []).append((number, k, clause))

    lanes = _Lanes()
    rows: list[Row] = []
    last_pos = 0
    for pos, _total, ts_ms, *values, extra in event_rows:
        if pos > last_pos + 1:
            rows.append(_gap(last_pos + 1, pos - last_pos - 1, rows))
        event = {"task_id": task_id, **{k: v for k, v in zip(_COLUMNS, values) if v is not None}}
        if extra:
            event["extra"] = json.loads(extra)
        lanes.note(event)
        rows.append(Row("event", None, ts_ms, describe(event), _role(event), OUTCOME.get(event.get("status"), "other"),
                        pos, event=event, marks=marks.get(event["event_id"], []),
                        because=because.get(event["event_id"], [])))
        last_pos = pos
    if total > last_pos:
        rows.append(_gap(last_pos + 1, total - last_pos, rows))
    for _op, step, *_ in ops:
        lanes.note({"step": step})
    for lease in leases:
        lanes.note({"op": "lock_acquire", "target": lease[0], "owner": lease[1], "task_id": task_id})

    # Leases that ran out (or ended at another task's lock event) end where no drawn row is.
    endings = [_lease_end(lease) for lease in leases]
    for row in (r for r in endings if r is not None):
        _insert(rows, row)

    # Other tasks' leases of this task's locks, from the task's start until its own leases ended (_window).
    foreign: dict[int, Row] = {}
    other_leases, other_events = others
    for ts_ms, *values, other_task, extra in other_events:
        event = {"task_id": other_task, **{k: v for k, v in zip(_COLUMNS, values) if v is not None}}
        if extra:
            event["extra"] = json.loads(extra)
        lanes.note(event, other_task)
        foreign[event["event_id"]] = _insert(rows, Row(
            "foreign", None, ts_ms, f"{describe(event)} (task {other_task})", _role(event),
            OUTCOME.get(event.get("status"), "other"), event=event, marks=marks.get(event["event_id"], []),
            because=because.get(event["event_id"], [])))
    other_leases = [lease for lease in other_leases if lease[0] in foreign]
    for lease in other_leases:
        if lease[6] == "expired":
            _insert(rows, Row("expiry", None, lease[7], _ran_out(lease[2], lease[3], lease[5], lease[4]), "expiry",
                              event={"target": lease[2], "owner": lease[3], "task_id": lease[4]}))

    lane_list, lane_index = lanes.build()
    for row in rows:
        if row.kind in ("event", "foreign", "expiry"):
            row.lane = lane_index.get(_lane_key({"op": "lock_acquire", **row.event} if row.kind == "expiry"
                                                else row.event), 0)
    at = _Positions(rows)

    spans = [Span(lane_index.get(("step", step), 0), op, at(start), None if end is None else at(end), outcome,
                  dangling, None if settled is None else at(settled))
             for op, step, outcome, dangling, start, end, settled in ops]
    for lease, ending in zip(leases, endings):
        lock, owner, _ttl, end_kind, _end_ms, start, end = lease
        end_row = _index(rows, ending) if ending is not None else (None if end is None else at(end))
        spans.append(Span(lane_index[("lock", lock, owner)], "lease", at(start), end_row, end_kind))
    for acquire_id, end_id, lock, owner, _task, _ttl, end_kind, end_ms in other_leases:
        start_row = foreign[acquire_id]
        end_row = foreign.get(end_id) if end_id is not None else next(
            (r for r in rows if r.kind == "expiry" and r.ts_ms == end_ms and r.event.get("owner") == owner
             and r.event["target"] == lock), None)
        spans.append(Span(start_row.lane, "lease", _index(rows, start_row),
                          None if end_row is None else _index(rows, end_row), end_kind))

    events = [r for r in rows if r.kind == "event"]
    return Timeline(task_id, min(r.ts_ms for r in events), max(r.ts_ms for r in events),
                    events[0].event["ts"], max(events, key=lambda r: r.ts_ms).event["ts"], total,
                    lane_list, rows, spans, findings)


def _cited(line: str, witnesses: Iterable[Mapping]) -> list[tuple[int, str]]:
    """(event id, the line's clause) of each witness a "because" line cites: the line ends with its
    witnesses' `file:line`s in parentheses (`because the rollback of step 2 started first (a.jsonl:6)`)."""
    cited, start = [], len(line)
    for e in witnesses:
        token = f"{e['file']}:{e['line']}"
        if any(p in line for p in (f"({token})", f"({token}, ", f", {token}, ", f", {token})")):
            cited.append(e["event_id"])
            at = line.rfind(f" ({token}")
            start = at if at != -1 else start
    return [(event_id, line[:start]) for event_id in cited]


def _insert(rows: list[Row], row: Row) -> Row:
    """Put a row without a place in the task's order (a lease's end, another task's event) at its time."""
    rows.insert(bisect_right([r.ts_ms for r in rows], row.ts_ms), row)
    return row


def _gap(first: int, count: int, rows: list[Row]) -> Row:
    # A gap has no time of its own; it sorts after the event drawn before it.
    ts_ms = rows[-1].ts_ms if rows else 0
    return Row("gap", None, ts_ms, f"… {count} event(s) not drawn", "gap", pos=first, omitted=count)


def _ran_out(lock: str, owner: str, ttl_ms: int, task: str | None = None) -> str:
    holder = f"owner {owner}" + (f", task {task}" if task else "")
    return f"lease of {lock} ({holder}) ran out after ttl={duration(ttl_ms)}"


def _lease_end(lease: tuple) -> Row | None:
    lock, owner, ttl_ms, end_kind, end_ms, _start, end = lease
    if end_kind == "expired":
        text = _ran_out(lock, owner, ttl_ms)
    elif end_kind in ("released", "renewed") and end is None:
        text = f"lease of {lock} (owner {owner}) {end_kind} by another task's lock event"
    else:
        return None
    return Row("expiry", None, end_ms, text, "expiry", event={"target": lock, "owner": owner})


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
