"""Warnings about the input: what a run could not see, and the likely cause.

Nothing is silent (SPEC): a file that is wholly quarantined, a trace file
whose spans hold no tool call or whose documents hold no span at all, a log
whose calls carry no step (detectors that compare attempts then see nothing)
and a mapped field that no record has each give one warning, `{"file": ...,
"message": ...}` (`file` is null for a warning about the whole run), which the
CLI prints on stderr and the JSON report lists.  Warnings are judged over the
whole database, like the summary; one more comes from the run's own ingest:
zstd files whose line ends this interpreter cannot check.
"""

from __future__ import annotations

from nonatomic.replay.ingest.conventions import pack
from nonatomic.replay.ingest.mapping import FieldMapping
from nonatomic.rules.replay import DETECTORS

_HINTS = (
    # (start of the first quarantine reason, likely cause)
    ("invalid JSON", "is it one JSON document spread over lines or a JSON array? Guard logs are JSON Lines, "
                     "one object per line (trace exports are read in any shape; --input-format otlp forces it)"),
    ("truncated last line", "the file was cut off while it was written"),
    ("missing task_id", "no record names its task: map your field with --mapping (fields: {task_id: ...})"),
    ("missing ts", "no record has a time: map your field with --mapping (fields: {ts: ...})"),
    ("bad ts", "times are not RFC 3339 or epoch seconds/milliseconds"),
    ("not an OTLP TracesData object", "it is not a trace export: pass --input-format jsonl for a guard log"),
    ("bytes that are not UTF-8", "the file is not UTF-8 text (is it compressed without a .gz/.zst name?)"),
    ("CSV", "check the CSV's delimiter and header"),
)


def notices(con, mapping: FieldMapping | None = None) -> list[dict]:
    return [*_wholly_quarantined(con), *_traces_without_tools(con), *_traces_without_spans(con),
            *_calls_without_steps(con), *_mapped_but_absent(con, mapping)]


def _wholly_quarantined(con) -> list[dict]:
    rows = con.execute("""
        SELECT f.file, f.lines, (SELECT reason FROM quarantine q WHERE q.file = f.file ORDER BY line LIMIT 1)
        FROM (SELECT file, sum(lines) AS lines FROM ingested_files GROUP BY file) f
        WHERE f.lines > 0
          AND NOT EXISTS (SELECT 1 FROM events e WHERE e.file = f.file)
          AND (SELECT count(*) FROM quarantine q WHERE q.file = f.file) = f.lines
        ORDER BY f.file
    """).fetchall()
    out = []
    for file, lines, reason in rows:
        hint = next((h for start, h in _HINTS if (reason or "").startswith(start) or start in (reason or "")),
                    "check --input-format and --mapping")
        out.append({"file": file, "message": f"every one of its {lines} line(s) was quarantined "
                                             f"(first: {reason}): {hint}"})
    return out


def _traces_without_tools(con) -> list[dict]:
    rows = con.execute("""
        SELECT file, sum(spans) FILTER (WHERE NOT tool) AS ignored,
               string_agg(kind || ' ' || spans, ', ' ORDER BY spans DESC, kind) FILTER (WHERE NOT tool) AS kinds
        FROM (SELECT file, kind, tool, sum(spans) AS spans FROM trace_spans GROUP BY ALL)
        GROUP BY file HAVING coalesce(sum(spans) FILTER (WHERE tool), 0) = 0
        ORDER BY file
    """).fetchall()
    conventions = ", ".join(c.name for c in pack().conventions)
    return [{"file": file, "message": f"{ignored} span(s), none of them a tool call ({kinds}): is the tool "
                                      f"instrumentation on? Tool spans are read in these conventions: {conventions}"}
            for file, ignored, kinds in rows]


def _traces_without_spans(con) -> list[dict]:
    rows = con.execute("""
        SELECT file, sum(documents) FROM spanless_documents d
        WHERE NOT EXISTS (SELECT 1 FROM trace_spans s WHERE s.file = d.file)
          AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.file = d.file)
        GROUP BY file ORDER BY file
    """).fetchall()
    return [{"file": file, "message": f"its {documents} trace document(s) hold no span at all, so nothing was read "
                                      "from it: was it exported before any span ended, or with every span "
                                      "filtered out?"}
            for file, documents in rows]


def unscanned_notice(files: list[str]) -> list[dict]:
    """A warning about the whole run (a file is not to blame, so --strict passes): zstd files
    whose line ends went unchecked, where line numbers can be off."""
    if not files:
        return []
    named = ", ".join(files[:5]) + (", ..." if len(files) > 5 else "")
    return [{"file": None, "message": f"the line ends of {len(files)} zstd file(s) were not checked ({named}): this "
                                      "Python has no zstd decoder (Python 3.14 has one), so a lone CR there ends "
                                      "a line early and an empty CSV line is not counted, and the line numbers "
                                      "after either are off; decompress such a file to replay it exactly"}]


STEPS_SQL = "SELECT count(*), count(step) FROM {events} WHERE op IN ('call', 'rollback')"
"""Calls and rollbacks, and those with a step (both engines run it over their events)."""


def _calls_without_steps(con) -> list[dict]:
    return steps_notice(*con.execute(STEPS_SQL.format(events="event_rows")).fetchone())


def steps_notice(calls: int, stepped: int) -> list[dict]:
    """The warning of a log whose calls carry no step, given the counts of STEPS_SQL."""
    if calls == 0 or stepped > 0:
        return []
    off = ", ".join(sorted(d.code for d in DETECTORS.values() if d.needs_steps))
    return [{"file": None, "message": f"no call or rollback carries a step, so {off} (which compare the attempts "
                                      f"of a step) found nothing: map your step field with --mapping "
                                      f"(fields: {{step: ...}})"}]


def _mapped_but_absent(con, mapping: FieldMapping | None) -> list[dict]:
    if mapping is None or not mapping.fields:
        return []
    events = con.execute("SELECT count(*) FROM event_rows").fetchone()[0]
    if events == 0:
        return []
    out = []
    for canonical, theirs in mapping.fields.items():
        present = con.execute(f"SELECT count({canonical}) FROM event_rows").fetchone()[0]  # a canonical column name
        if present == 0:
            out.append({"file": None, "message": f"mapped field {canonical} ({theirs!r}) is in none of the "
                                                 f"{events} event(s): check its spelling in the mapping"})
    return out
