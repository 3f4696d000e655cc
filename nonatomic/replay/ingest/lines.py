"""Lines as `grep -n` and `wc -l` count them: a line ends at LF (a CR before it is part of
the line end), and a lone CR is a byte inside its line.

DuckDB's CSV scanner, which reads JSONL lines, also ends a line at a lone CR: a
file holding one gets more lines than it has, every later line number is off,
and the byte after the CR starts a new "line" (a valid line was quarantined as
invalid JSON).  Such files, found by a scan of their bytes, are read here
instead, split at LF only, into a table the JSONL reader reads its lines from.
"""

from __future__ import annotations

import gzip

from nonatomic.replay.ingest.inputs import LogFile

EXACT_LINES = "nonatomic_exact_lines"
BLANK_LINES = "nonatomic_blank_lines"
_CHUNK = 1 << 20
_BATCH = 100_000


class LoneCR:
    """Finds a CR not followed by LF in bytes fed in pieces (a file's chunks)."""

    def __init__(self) -> None:
        self.found = False
        self._pending = False  # the previous piece ended with a CR

    def feed(self, piece: bytes) -> None:
        if self.found or not piece:
            return
        if self._pending and not piece.startswith(b"\n"):
            self.found = True
        self._pending = piece.endswith(b"\r")
        if b"\r" in piece and piece.count(b"\r") - self._pending != piece.count(b"\r\n"):
            self.found = True

    def at_end(self) -> bool:
        return self.found or self._pending  # a CR as the last byte


def has_lone_cr(log: LogFile, scanner: LoneCR | None = None) -> bool:
    """Whether the file holds a CR that is not followed by LF; `scanner`, when given, has
    already been fed the decompressed bytes (the integrity check reads them anyway).  An
    uncompressed file is read here; a zstd file is not scanned: the standard library
    cannot decompress it."""
    if scanner is not None:
        return scanner.at_end()
    if log.compression != "none":
        return False
    scanner = LoneCR()
    with open(log.location, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            scanner.feed(chunk)
            if scanner.found:
                return True
    return scanner.at_end()


def mixes_line_ends(log: LogFile) -> bool:
    """Whether the file's first megabyte ends some lines with LF and others with CRLF."""
    if log.compression == "zstd":
        return False
    opener = gzip.open if log.compression == "gzip" else open
    with opener(log.location, "rb") as fh:
        head = fh.read(_CHUNK)
    crlf = head.count(b"\r\n")
    return 0 < crlf < head.count(b"\n")


def load_blank_lines(con, log: LogFile) -> bool:
    """CREATE BLANK_LINES (`line`) with the numbers of the (uncompressed or gzip) file's empty
    lines, which DuckDB's CSV reader skips without counting them; False, and no table, when
    there are none (or the file is zstd, which the standard library cannot read)."""
    if log.compression == "zstd":
        return False
    opener = gzip.open if log.compression == "gzip" else open
    blank: list[int] = []
    with opener(log.location, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
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
    opener = gzip.open if log.compression == "gzip" else open
    rows: list[tuple[str | None, str | None]] = []
    with opener(log.location, "rb") as fh:
        for raw in fh:
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
