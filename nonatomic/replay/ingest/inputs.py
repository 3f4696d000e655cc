"""Turning LOG arguments (files, directories, globs) into log files with a format.

The format comes from the name (`.jsonl`, `.ndjson`, `.json`, `.log`, `.csv`,
`.parquet`, each JSONL/CSV optionally `.gz`/`.zst`) or, for other names, from
the first bytes; a JSON file whose first document is a trace export (OTLP
`resourceSpans`, or the SDK console exporter's span objects) is read as
`otlp`.  `--input-format` overrides all of this.

`-` is standard input.  Standard input, pipes (`/dev/stdin`, `<(zcat ...)`) and
named pipes cannot be read twice or seeked, and DuckDB does both: they are
copied once into a temporary file (the spool directory the caller owns) and read
from there, while reports still cite the name the user gave.
"""

from __future__ import annotations

import glob
import gzip
import os
import shutil
import stat
import sys
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
    spooled: str | None = None
    """The temporary copy of standard input or a pipe, when `path` cannot be read again."""

    @property
    def location(self) -> str:
        """Where the bytes are read."""
        return self.spooled or self.path

    @property
    def size(self) -> int:
        return os.stat(self.location).st_size


STDIN = "-"


def discover(arguments: list[str], input_format: str = "auto", spool_dir: str | None = None) -> list[LogFile]:
    """Every log file named by the arguments, in argument order, each once.  Standard
    input and pipes are copied into `spool_dir`; without one they are an InputError."""
    found: dict[str, LogFile] = {}
    for argument in arguments:
        for path in _expand(argument):
            key = path if path == STDIN else os.path.realpath(path)
            if key in found:
                continue
            if path == STDIN or not _regular(path):
                found[key] = _classify(path, input_format, _spool(path, spool_dir, len(found)))
            else:
                found[key] = _classify(path, input_format)
    return list(found.values())


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from exc


def _spool(path: str, spool_dir: str | None, number: int) -> str:
    """Copy standard input or a pipe, read once to its end, into a file of `spool_dir`
    (named like the original, so that its suffix still tells the format)."""
    shown = "standard input" if path == STDIN else path
    if spool_dir is None:
        raise InputError(f"{shown}: a pipe or standard input cannot be read here; pass a file")
    target = os.path.join(spool_dir, f"{number}-{'stdin' if path == STDIN else os.path.basename(path)}")
    try:
        with open(target, "wb") as out:
            if path == STDIN:
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            else:
                with open(path, "rb") as source:
                    shutil.copyfileobj(source, out, 1 << 20)
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror or exc}") from exc
    return target


def _expand(argument: str) -> list[str]:
    if argument == STDIN:
        return [STDIN]
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
        if not os.path.exists(argument) or _regular(argument):  # a pipe is opened once, when spooled
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


def _classify(path: str, input_format: str, spooled: str | None = None) -> LogFile:
    location = spooled or path
    _check_readable(location)
    with open(location, "rb") as fh:
        head = fh.read(4)
    compression = next((c for magic, c in _MAGIC_COMPRESSION.items() if head.startswith(magic)), "none")
    named = _SUFFIX_COMPRESSION.get(Path(path).suffix)
    if named is not None and compression == "none":  # cut before its first bytes, or not compressed at all
        raise InputError(f"{path}: named as {named} but not a {named} stream (cut short, or mis-named)")
    if input_format != "auto":
        return LogFile(path, input_format, "none" if input_format == "parquet" else compression, spooled)
    suffixes = Path(location).suffixes
    if suffixes and suffixes[-1] in _SUFFIX_COMPRESSION:
        suffixes = suffixes[:-1]
    fmt = _SUFFIX_FORMAT.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        fmt = "parquet" if head == b"PAR1" else "jsonl"
    if fmt == "jsonl" and looks_like_traces(_head_text(location, compression)):
        fmt = "otlp"
    return LogFile(path, fmt, "none" if fmt == "parquet" else compression, spooled)


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
