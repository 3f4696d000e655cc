"""Findings built inside DuckDB, kept in a table and read out in pieces.

A detector's rows (see `rules.replay.base`) become findings in SQL: the
evidence is joined from the events, the message is the detector's template
compiled to string concatenation, the fingerprint is a SHA-256 in the
engine, and each finding is stored as its JSON text next to the columns
that sort, group and filter it.  Reports read the table through `Findings`:
JSON streams every finding in batches, the human formats read counts and the
first few findings of each group, so no report holds all findings in Python.

The finding's fields are those of `detect.shape_findings` (which the Spark
engine's driver uses); the test suite pins the two equal field for field.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime

from nonatomic.replay.ingest.fields import CITED
from nonatomic.replay.report.model import CodeGroups, Group
from nonatomic.rules.replay import DETECTORS
from nonatomic.rules.replay.base import Detector
from nonatomic.rules.replay.views import EVENT_ROWS
from nonatomic.rules.severity import SEVERITIES

TABLE = "nr_findings"
BATCH = 10_000
"""Findings fetched from the engine at a time while streaming."""
TS_FORMAT = "%Y-%m-%dT%H:%M:%S.%gZ"
"""A finding's and a witness's time as text (UTC, milliseconds)."""
SUBJECTS = (("tool", "tool"), ("lock_name", "lock"))
"""What a finding is grouped by inside its code: the first message field of these that the
detector's template names (field, label); a detector with neither is grouped by task."""
ORDER = "task_id, ts, code, step IS NOT NULL, coalesce(step, 0), fingerprint"
"""The findings' order (detect._sort_key's)."""

DDL = f"""
CREATE OR REPLACE TEMP TABLE {TABLE} (
    code VARCHAR, severity VARCHAR, task_id VARCHAR, step BIGINT, ts VARCHAR, moment TIMESTAMPTZ,
    fingerprint VARCHAR, subject_kind VARCHAR, subject VARCHAR, finding VARCHAR
)
"""
_FILE = "file_map[x.file]"
"""The file of an evidence struct `x`, which carries its rank (see insert_sql)."""
_CITE = f"{_FILE} || ':' || x.line || CASE WHEN coalesce(x.span_id, '') <> '' THEN ' span ' || x.span_id ELSE '' END"
"""report.model.cite in SQL, over an evidence struct `x`."""
_RANK = "CASE severity " + " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(SEVERITIES)) + " ELSE 9 END"


def subject_field(detector: Detector) -> tuple[str, str] | None:
    """(field, label) the detector's findings are grouped by, from the fields its messages name."""
    templates = [detector.message] if isinstance(detector.message, str) else list(detector.message.values())
    named = {name for t in templates for _, name, _, _ in string.Formatter().parse(t) if name}
    return next(((f, label) for f, label in SUBJECTS if f in named), None)


def graded(detector: Detector, columns: Mapping[str, str]) -> bool:
    """Does the write level of the rows' `tool` grade the detector's findings (rules.replay.base)?"""
    return detector.graded_by_write and "tool" in columns


