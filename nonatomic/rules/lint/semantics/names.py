"""The words names are made of, for rules that judge a name's meaning.

No libcst here: the retry gate judges names before any libcst parse.
"""

from __future__ import annotations

import re
from functools import lru_cache

from nonatomic.rules.lint.semantics.packs import load_pack

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def word_list(text: str) -> list[str]:
    """Lower-case words in order: `create_ticket`, `createTicket`, `HTTPClient` -> create ticket, http client."""
    return [w.lower() for w in _WORD.findall(text)]


def words(text: str) -> set[str]:
    """Lower-case words of identifiers and strings: `lockKey`, `lock_key`, "lock:{id}" all give "lock"."""
    return set(word_list(text))


@lru_cache(maxsize=4096)  # the retry gate asks for every callee of every file
def named_like_retry(name: str | None) -> bool:
    """An unknown callable whose name says it retries (`retry_with_backoff`, not `retry_delay`)."""
    pack = load_pack("retry")
    if (name or "").split(".", 1)[0] in pack["libraries"]:
        return False  # a library the pack knows: its constructs are listed
    found = word_list((name or "").rsplit(".", 1)[-1])
    if set(found) & set(pack["predicate_words"]):
        return False
    found = found[: found.index("on")] if "on" in found[1:] else found  # `retry_on_error`
    at = next((i for i, word in enumerate(found) if word in pack["name_words"]), None)
    if at is None or (at and found[at - 1] not in pack["retrier_leads"]):
        return False  # `should_retry`, `on_retry`, `max_retries`
    return found[-1] not in pack["not_retrier_nouns"]
