"""The words names are made of, for rules that judge a name's meaning."""

from __future__ import annotations

import re

import libcst as cst

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def word_list(text: str) -> list[str]:
    """Lower-case words in order: `create_ticket`, `createTicket`, `HTTPClient` -> create ticket, http client."""
    return [w.lower() for w in _WORD.findall(text)]


def words(text: str) -> set[str]:
    """Lower-case words of identifiers and strings: `lockKey`, `lock_key`, "lock:{id}" all give "lock"."""
    return set(word_list(text))


def source(node: cst.CSTNode) -> str:
    """A node's code on one line, for messages and for comparing expressions."""
    return " ".join(cst.Module([]).code_for_node(node).split())
