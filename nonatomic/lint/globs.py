"""gitignore-style patterns, used for .gitignore files, `exclude` and `per-file-ignores`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


def _translate(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob[i] == "*":
            if glob.startswith("**", i):
                out.append(".*")
                i += 2
            else:
                out.append("[^/]*")
                i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape("["))
                i += 1
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        elif glob[i] == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Pattern:
    source: str  # the regex, compiled on first use: a set that is one regex never needs it
    negated: bool
    dir_only: bool

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.source)

    @classmethod
    def parse(cls, line: str) -> Pattern | None:
        line = line.rstrip("\n").rstrip(" ") if not line.endswith("\\ ") else line
        if not line or line.startswith("#"):
            return None
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        if line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            return None
        anchored = "/" in line
        body = _translate(line.lstrip("/"))
        prefix = "" if anchored else "(?:.*/)?"
        return cls(f"^{prefix}{body}(?:/.*)?$", negated, dir_only)


class PatternSet:
    """Ordered gitignore patterns relative to `base` ('' for the root); the last match wins."""

    def __init__(self, lines: list[str], base: str = "") -> None:
        self.base = base.strip("/")
        self.patterns = [p for p in map(Pattern.parse, lines) if p is not None]

    @cached_property
    def _any(self) -> re.Pattern[str] | None:
        """Without negations or directory-only patterns, any match ignores: one regex for
        the set (discovery asks this of every path it walks), compiled on the first, so
        that linting only the files named on the command line compiles none."""
        if any(p.negated or p.dir_only for p in self.patterns):
            return None
        return re.compile("|".join(f"(?:{p.source})" for p in self.patterns))

    def match(self, relpath: str, is_dir: bool = False) -> bool | None:
        """True: ignored, False: re-included, None: no pattern says anything."""
        if self.base:
            if not relpath.startswith(self.base + "/"):
                return None
            relpath = relpath[len(self.base) + 1 :]
        if self._any is not None:
            return True if self.patterns and self._any.match(relpath) else None
        verdict = None
        for pattern in self.patterns:
            if pattern.dir_only and not is_dir and not _matches_parent(pattern, relpath):
                continue
            if pattern.regex.match(relpath):
                verdict = not pattern.negated
        return verdict


def _matches_parent(pattern: Pattern, relpath: str) -> bool:
    """A directory-only pattern still covers the files under a matching directory."""
    parent = relpath.rsplit("/", 1)[0] if "/" in relpath else ""
    return bool(parent) and bool(pattern.regex.match(parent))


def matches_any(globs: list[str], relpath: str) -> bool:
    return bool(PatternSet(globs).match(relpath))
