"""The memory DuckDB gets when the user sets no `--memory-limit`: sized to the input.

DuckDB's own default is 80% of RAM, and it keeps what it builds in memory while
it has room: on a machine with 24 GB a 1M-event log with 200k findings made a
1.4 GB process for a 223 MB log, where a limit of 1.5 times the log, spilling
the rest to a temporary directory, keeps it under 500 MB (for about a third
more CPU time).  So the default limit is HEADROOM times what the input takes
as rows in memory (a JSONL or CSV file about its own size, a Parquet,
compressed or database file EXPANSION times its size), at least FLOOR and at
most 80% of RAM, as DuckDB's.

A limit the user sets also decides the threads, unless they are set too: each
DuckDB thread holds its own share of a query's state, and DuckDB's own advice
for running out of memory is fewer threads first.  A 10M-event log under 1 GB
failed with two threads ("failed to pin block") and completed with one, at
1.18 GB.  So it is one thread per PER_THREAD of the limit, at least one."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from nonatomic.config import usable_cpus

from nonatomic.replay.ingest.inputs import LogFile

FLOOR = 256 << 20
HEADROOM = 1.5
EXPANSION = {"parquet": 12, "gzip": 10, "zstd": 10, "database": 10}
"""About how many times its size on disk a file takes as rows in memory (measured on the
benchmark's synthetic log: Parquet 13, gzip 11, a DuckDB database 10)."""
MiB = 1 << 20
PER_THREAD = 1000**3  # DuckDB reads "1GB" as 10**9 bytes
_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-z]*|%)\s*", re.IGNORECASE)


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


def threads_for(memory_limit: str) -> int | None:
    """The DuckDB threads a user's `memory_limit` affords (None: a size DuckDB reads and we
    do not, left to DuckDB's default and its own error)."""
    size = _bytes(memory_limit)
    if size is None:
        return None
    return max(1, min(usable_cpus(), size // PER_THREAD))


def _bytes(memory_limit: str) -> int | None:
    """`500MB`, `1GiB`, `50%` (of RAM) as DuckDB reads them, in bytes."""
    match = _SIZE.fullmatch(memory_limit)
    if not match:
        return None
    number, unit = float(match[1]), match[2].lower()
    if unit == "%":
        ram = _ram()
        return int(number / 100 * ram) if ram else None
    scale = _UNITS.get(unit or "b") or _UNITS.get(unit + "b")  # DuckDB reads `1G` as `1GB`
    return int(number * scale) if scale else None


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
