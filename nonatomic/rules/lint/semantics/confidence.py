"""How sure a finding is: every link of its chain seen at the site, or one inferred.

A finding of a default-on rule fails a build, so it stands at its rule's severity only
on positive evidence: a write that is known (`Write.known`, not reached through a
helper) inside a retry that is known (`RetryScope.known`).  When a link was inferred
(the write is a helper that calls something that may write, the loop was taken for a
retry from its shape alone) the finding is still reported, with the chain in its
message, at `INFERRED` severity: shown, never failing a build set to fail on warnings.
"""

from __future__ import annotations

from collections.abc import Iterable

from nonatomic.rules.lint.semantics.model import RetryScope
from nonatomic.rules.lint.semantics.tools import Write

INFERRED = "info"


def severity(write: Write | None, scopes: Iterable[RetryScope], *, handed: bool = False) -> str | None:
    """None (the rule's own severity) when every link was seen, else `INFERRED`.
    `handed`: the retry construct was handed the function itself (`Retrying()(fn)`, a
    task queue's `enqueue(fn, retry=...)`), so the writes of its own body are direct."""
    if write is not None and (write.hops > int(handed) or not write.known):
        return INFERRED
    return None if all(scope.known for scope in scopes) else INFERRED


def shape_note(scope: RetryScope) -> str:
    """What a message adds when the retry was inferred from a loop's shape (or a
    framework's decorator from a keyword alone)."""
    if scope.known:
        return ""
    return " (taken for a retry from its keywords)" if "inferred" in scope.config else " (taken for a retry from its shape)"