def insert_sql(detector: Detector, raw: str, columns: Mapping[str, str], where_clause: str = "") -> str:
    """INSERT the findings of `raw` (a table of the detector's rows plus a `rid`) into TABLE.

    `columns` maps the raw table's columns to their DuckDB types; `where` filters on
    `f.task_id` / `f.moment` (bound by the caller), and a `graded` detector's findings are
    errors for the tools in `$severe_tools` (bound by the caller: write_levels decides).
    """
    severity = f"coalesce(r.severity, '{detector.severity}')" if "severity" in columns else f"'{detector.severity}'"
    if graded(detector, columns):
        severity = f"CASE WHEN list_contains($severe_tools, CAST(r.tool AS VARCHAR)) THEN 'error' ELSE {severity} END"
    subject = subject_field(detector)
    kind, value = (f"'{subject[1]}'", _text(f"r.{_quote(subject[0])}", columns[subject[0]])) if subject else \
        ("'task'", "r.task_id")
    names = [name for name, _ in detector.witnesses]
    ids = "coalesce(r.witness_ids, [])" if "witness_ids" in columns else "CAST([] AS BIGINT[])"
    # because lines: for each named witness, the clause and where its events are (report.model.cite), in the
    # evidence's time order, an event cited once for each position the name has it at
    cited = [f"flatten(list_transform(p.evidence, lambda x: list_transform(list_filter(string_split(x.names, "
             f"chr(31)), lambda n: n = {_literal(n)}), lambda n: {_CITE})))" for n in names]
    cites = f"[{', '.join(cited)}]" if cited else "CAST([] AS VARCHAR[][])"  # computed once, read twice
    because = ", ".join(f"CASE WHEN len(p.cites[{i}]) > 0 THEN concat('because ', {_template(clause, columns)}, ' (', "
                        f"array_to_string(p.cites[{i}], ', '), ')') END"
                        for i, (_, clause) in enumerate(detector.witnesses, 1))
    span_ids = ", ".join(f"span[{i}] AS {name}" for i, name in enumerate(CITED, 1))
    return f"""
    INSERT INTO {TABLE}
    WITH files AS (
        -- the fingerprint names files without their directory (posixpath.basename of a path with / or \\);
        -- the evidence carries a file's rank among the names, which sorts as the name does and
        -- is cheaper to gather than the text, and its time, formatted once in place
        SELECT file_id, file, regexp_replace(file, '^.*[/\\\\]', '') AS name,
               CAST(DENSE_RANK() OVER (ORDER BY file) AS INTEGER) AS file_rank
        FROM log_files
    ),
    ranks AS (
        SELECT map_from_entries(list(DISTINCT {{'k': file_rank, 'v': file}})) AS file_map,
               map_from_entries(list(DISTINCT {{'k': file_rank, 'v': name}})) AS name_map
        FROM files
    ),
    positions AS (
        SELECT rid, anchor_id, pos, ids[pos] AS event_id
        FROM (SELECT rid, anchor_id, {ids} AS ids, unnest(range(1, len({ids}) + 1)) AS pos FROM {raw} r)
        WHERE ids[pos] IS NOT NULL
    ),
    witnessed AS (
        SELECT rid, anchor_id, anchor_id AS event_id FROM {raw} WHERE anchor_id IS NOT NULL
        UNION SELECT rid, anchor_id, event_id FROM positions
    ),
    roles AS (
        -- the detector's witness names, position by position (the last one ending in _ids takes the rest);
        -- an event's role is the name of its first position, without the _id(s); its names are one text
        -- (separated by the unit separator), as a list in each struct of the evidence cost a nested aggregate
        SELECT rid, event_id, regexp_replace(arg_min(name, pos), '_[^_]*$', '') AS role,
               string_agg(name, chr(31)) AS names
        FROM (SELECT rid, pos, event_id, {_list(names)}[least(pos, {len(names)})] AS name FROM positions)
        GROUP BY ALL
    ),
    located AS (
        SELECT rid, anchor_id, event_id, file_rank, line, moment, {span_ids}
        FROM (
            -- the extra fields parsed once for both ids
            SELECT w.rid, w.anchor_id, e.event_id, f.file_rank, e.line,
                   date_trunc('millisecond', e.ts) AS moment,
                   json_extract_string(e.extra, {_list([f'$.{name}' for name in CITED])}) AS span
            FROM witnessed w JOIN {EVENT_ROWS} e USING (event_id) JOIN files f USING (file_id)
        )
    ),
    proofs AS (
        -- the evidence sorted by (ts, file, line) as structs that lead with those fields (each with the
        -- names it is witnessed by); an event read from a trace also cites its trace and span
        SELECT l.rid,
               list_sort(list({{'ts': l.moment, 'file': l.file_rank, 'line': l.line, 'event_id': l.event_id,
                                'role': coalesce(o.role, 'anchor'), 'trace_id': l.trace_id, 'span_id': l.span_id,
                                'names': coalesce(o.names, '')}})) AS evidence,
               {_ts("any_value(l.moment) FILTER (WHERE l.event_id = l.anchor_id)")} AS ts,
               any_value(l.moment) FILTER (WHERE l.event_id = l.anchor_id) AS moment
        FROM located l LEFT JOIN roles o USING (rid, event_id)
        GROUP BY l.rid
    ),
    cited AS (
        -- where each witness name's events are, as the because lines cite them
        SELECT p.*, {cites} AS cites, file_map,
               list_sort(list_transform(p.evidence, lambda x: name_map[x.file] || ':' || x.line)) AS keys
        FROM proofs p, ranks
    ),
    built AS (
        -- the evidence in the contract's order of fields
        SELECT r.task_id, r.step, {severity} AS severity, {_message(detector, columns)} AS message,
               list_filter([{because}]::VARCHAR[], lambda x: x IS NOT NULL) AS because,
               p.ts, p.moment,
               list_transform(p.evidence, lambda x: CASE WHEN x.span_id IS NULL
                   THEN to_json({{'event_id': x.event_id, 'file': {_FILE}, 'line': x.line, 'ts': {_ts("x.ts")},
                                 'role': x.role}})
                   ELSE to_json({{'event_id': x.event_id, 'file': {_FILE}, 'line': x.line, 'ts': {_ts("x.ts")},
                                 'trace_id': x.trace_id, 'span_id': x.span_id, 'role': x.role}})
                   END) AS events,
               left(sha256(concat_ws(chr(31), '{detector.code}', r.task_id, coalesce(CAST(r.step AS VARCHAR), 'None'),
                                      array_to_string(p.keys, chr(31)))), 16) AS fingerprint,
               {kind} AS subject_kind, {value} AS subject
        FROM {raw} r
        JOIN cited p USING (rid)
    )
    SELECT '{detector.code}', f.severity, f.task_id, f.step, f.ts, f.moment, f.fingerprint, f.subject_kind,
           f.subject,
           CAST(to_json({{'code': '{detector.code}', 'name': {_literal(detector.name)}, 'severity': f.severity,
                         'task_id': f.task_id, 'step': f.step, 'message': f.message, 'because': f.because,
                         'ts': f.ts, 'events': f.events, 'fingerprint': f.fingerprint}}) AS VARCHAR)
    FROM built f
    {('WHERE ' + where_clause) if where_clause else ''}
    """


