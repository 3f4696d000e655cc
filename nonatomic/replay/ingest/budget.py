"""The memory DuckDB gets when the user sets no `--memory-limit`: sized to the input.

DuckDB's own default is 80% of RAM, and it keeps what it builds in memory while
it has room: on a machine with 24 GB a 1M-event log with 200k findings made a
1.4 GB process for a 223 MB log, where a limit of 1.5 times the log, spilling
the rest to a temporary directory, keeps it under 500 MB (for about a third
more CPU time).  So the default limit is HEADROOM times what the input takes
as rows in memory (a JSONL or CSV file about its own size, a Parquet,
compressed or database file EXPANSION times its size), at least FLOOR and at
most 80% of RAM, as DuckDB's."""

from __future__ import annotations

import os
from collections.abc import Iterable

from nonatomic.replay.ingest.inputs import LogFile

FLOOR = 256 << 20
HEADROOM = 1.5
EXPANSION = {"parquet": 12, "gzip": 10, "zstd": 10, "database": 10}
"""About how many times its size on disk a file takes as rows in memory (measured on the
benchmark's synthetic log: Parquet 13, gzip 11, a DuckDB database 10)."""
MiB = 1 << 20


def default_memory_limit(files: Iterable[LogFile], db: str | None = None) -> str:
    """The memory limit for DuckDB reading `files` (into the database `db`, if it exists), as DuckDB spells it."""
    held = sum(_size(f) * EXPANSION.get(f.format if f.format == "parquet" else f.compression, 1) for f in files)
    if db is not None and os.path.isfile(db):
        held += os.path.getsize(db) * EXPANSION["database"]
    limit = max(FLOOR, int(HEADROOM * held))
    ram = _ram()
    if ram:
        limit = min(limit, int(0.8 * ram))
    return f"{limit // MiB}MiB"


def _size(log: LogFile) -> int:
    try:
        return log.size
    except OSError:
        return 0  # the reader names the file it cannot open


def _ram() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows)
        return None
