"""Which files a database already holds, so that ingesting them again adds nothing twice.

A file's identity is its path and its content.  Each ingest of a file leaves a
row in `ingested_files`: the file's content hash and size at that moment, its
last line, and whether that line was complete.  Before the next ingest of a
file (its `change`):

- `unchanged`: the same content, at this path or any other (a copy, a rotated
  log), is skipped;
- `grown`: the same path whose file still starts with the ingested bytes (an
  uncompressed JSONL or CSV log that grew) gets only its new lines; a last line
  that was cut off mid-write is replaced by its completed version;
- `replaced`: the same path with other content (a repaired line, a rewritten
  export, a compressed or Parquet file that grew) replaces its earlier version,
  events, quarantine and ledger rows, in the transaction that loads it;
- `new`: anything else is ingested in full.

Events, quarantine and span counts carry a file's name, so two files never
share one: a path as given that another file already carries (the same
relative name run from another directory) gives way to the real path.

In-memory runs start empty, so they skip the hashing.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from dataclasses import dataclass

from nonatomic.replay.ingest.inputs import LogFile
from nonatomic.replay.ingest.schema import EVENT_ROWS

LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS ingested_files (
    file        VARCHAR NOT NULL,
    realpath    VARCHAR NOT NULL,
    sha256      VARCHAR,
    size        BIGINT NOT NULL,
    lines       BIGINT NOT NULL,
    last_line   BIGINT NOT NULL,
    complete    BOOLEAN NOT NULL,
    ingested_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)
"""
_CHUNK = 1 << 20


CHANGES = ("new", "grown", "replaced", "unchanged")


@dataclass(frozen=True)
class Plan:
    file: str
    """The name events of this file carry (kept from the first ingest of a growing log)."""
    change: str = "new"
    """One of CHANGES."""
    after_line: int = 0
    """Lines up to this one are already in the database."""
    replace_line: int | None = None
    """A previously cut-off last line whose records give way to its completed version."""
    sha256: str | None = None
    previous: str | None = None
    """For `replaced`: the name the earlier version's events carry."""
    held_elsewhere: bool = False
    """For `replaced`: the new content is already held under another path, so the earlier
    version goes and nothing is loaded."""

    @property
    def loads(self) -> bool:
        return self.change != "unchanged" and not self.held_elsewhere


def plan(con, log: LogFile, persistent: bool) -> Plan:
    """What to ingest of this file, and what it replaces."""
    if not persistent:
        return Plan(log.path)
    realpath = os.path.realpath(log.path)
    previous = con.execute(
        "SELECT file, sha256, size, last_line, complete FROM ingested_files "
        "WHERE realpath = $realpath ORDER BY ingested_at DESC, size DESC LIMIT 1",
        {"realpath": realpath},
    ).fetchone()
    prefix_size = previous[2] if previous else None
    digest, prefix_digest = _sha256(log.location, prefix_size)
    if previous is not None and previous[1] == digest:
        return Plan(previous[0], "unchanged", sha256=digest)
    # Held under another path; this path's own older rows (a log that grew, then was cut back to
    # what it once was) are versions it replaces, not copies.
    held = con.execute("SELECT 1 FROM ingested_files WHERE sha256 = $sha AND realpath <> $realpath LIMIT 1",
                       {"sha": digest, "realpath": realpath}).fetchone()
    if previous is None:
        return Plan(_own_name(con, log, realpath), "unchanged" if held else "new", sha256=digest)
    file, _, _, last_line, complete = previous
    grown = prefix_digest == previous[1] and log.format in ("jsonl", "csv", "otlp") and log.compression == "none"
    if not grown or held:
        return Plan(_own_name(con, log, realpath), "replaced", sha256=digest, previous=file,
                    held_elsewhere=bool(held))
    if complete:
        return Plan(file, "grown", after_line=last_line, sha256=digest)
    return Plan(file, "grown", after_line=last_line - 1, replace_line=last_line, sha256=digest)