def _ts(moment: str) -> str:
    """A finding's or a witness's time as text (TS_FORMAT) from its `moment`."""
    return f"strftime(timezone('UTC', {moment}), '{TS_FORMAT}')"


def _message(detector: Detector, columns: Mapping[str, str]) -> str:
    if isinstance(detector.message, str):
        return _template(detector.message, columns)
    cases = " ".join(f"WHEN {_literal(v)} THEN {_template(t, columns)}" for v, t in detector.message.items())
    return f"CASE r.variant {cases} END"


def _template(template: str, columns: Mapping[str, str]) -> str:
    """A str.format template as SQL: each field as text ('?' when NULL), `:dur` as a duration."""
    parts = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        if literal:
            parts.append(_literal(literal))
        if name is None:
            continue
        if name not in columns or conversion or spec not in ("", "dur"):
            raise ValueError(f"message field {{{name}}} has no column or an unsupported format: {template!r}")
        column = f"r.{_quote(name)}"
        value = _duration(column) if spec == "dur" else _text(column, columns[name])
        parts.append(f"coalesce({value}, '?')")
    return "concat(" + ", ".join(parts or ["''"]) + ")"


def _text(column: str, kind: str) -> str:
    """A value as Python's format(value, '') writes it."""
    if kind == "BOOLEAN":
        return f"CASE WHEN {column} THEN 'True' WHEN NOT {column} THEN 'False' END"
    if kind.endswith("]") or kind.startswith(("STRUCT", "MAP")):
        raise ValueError(f"a message field of type {kind} has no text form")
    return f"CAST({column} AS VARCHAR)"


def _duration(column: str) -> str:
    """report.model.duration in SQL (printf rounds as Python's format does)."""
    ms = f"CAST({column} AS DOUBLE)"
    return (f"CASE WHEN abs({ms}) < 100 THEN printf('%.0f ms', {ms}) "
            f"WHEN abs({ms}) < 60000 THEN printf('%.1f s', {ms} / 1000) "
            f"WHEN abs({ms}) < 3600000 THEN printf('%.1f min', {ms} / 60000) "
            f"ELSE printf('%.1f h', {ms} / 3600000) END")


def _list(texts: list[str]) -> str:
    return "[" + ", ".join(_literal(t) for t in texts) + "]"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def filters(tasks: Iterable[str] | None, since: datetime | None, until: datetime | None) -> tuple[str, dict]:
    """A WHERE clause over a finding `f` (task, time) and its parameters."""
    where, params = [], {}
    if tasks:
        where.append("f.task_id IN (SELECT unnest($tasks))")
        params["tasks"] = sorted(set(tasks))
    if since is not None:
        where.append("f.moment >= $since")
        params["since"] = since
    if until is not None:
        where.append("f.moment < $until")
        params["until"] = until
    return " AND ".join(where), params


