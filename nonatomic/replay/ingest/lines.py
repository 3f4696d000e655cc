"""Lines as `grep -n` and `wc -l` count them: a line ends at LF (a CR before it is part of
the line end), and a lone CR is a byte inside its line.

DuckDB's CSV scanner, which reads JSONL lines, also ends a line at a lone CR: a
file holding one gets more lines than it has, every later line number is off,
and the byte after the CR starts a new "line" (a valid line was quarantined as
invalid JSON).  Such files, found by a scan of their bytes, are read here
instead, split at LF only, into a table the JSONL reader reads its lines from.

DuckDB's strict CSV reader takes one line end for a whole file (its first
line's): a CSV log mixing LF and CRLF ends, found by the same scan, is read
from a plain copy with every CRLF made LF, which has the same lines.

The scan needs the decompressed bytes (compression.open_decompressed): a zstd
file goes unscanned where the interpreter has no zstd decoder.
"""

from __future__ import annotations

import os
from dataclasses import replace

from nonatomic.replay.ingest.compression import open_decompressed
from nonatomic.replay.ingest.inputs import LogFile

EXACT_LINES = "nonatomic_exact_lines"
BLANK_LINES = "nonatomic_blank_lines"
_CHUNK = 1 << 20
_BATCH = 100_000


class LineEnds:
    """The line ends of bytes fed in pieces (a file's chunks): how many lines end with LF
    alone and how many with CRLF, and whether a CR stands alone (not followed by LF)."""

    def __init__(self) -> None:
        self.lf = 0
        self.crlf = 0
        self._lone = False
        self._pending = False  # the previous piece ended with a CR

    def feed(self, piece: bytes) -> None:
        if not piece:
            return
        crlf = piece.count(b"\r\n")
        if self._pending:
            if piece.startswith(b"\n"):
                crlf += 1
            else:
                self._lone = True
        ends_with_cr = piece.endswith(b"\r")
        if piece.count(b"\r") - ends_with_cr != piece.count(b"\r\n"):
            self._lone = True
        self._pending = ends_with_cr
        self.crlf += crlf
        self.lf += piece.count(b"\n") - crlf

    @property
    def lone_cr(self) -> bool:
        """Once every piece was fed: whether some CR is not followed by LF (the last byte, say)."""
        return self._lone or self._pending

    @property
    def mixed(self) -> bool:
        return self.lf > 0 and self.crlf > 0


def line_ends(log: LogFile) -> LineEnds | None:
    """The file's line ends, from one pass over its decompressed bytes; None when they cannot be read."""
    source = open_decompressed(log)
    if source is None:
        return None
    ends = LineEnds()
    with source:
        while chunk := source.read(_CHUNK):
            ends.feed(chunk)
    return ends


def lf_copy(log: LogFile, directory: str) -> LogFile:
    """The file as a plain copy in `directory` with every CRLF made LF: the same lines, one
    line end.  (Only CRs before an LF go: a line keeps its number and every other byte.)"""
    target = os.path.join(directory, "lf-copy")
    source = open_decompressed(log)
    assert source is not None, "only a scanned file is copied"
    with source, open(target, "wb") as out:
        held = b""  # a CR ending the previous chunk: its LF may start the next
        while chunk := source.read(_CHUNK):
            chunk = held + chunk
            held = b"\r" if chunk.endswith(b"\r") else b""
            out.write(chunk[:len(chunk) - len(held)].replace(b"\r\n", b"\n"))
        out.write(held)
    return replace(log, compression="none", spooled=target)


def load_blank_lines(con, log: LogFile) -> bool:
    """CREATE BLANK_LINES (`line`) with the numbers of the file's empty lines, which DuckDB's
    CSV reader skips without counting them; False, and no table, when there are none (or
    the file is zstd and the interpreter has no decoder)."""
    source = open_decompressed(log)
    if source is None:
        return False
    blank: list[int] = []
    with source:
        for number, raw in enumerate(source, start=1):
            if raw in (b"\n", b"\r\n"):
                blank.append(number)
    if not blank:
        return False
    con.execute(f"CREATE OR REPLACE TEMP TABLE {BLANK_LINES} AS SELECT CAST(unnest($lines) AS BIGINT) AS line",
                {"lines": blank})
    return True


def load_exact_lines(con, log: LogFile, max_line_bytes: int) -> None:
    """CREATE EXACT_LINES (`line`, `bad`: why the line cannot be read, else NULL), one row per
    line in file order; lines are texts without their LF or CRLF ending."""
    import pandas as pd  # only such files need it: the rest of replay streams through DuckDB

    con.execute(f"CREATE OR REPLACE TEMP TABLE {EXACT_LINES} (line VARCHAR, bad VARCHAR)")
    source = open_decompressed(log)
    assert source is not None, "only a scanned file is read here"
    rows: list[tuple[str | None, str | None]] = []
    with source:
        for raw in source:
            rows.append(_row(raw, max_line_bytes))
            if len(rows) == _BATCH:
                _append(con, pd.DataFrame(rows, columns=["line", "bad"], dtype=object))
                rows = []
    if rows:
        _append(con, pd.DataFrame(rows, columns=["line", "bad"], dtype=object))


def _row(raw: bytes, max_line_bytes: int) -> tuple[str | None, str | None]:
    body = raw[:-1] if raw.endswith(b"\n") else raw
    body = body[:-1] if raw.endswith(b"\r\n") else body
    if len(body) > max_line_bytes:
        return body[:max_line_bytes].decode("utf-8", "replace"), f"line longer than {int(max_line_bytes)} bytes"
    try:
        return body.decode("utf-8"), None
    except UnicodeDecodeError:
        return body.decode("utf-8", "replace"), "bytes that are not UTF-8"


def _append(con, frame) -> None:
    con.register("nonatomic_exact_batch", frame)
    try:
        con.execute(f"INSERT INTO {EXACT_LINES} SELECT line, bad FROM nonatomic_exact_batch")
    finally:
        con.unregister("nonatomic_exact_batch")
