"""Turning LOG arguments (files, directories, globs) into log files with a format.

The format comes from the name (`.jsonl`, `.ndjson`, `.json`, `.log`, `.csv`,
`.parquet`, each JSONL/CSV optionally `.gz`/`.zst`) or, for other names, from
the first bytes; a JSON file whose first document is a trace export (OTLP
`resourceSpans`, or the SDK console exporter's span objects) is read as
`otlp`.  `--input-format` overrides all of this.
"""

from __future__ import annotations

import glob
import gzip
import os
from dataclasses import dataclass
from pathlib import Path

from nonatomic.replay.ingest.spans import looks_like_traces

FORMATS = ("jsonl", "csv", "parquet", "otlp")

_SUFFIX_FORMAT = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".log": "jsonl",
                  ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
_SUFFIX_COMPRESSION = {".gz": "gzip", ".zst": "zstd"}
_MAGIC_COMPRESSION = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd"}


class InputError(Exception):
    """A LOG argument names nothing readable (exit code 2)."""


@dataclass(frozen=True)
class LogFile:
    path: str
    """The path as the user named it (or as found under a directory): what reports cite."""
    format: str
    compression: str
    """'none', 'gzip' or 'zstd' (JSONL and CSV only)."""

    @property
    def size(self) -> int:
        return os.stat(self.path).st_size


def discover(arguments: list[str], input_format: str = "auto") -> list[LogFile]:
    """Every log file named by the arguments, in argument order, each once."""
    found: dict[str, LogFile] = {}
    for argument in arguments:
        for path in _expand(argument):
            key = os.path.realpath(path)
            if key not in found:
                found[key] = _classify(path, input_format)
    return list(found.values())


def _expand(argument: str) -> list[str]:
    if os.path.isdir(argument):
        paths = sorted(
            os.path.join(root, name)
            for root, dirs, names in os.walk(argument)
            for name in names
            if not name.startswith(".") and _known_suffix(name)
        )
        if not paths:
            raise InputError(f"{argument}: directory holds no log files (.jsonl, .csv, .parquet, ...)")
        return paths
    if os.path.exists(argument) or not glob.has_magic(argument):
        _check_readable(argument)
        return [argument]
    paths = sorted(p for p in glob.glob(argument, recursive=True) if os.path.isfile(p))
    if not paths:
        raise InputError(f"{argument}: no file matches")
    return paths


def _check_readable(path: str) -> None:
    try:
        with open(path, "rb"):
            pass
    except IsADirectoryError as exc:  # pragma: no cover - directories are expanded above
        raise InputError(f"{path}: is a directory") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from exc


def _known_suffix(name: str) -> bool:
    suffixes = Path(name).suffixes
    if suffixes and suffixes[-1] in _SUFFIX_COMPRESSION:
        suffixes = suffixes[:-1]
    return bool(suffixes) and suffixes[-1] in _SUFFIX_FORMAT


def _classify(path: str, input_format: str) -> LogFile:
    _check_readable(path)
    with open(path, "rb") as fh:
        head = fh.read(4)
    compression = next((c for magic, c in _MAGIC_COMPRESSION.items() if head.startswith(magic)), "none")
    if input_format != "auto":
        return LogFile(path, input_format, "none" if input_format == "parquet" else compression)
    suffixes = Path(path).suffixes
    if suffixes and suffixes[-1] in _SUFFIX_COMPRESSION:
        suffixes = suffixes[:-1]
    fmt = _SUFFIX_FORMAT.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        fmt = "parquet" if head == b"PAR1" else "jsonl"
    if fmt == "jsonl" and looks_like_traces(_head_text(path, compression)):
        fmt = "otlp"
    return LogFile(path, fmt, "none" if fmt == "parquet" else compression)


_SNIFFED = 1 << 16
"""Bytes of a file's (decompressed) start read to tell a trace export from a guard log."""


def _head_text(path: str, compression: str) -> str:
    try:
        if compression == "zstd":
            return _zstd_head(path)
        opener = gzip.open if compression == "gzip" else open
        with opener(path, "rb") as fh:
            return fh.read(_SNIFFED).decode("utf-8", "replace")
    except (OSError, EOFError, gzip.BadGzipFile):
        return ""  # the reader reports what is wrong with the file


def _zstd_head(path: str) -> str:
    # No zstd decoder at run time but DuckDB's: its line reader gives the first non-blank line.
    import duckdb

    with duckdb.connect() as con:
        try:
            row = con.execute(
                "SELECT line FROM read_csv($path, columns={'line': 'VARCHAR'}, delim=chr(31), quote='', "
                "escape='', header=false, auto_detect=false, strict_mode=false, compression='zstd', "
                "max_line_size=$size, ignore_errors=true) WHERE line IS NOT NULL LIMIT 1",
                {"path": path, "size": 1 << 26}).fetchone()
        except duckdb.Error:
            return ""
    return (row[0] if row else "")[:_SNIFFED]