class Findings:
    """The findings of a run, in the engine (TABLE on `con`); read them in pieces."""

    def __init__(self, con) -> None:
        self.con = con

    @classmethod
    def of(cls, shaped: list[tuple[dict, tuple]]) -> Findings:
        """Findings shaped elsewhere (detect.shape_grouped: an engine whose rows came back to the
        driver), in a DuckDB table of their own, so every report reads them alike."""
        import duckdb
        import pandas as pd

        con = duckdb.connect(config={"memory_limit": "25%"})
        con.execute("SET TimeZone = 'UTC'")
        con.execute(DDL)
        rows = pd.DataFrame({
            "code": [f["code"] for f, _ in shaped], "severity": [f["severity"] for f, _ in shaped],
            "task_id": [f["task_id"] for f, _ in shaped], "step": pd.array([f["step"] for f, _ in shaped], "Int64"),
            "ts": [f["ts"] for f, _ in shaped], "fingerprint": [f["fingerprint"] for f, _ in shaped],
            "subject_kind": [g[0] for _, g in shaped], "subject": [g[1] for _, g in shaped],
            "finding": [json.dumps(f, ensure_ascii=False) for f, _ in shaped]})
        con.register("shaped", rows)
        con.execute(f"INSERT INTO {TABLE} SELECT code, severity, task_id, step, ts, CAST(ts AS TIMESTAMPTZ), "
                    "fingerprint, subject_kind, subject, finding FROM shaped")
        con.unregister("shaped")
        return cls(con)

    def count(self) -> int:
        # fetched to the end, so the user's next con.sql() finds the connection free
        return self.con.execute(f"SELECT count(*) FROM {TABLE}").fetchall()[0][0]

    def severities(self) -> dict[str, int]:
        return dict(self.con.execute(f"SELECT severity, count(*) FROM {TABLE} GROUP BY severity").fetchall())

    def json_texts(self, limit: int | None = None) -> Iterator[str]:
        """Every finding (the first `limit`) as its JSON text, in order, fetched in batches.

        The connection serves nothing else until the last one is read (the table is a
        temporary one: another cursor would not see it)."""
        result = self.con.execute(f"SELECT finding FROM {TABLE} ORDER BY {ORDER}"
                                  + ("" if limit is None else " LIMIT $n"), {} if limit is None else {"n": limit})
        while rows := result.fetchmany(BATCH):
            for (text,) in rows:
                yield text

    def all(self, limit: int | None = None) -> list[dict]:
        return [json.loads(text) for text in self.json_texts(limit)]

    def of_tasks(self, tasks: Iterable[str]) -> list[dict]:
        rows = self.con.execute(f"SELECT finding FROM {TABLE} WHERE task_id IN (SELECT unnest($t)) ORDER BY {ORDER}",
                                {"t": list(tasks)}).fetchall()
        return [json.loads(text) for (text,) in rows]

    def worst_tasks(self, limit: int) -> tuple[list[str], int]:
        """Tasks with findings, the most severe first (then most findings, then id), and how many more."""
        rows = self.con.execute(
            f"SELECT task_id, count(*) OVER () FROM {TABLE} GROUP BY task_id "
            f"ORDER BY min({_RANK}), count(*) DESC, task_id LIMIT $n", {"n": limit}).fetchall()
        return [r[0] for r in rows], (rows[0][1] - len(rows) if rows else 0)

    def grouped(self, per_group: int, groups_per_code: int, limit: int | None = None) -> list[CodeGroups]:
        """Findings by code, then subject (largest group first): the first `per_group` of each of the first
        `groups_per_code` groups in full, at most `limit` in full over all."""
        groups = self.con.execute(
            f"""
            WITH g AS (
                SELECT code, subject_kind, subject, count(*) AS n, min({_RANK}) AS rank
                FROM {TABLE} GROUP BY ALL
            )
            SELECT code, subject_kind, subject, n, rank,
                   ROW_NUMBER() OVER (PARTITION BY code ORDER BY n DESC, subject) AS k,
                   count(*) OVER (PARTITION BY code) AS n_groups, sum(n) OVER (PARTITION BY code) AS n_code
            FROM g QUALIFY k <= $groups ORDER BY code, k
            """, {"groups": groups_per_code}).fetchall()
        shown = self.con.execute(
            f"""
            SELECT code, subject_kind, subject, finding FROM {TABLE}
            QUALIFY ROW_NUMBER() OVER (PARTITION BY code, subject_kind, subject ORDER BY {ORDER}) <= $per
            ORDER BY code, subject_kind, subject, {ORDER}
            """, {"per": per_group}).fetchall()
        full: dict[tuple, list[dict]] = {}
        for code, kind, subject, text in shown:
            full.setdefault((code, kind, subject), []).append(text)
        out: dict[str, CodeGroups] = {}
        budget = limit
        for code, kind, subject, n, rank, _, n_groups, n_code in groups:
            texts = full.get((code, kind, subject), [])
            if budget is not None:
                texts, budget = texts[:budget], max(0, budget - len(texts))
            name = DETECTORS[code].name
            entry = out.get(code)
            if entry is None:
                entry = out[code] = CodeGroups(code, name, int(n_code), [], hidden_groups=n_groups,
                                               hidden_findings=int(n_code))
            entry.groups.append(Group(code, name, SEVERITIES[rank] if rank < len(SEVERITIES) else "info", kind,
                                      subject, n, [json.loads(t) for t in texts]))
            entry.hidden_groups -= 1
            entry.hidden_findings -= n
        return list(out.values())
