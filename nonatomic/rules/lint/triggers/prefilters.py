"""Prefilters: what must occur in a file's bytes for a rule to possibly fire.

They run on every file, before any parse, so they are plain regexes and substring
tests; the catalogue gives each rule its own.  No libcst here: a file that no
enabled rule's prefilter passes never loads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol


class Prefilter(Protocol):
    def search(self, data: bytes) -> object: ...


def with_line_feeds(data: bytes) -> bytes:
    """`data` with each lone CR (a line end to CPython, old Mac style) made a LF, so
    that `^` and `\\n` in the prefilters see every line; offsets are unchanged."""
    return _LONE_CR.sub(b"\n", data) if b"\r" in data else data


_LONE_CR = re.compile(rb"\r(?!\n)")


# Where a statement can start: the file's start (after a BOM), a line end, `;`, or
# the `:` of a one-line compound statement (`try: import requests`); form feeds
# count as indentation.
_STATEMENT_START = rb"(?:\A(?:\xef\xbb\xbf)?|(?<=[\n;:]))[ \t\f]*"
# Blanks inside a statement, backslash continuations included.
_BLANK = rb"(?:[ \t\f]|\\\r?\n)"


def imports(modules: list[str]) -> re.Pattern[bytes]:
    """A file that imports one of `modules` (their top-level names): a call can only
    resolve to `requests.post` where `requests` is imported.  Looser than CPython's
    grammar (a string may match), never stricter: a miss hides every finding."""
    roots = "|".join(sorted({re.escape(m.split(".", 1)[0]) for m in modules})).encode()
    return re.compile(
        _STATEMENT_START + rb"(?:from" + _BLANK + rb"+(?:" + roots + rb")\b|import" + _BLANK
        + rb"(?:[^\n\\]|\\\r?\n|\\.)*?\b(?:" + roots + rb")\b)"
    )


@dataclass(frozen=True)
class Words:
    """A file that contains one of `words` (and every one of `required`), as plain
    substrings: many times faster than a regex alternation, and a looser test is
    fine where a gate looks at the syntax tree next."""

    words: tuple[bytes, ...]
    required: tuple[bytes, ...] = ()
    ignore_case: bool = False

    def search(self, data: bytes) -> bool:
        text = data.lower() if self.ignore_case else data
        return all(word in text for word in self.required) and any(word in text for word in self.words)


@dataclass(frozen=True)
class Spellings:
    """Names spelled many ways (`Idempotency-Key`, `idempotency_key`, `IdempotencyKey`):
    a file passes when its text, lower-cased and without `-` and `_`, contains one of
    `spellings` (given in that normal form) and `also` matches.  Plain substring
    tests: a case-insensitive regex alternation is ten times slower."""

    spellings: tuple[bytes, ...]
    also: re.Pattern[bytes] | None = None

    def search(self, data: bytes) -> bool:
        if self.also is not None and not self.also.search(data):
            return False
        text = data.lower().replace(b"-", b"").replace(b"_", b"")
        return any(spelling in text for spelling in self.spellings)


class MutatedGlobal:
    """A `global` statement, or an unindented `NAME = <container>` whose NAME is used
    again through a subscript or an attribute (plain substring tests).  Whether a
    function writes through that use is the gate's question (`gates.mutated_global`)."""

    _GLOBAL = re.compile(rb"(?m)^[ \t]+global[ \t]")
    _DEFINITION = re.compile(
        rb"(?m)^((?:\w+(?:[ \t]*:[^=\n]*)?[ \t]*=[ \t]*)+)"
        rb"(?:[{\[]|(?:[\w.]+\.)?(?:dict|list|set|bytearray|defaultdict|OrderedDict|Counter|deque"
        rb"|ChainMap|Weak\w+)\()"
    )
    _NAME = re.compile(rb"(\w+)(?:[ \t]*:[^=\n]*)?[ \t]*=")
    _USES = (b"[", b".", b" [", b" .", b"\t[")

    def search(self, data: bytes) -> bool:
        if b"global" in data and self._GLOBAL.search(data):
            return True
        names = {
            name
            for match in self._DEFINITION.finditer(data)
            for name in self._NAME.findall(match.group(1))
        } - {b"__all__"}
        return any(name + use in data for name in names for use in self._USES)
