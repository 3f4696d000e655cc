"""A content-hash cache of per-file results, so an unchanged tree re-lints near-instantly.

One index file per settings key under `.nonatomic_cache/`: path -> (mtime, size,
sha256 of the bytes, findings).  A file whose stat is unchanged is not even
read; one whose stat changed but whose bytes hash the same is reused too.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
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

    def by_stat(self, relpath: str, stat: os.stat_result) -> list[Finding] | None:
        entry = self.entries.get(relpath)
        if entry and entry[0] == stat.st_mtime_ns and entry[1] == stat.st_size:
            return self.findings(relpath)
        return None

    def digest(self, relpath: str) -> str | None:
        entry = self.entries.get(relpath)
        return entry[2] if entry else None

    def findings(self, relpath: str) -> list[Finding]:
        return [Finding(**item) for item in self.entries[relpath][3]]

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
