"""Whether a compressed log is whole, checked before any of it is ingested.

DuckDB's readers stop quietly where a zstd stream ends early (a file cut at
half gave half its lines, and no error), and decode a corrupted gzip member
without checking its CRC.  A log that lost its end must be refused (exit 2),
never read as if it were shorter, so each file is checked first:

- gzip: every member decompressed with zlib, which checks its CRC and length
  and notices a member cut short (one pass, in C, no output kept);
- zstd: the frames walked block by block from their headers (RFC 8878), which
  finds a stream cut short or trailing bytes that are not a frame; a frame's
  own checksum, when it has one, is checked by DuckDB's decoder.

DuckDB decompresses gzip and zstd for its readers but hands back no bytes, and
some scans need them (line ends, blank CSV lines: lines.py): those read gzip
with the standard library, and zstd with its decoder where the interpreter has
one (Python 3.14's `compression.zstd`); elsewhere a zstd file goes unscanned,
and the run says so.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from typing import BinaryIO

from nonatomic.replay.ingest.inputs import InputError, LogFile

_CHUNK = 1 << 20
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SKIPPABLE = range(0x184D2A50, 0x184D2A60)


def _standard_zstd_open() -> Callable[..., BinaryIO] | None:
    try:
        from compression import zstd  # Python 3.14 and later
    except ImportError:
        return None
    return zstd.open


ZSTD_OPEN = _standard_zstd_open()
"""open(path, "rb") of the interpreter's zstd decoder, or None when it has none."""


def open_decompressed(log: LogFile) -> BinaryIO | None:
    """The file's bytes, decompressed; None for a zstd file when the interpreter has no decoder."""
    if log.compression == "gzip":
        return gzip.open(log.location, "rb")
    if log.compression == "zstd":
        return ZSTD_OPEN(log.location, "rb") if ZSTD_OPEN is not None else None
    return open(log.location, "rb")


def check_whole(log: LogFile, seen: Callable[[bytes], None] | None = None) -> None:
    """Raise InputError when `log` is compressed and its stream is cut short or corrupt;
    `seen` gets each decompressed piece of a gzip file (one pass serves other scans)."""
    if log.compression == "gzip":
        problem = _gzip_problem(log.location, seen or (lambda piece: None))
    elif log.compression == "zstd":
        problem = _zstd_problem(log.location)
    else:
        return
    if problem:
        raise InputError(f"{log.path}: {problem}; nothing of it was ingested")


def _gzip_problem(path: str, seen: Callable[[bytes], None]) -> str | None:
    decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
    inside = False  # part of a member was fed and the member has not ended
    offset = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            offset += len(chunk)
            while chunk:
                if not inside and not chunk.strip(b"\0"):
                    break  # zero padding after the last member, as gzip(1) allows
                inside = True
                try:
                    seen(decoder.decompress(chunk, _CHUNK))
                    while decoder.unconsumed_tail:  # bounded output: a small bomb stays small
                        seen(decoder.decompress(decoder.unconsumed_tail, _CHUNK))
                except zlib.error as exc:
                    return f"corrupt gzip stream ({exc})"
                chunk = b""
                if decoder.eof:  # a member ended, its CRC and length checked: another may follow
                    chunk = decoder.unused_data
                    decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
                    inside = False
    if inside:
        return f"truncated gzip stream (the file ends at byte {offset}, inside a member)"
    return None


def _zstd_problem(path: str) -> str | None:
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(0)
        position = 0
        while position < size:
            magic = _read(fh, position, 4)
            if magic is None:
                return f"trailing bytes after the last zstd frame (at byte {position})"
            number = int.from_bytes(magic, "little")
            if number in _SKIPPABLE:
                length = _read(fh, position + 4, 4)
                if length is None:
                    return f"truncated zstd stream (a skippable frame at byte {position})"
                position += 8 + int.from_bytes(length, "little")
                if position > size:
                    return f"truncated zstd stream (a skippable frame ends past byte {size})"
                continue
            if magic != _ZSTD_MAGIC:
                return f"not a zstd frame at byte {position}"
            end = _zstd_frame_end(fh, position, size)
            if isinstance(end, str):
                return end
            position = end
    return None


def _zstd_frame_end(fh, start: int, size: int) -> int | str:
    """Where the zstd frame starting at `start` ends, or what is wrong with it."""
    descriptor = _read(fh, start + 4, 1)
    if descriptor is None:
        return f"truncated zstd stream (a frame header at byte {start})"
    flags = descriptor[0]
    single_segment = bool(flags & 0x20)
    if flags & 0x08:
        return f"corrupt zstd stream (a reserved bit is set in the frame at byte {start})"
    content_size = (1 if single_segment else 0, 2, 4, 8)[flags >> 6]
    position = start + 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[flags & 0x03] + content_size
    while True:
        header = _read(fh, position, 3)
        if header is None:
            return f"truncated zstd stream (the file ends at byte {size}, inside the frame at byte {start})"
        value = int.from_bytes(header, "little")
        last, kind, block_size = value & 1, (value >> 1) & 3, value >> 3
        if kind == 3:
            return f"corrupt zstd stream (a reserved block type at byte {position})"
        position += 3 + (1 if kind == 1 else block_size)
        if position > size:
            return f"truncated zstd stream (the file ends at byte {size}, inside a block)"
        if last:
            break
    if flags & 0x04:  # Content_Checksum_flag
        position += 4
        if position > size:
            return f"truncated zstd stream (the frame at byte {start} lost its checksum)"
    return position


def _read(fh, position: int, count: int) -> bytes | None:
    fh.seek(position)
    data = fh.read(count)
    return data if len(data) == count else None
