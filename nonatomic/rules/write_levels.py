"""How bad a tool's side effect is, from its name: the part of the tool registry both engines read.

The shipped verbs by level (`tools.yaml`: none < low < high < irreversible)
and the user's `[tool.nonatomic.tools]` (`write`, `read`, `levels`) decide;
a name's first verb, before any preposition, gives its level
(`refund_payment` is irreversible, `get_or_create` a write, `create_task`
plumbing).  The linter builds its full registry on this; replay grades the
findings of a write by it.  No libcst here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.tool_config import tool_pack

SEVERE = ("high", "irreversible")
"""Levels whose unprotected retries are errors: payments, refunds, transfers, email, deploys, permissions."""


class NameLevels:
    def __init__(self, table: Mapping[str, Any] | None = None) -> None:
        pack = tool_pack()
        table = table or {}
        self.verb_level = {verb: level for level, verbs in pack["write_verbs"].items() for verb in verbs}
        self.read_verbs = set(pack["read_verbs"])
        self.in_process = set(pack["in_process_nouns"])
        self.prepositions = set(pack["prepositions"])
        self.levels: dict[str, str] = dict(table.get("levels", {}))
        self.write_globs, self.read_globs = [], []
        for entry in table.get("write", []):
            if is_word(entry):
                self.verb_level[entry.lower()] = self.levels.get(entry, "high")
                self.read_verbs.discard(entry.lower())
            else:
                self.write_globs.append(entry)
        for entry in table.get("read", []):
            if is_word(entry):
                self.read_verbs.add(entry.lower())
                self.verb_level.pop(entry.lower(), None)
            else:
                self.read_globs.append(entry)

    def name_level(self, name: str) -> tuple[str | None, bool]:
        """The write level a name's verb gives, and whether the verb is the whole name."""
        if name[:1].isupper():
            return None, False  # a class: building an object is not a tool call
        found = word_list(name)
        for i, word in enumerate(found[:2]):
            if word in self.prepositions:
                break
            level = self.verb_level.get(word)
            if level is not None:
                if i + 1 < len(found) and found[-1] in self.in_process:
                    return None, False  # `create_task`, `add_handler`: plumbing
                return self.levels.get(name, level), len(found) == 1
            if word in self.read_verbs:
                if found[i + 1 : i + 2] in (["or"], ["and"]) and found[i + 2 : i + 3]:
                    joined = self.verb_level.get(found[i + 2])  # `get_or_create`
                    if joined is None or found[-1] in self.in_process:
                        return None, False  # `get_or_create_session`: a factory
                    return self.levels.get(name, joined), False
                return None, False
        return None, False

    def named_for_read(self, name: str) -> bool:
        """The name's verb is a read verb (`_fetch_context_info`, `get_quote`), not joined to a
        write verb (`get_or_create`, `check_and_send`)."""
        found = word_list(name)
        for i, word in enumerate(found[:2]):
            if word in self.prepositions or word in self.verb_level:
                return False
            if word in self.read_verbs:
                return found[i + 1 : i + 2] not in (["or"], ["and"])
        return False

    def write_severity(self, tool: str | None) -> str:
        """`error` for a high or irreversible write, `warning` for any other tool (or none named)."""
        if not tool:
            return "warning"
        level = self.levels.get(tool) or self.name_level(tool.rsplit(".", 1)[-1])[0]
        return "error" if level in SEVERE else "warning"


def is_word(entry: str) -> bool:
    return entry.isidentifier() and "_" not in entry.strip("_")
