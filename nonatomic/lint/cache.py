"""A content-hash cache of per-file results, so an unchanged tree re-lints near-instantly.

One index file per settings key under `.nonatomic_cache/`: path -> (mtime, size,
sha256 of the bytes, findings).  A file whose stat is unchanged is not even
read; one whose stat changed but whose bytes hash the same is reused too.  An
entry of any other shape (a damaged or foreign cache file) is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import typing
from dataclasses import fields
from pathlib import Path

from nonatomic.lint.findings import Finding

CACHE_DIR = ".nonatomic_cache"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class LintCache:
    def __init__(self, root: Path, key: str) -> None:
        self.directory = root / CACHE_DIR
        self.file = self.directory / f"{key}.json"
        self.entries: dict[str, list] = {}
        self.dirty = False
        try:
            self.entries = json.loads(self.file.read_text("utf-8"))
        except (OSError, ValueError):
            self.entries = {}
        if not isinstance(self.entries, dict):  # valid JSON, not ours: start afresh
            self.entries = {}

    def by_stat(self, relpath: str, stat: os.stat_result) -> list[Finding] | None:
        entry = self._entry(relpath)
        if entry and entry[0] == stat.st_mtime_ns and entry[1] == stat.st_size:
            return entry[3]
        return None

    def digest(self, relpath: str) -> str | None:
        entry = self._entry(relpath)
        return entry[2] if entry else None

    def findings(self, relpath: str) -> list[Finding]:
        """The findings of an entry `digest` returned a digest for."""
        entry = self._entry(relpath)
        assert entry is not None
        return entry[3]

    def _entry(self, relpath: str) -> tuple[int, int, str, list[Finding]] | None:
        entry = self.entries.get(relpath)
        if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[3], list)):
            return None
        mtime, size, digest, items = entry
        if not (_is(mtime, int) and _is(size, int) and _is(digest, str)):
            return None
        if not all(isinstance(item, dict) and item.keys() == _FIELD_TYPES.keys() for item in items):
            return None
        if not all(_is(value, _FIELD_TYPES[name]) for item in items for name, value in item.items()):
            return None
        if not all(_is_site(site) for item in items for site in item["related"]):
            return None
        return mtime, size, digest, [Finding(**item) for item in items]

    def store(self, relpath: str, stat: os.stat_result, digest: str, findings: list[Finding]) -> None:
        self.entries[relpath] = [stat.st_mtime_ns, stat.st_size, digest, [f.to_dict() for f in findings]]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.directory.mkdir(exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# created by nonatomic\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.entries, fh)
            os.replace(tmp, self.file)
        except OSError:
            pass  # a read-only checkout still lints; it just does not cache


def _json_types(hint) -> tuple[type, ...]:
    """The JSON types a value of the type `hint` is cached as: a tuple or list is a JSON
    list; a union (`str | None`) any of its members."""
    origin = typing.get_origin(hint)
    if origin in (tuple, list):
        return (list,)
    if origin is None:
        return (hint,)
    return tuple(json_type for arg in typing.get_args(hint) for json_type in _json_types(arg))


# Finding field -> the JSON types its cached value may have.
_HINTS = typing.get_type_hints(Finding)
_FIELD_TYPES = {field.name: _json_types(_HINTS[field.name]) for field in fields(Finding)}


def _is_site(site: object) -> bool:
    """A cached related site: [line, col]."""
    return isinstance(site, list) and len(site) == 2 and all(_is(n, int) for n in site)


def _is(value: object, types: type | tuple[type, ...]) -> bool:
    """isinstance, where a bool is not an int (JSON keeps them apart)."""
    types = types if isinstance(types, tuple) else (types,)
    if type(value) is bool:
        return bool in types
    return isinstance(value, types)