def _own_name(con, log: LogFile, realpath: str) -> str:
    """The name this file's events carry: the path as given, unless another file (the same
    relative name run from another directory) already carries it; then its real path, or
    for a stream copied in (standard input, a pipe: its real path means nothing) a number."""
    def taken(name: str) -> bool:
        return con.execute("SELECT 1 FROM ingested_files WHERE file = $name AND realpath <> $realpath LIMIT 1",
                           {"name": name, "realpath": realpath}).fetchone() is not None

    first = (log.path,) if log.spooled else (log.path, realpath)
    names = itertools.chain(first, (f"{first[-1]} ({n})" for n in itertools.count(2)))
    return next(name for name in names if not taken(name))


def record(con, log: LogFile, plan_: Plan, lines: int, last_line: int) -> None:
    con.execute(
        "INSERT INTO ingested_files (file, realpath, sha256, size, lines, last_line, complete) "
        "VALUES ($file, $realpath, $sha, $size, $lines, $last_line, $complete)",
        {"file": plan_.file, "realpath": os.path.realpath(log.path), "sha": plan_.sha256,
         "size": log.size, "lines": lines, "last_line": last_line, "complete": ends_with_newline(log)},
    )


def forget(con, log: LogFile, plan_: Plan) -> None:
    """Remove the earlier version of a replaced file: its events, quarantine, span and document counts
    and ledger rows."""
    con.execute(f"DELETE FROM {EVENT_ROWS} WHERE file_id = (SELECT file_id FROM log_files WHERE file = $file)",
                {"file": plan_.previous})
    con.execute("DELETE FROM quarantine WHERE file = $file", {"file": plan_.previous})
    con.execute("DELETE FROM trace_spans WHERE file = $file", {"file": plan_.previous})
    con.execute("DELETE FROM spanless_documents WHERE file = $file", {"file": plan_.previous})
    con.execute("DELETE FROM ingested_files WHERE realpath = $realpath", {"realpath": os.path.realpath(log.path)})


def begin(con, log: LogFile, plan_: Plan) -> int:
    """The number this file's events are stored under (a new name gets the next one), once the
    earlier version it replaces, or the cut-off last line, is gone."""
    if plan_.change == "replaced":
        forget(con, log, plan_)
    known = con.execute("SELECT file_id FROM log_files WHERE file = $file", {"file": plan_.file}).fetchone()
    if known is None:
        known = con.execute("INSERT INTO log_files SELECT coalesce(max(file_id), 0) + 1, $file FROM log_files "
                            "RETURNING file_id", {"file": plan_.file}).fetchone()
    if plan_.replace_line is not None:
        con.execute(f"DELETE FROM {EVENT_ROWS} WHERE file_id = $id AND line = $line",
                    {"id": known[0], "line": plan_.replace_line})
        con.execute("DELETE FROM quarantine WHERE file = $file AND line = $line",
                    {"file": plan_.file, "line": plan_.replace_line})
    return known[0]


def ends_with_newline(log: LogFile) -> bool:
    """Whether the last line is complete; compressed files are assumed so (checking means decompressing)."""
    if log.format == "parquet" or log.compression != "none":
        return True
    with open(log.location, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _sha256(path: str, prefix_size: int | None) -> tuple[str, str | None]:
    """The file's digest, and the digest of its first prefix_size bytes (one read)."""
    digest = hashlib.sha256()
    prefix_digest = None
    done = 0
    with open(path, "rb") as fh:
        while True:
            want = _CHUNK if prefix_size is None or done >= prefix_size else min(_CHUNK, prefix_size - done)
            chunk = fh.read(want)
            if not chunk:
                break
            digest.update(chunk)
            done += len(chunk)
            if done == prefix_size:
                prefix_digest = digest.copy().hexdigest()
    if prefix_size == 0:
        prefix_digest = hashlib.sha256().hexdigest()
    return digest.hexdigest(), prefix_digest
