"""How sure a finding is: every link of its chain seen at the site, or one inferred.

A finding of a default-on rule fails a build, so it stands at its rule's severity only
on positive evidence: a write that is known (`Write.known`, not reached through a
helper) inside a retry that is known (`RetryScope.known`).  When a link was inferred
(the write is a helper that calls something that may write, the loop was taken for a
retry from its shape alone) the finding is still reported, with the chain in its
message, at `INFERRED` severity: shown, never failing a build set to fail on warnings.

A raw HTTP call is judged by its method.  A PUT or DELETE is idempotent (RFC 9110,
9.2.2): a repeat puts or deletes the same state again, so it is `INFERRED`.  So is a PATCH
of fields (a merge patch, RFC 7396: a repeat sets the same values again), though not one
that sends a JSON Patch, whose `add` to an array a repeat adds twice.  So is any
write named for the same act (`delete_many`, `remove_member`, `upsert_row`: the
`idempotent_verbs` of tools.yaml), which urllib3 and most SDKs retry unasked, and so is a
POST that moves the one resource its URL names to a state (`/tasks/{id}/complete`: the
`state_actions` of tools.yaml), which a repeat finds already there.  A POST or
PATCH whose URL is a variable is a write inferred from the verb alone, `INFERRED`: POST is
also how model calls and searches are sent (in blind reviews of unseen code such POSTs were
chat completions and question answering as often as writes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from functools import lru_cache

import libcst as cst

from nonatomic.rules.lint.semantics.callees import dotted_name
from nonatomic.rules.lint.semantics.model import RetryScope
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.tool_config import tool_pack
from nonatomic.rules.lint.semantics.tools import Write

INFERRED = "info"
# What repeating an idempotent method does.
IDEMPOTENT_METHODS = {"PUT": "writes the same state again", "DELETE": "deletes what is already gone",
                      "PATCH": "sets the same fields again"}


def severity(write: Write | None, scopes: Iterable[RetryScope], *, handed: bool = False) -> str | None:
    """None (the rule's own severity) when every link was seen, else `INFERRED`.  `handed`:
    the retry construct was handed the function itself (`Retrying()(fn)`, a task queue's
    `enqueue(fn, retry=...)`), so the writes of its own body are direct."""
    if write is not None and (write.hops > int(handed) or not write.known or write.upsert or write.replaces
                              or idempotent_as(write)):
        return INFERRED
    if not all(scope.known for scope in scopes) or any(scope.in_tests for scope in scopes):
        return INFERRED
    if write is not None and write.http and not write.named:
        return INFERRED
    return None


def idempotent_as(write: Write) -> str | None:
    """The idempotent HTTP method the write is, by its method or the verb of the call it
    makes (`transaction.rows.delete_many` is a DELETE)."""
    if write.transition is not None:
        return "PUT"
    if write.http is not None:
        return write.http if write.http in IDEMPOTENT_METHODS and not write.operations else None
    return idempotent_name((write.via or write.name).rsplit(".", 1)[-1])


def idempotent_name(name: str) -> str | None:
    """The idempotent HTTP method a name opens with the verb of (`delete_links` is a DELETE)."""
    words = tuple(word_list(name))
    return next((method for verb, method in _idempotent_verbs().items() if words[:len(verb)] == verb), None)


@lru_cache(maxsize=1)
def _idempotent_verbs() -> dict[tuple[str, ...], str]:
    """The words a name opens with (`delete_many`, `get_or_create_user`) -> its method."""
    return {tuple(word_list(verb)): method.upper()
            for method, verbs in tool_pack()["idempotent_verbs"].items() for verb in verbs}


def write_note(write: Write) -> str:
    """What a message adds about a write judged by its HTTP method."""
    if write.transition is not None:
        return f" (`/{write.transition}` moves the one resource its URL names to a state: a repeat finds it there)"
    if write.http is not None and idempotent_as(write) == write.http:
        return f" (an HTTP {write.http}, idempotent: a repeat {IDEMPOTENT_METHODS[write.http]})"
    if (method := idempotent_as(write)) is not None:
        return f" (a {method}, idempotent: a repeat {IDEMPOTENT_METHODS[method]})"
    if write.upsert:
        return " (its statements only merge, update or delete what they name: a repeat leaves the same state)"
    if write.replaces:
        return f" (`{write.replaces}=True`: a repeat puts the same state again)"
    if write.http and not write.named:
        also = ", and POST is also used for queries" if write.http == "POST" else ""
        return f" (inferred from the HTTP verb: the URL does not name the endpoint{also})"
    return ""


def shape_note(scope: RetryScope) -> str:
    """What a message adds when the retry was inferred from a loop's shape (a framework's
    decorator from a keyword alone, a helper out of sight from its name), or is in a test module."""
    tests = " (in a test module)" if scope.in_tests else ""
    if scope.known:
        return tests
    if scope.by_name:
        shape = " (taken for a retry from its name)"
    elif scope.policy_elsewhere:
        shape = " (retried by its framework's default policy, which the code that starts it may change)"
    elif "inferred" in scope.config:
        shape = " (taken for a retry from its keywords)"
    else:
        shape = " (taken for a retry from its shape)"
    return shape + tests


# The roots of the dotted decorators a test function wears (`@pytest.mark.parametrize`,
# `@mock.patch.object`, `@responses.activate`); any other dotted decorator registers the
# function somewhere (`@app.post(...)`, `@mcp.tool()`), so `test_*` is then its name, not a test.
_TEST_DECORATOR_ROOTS = frozenset({"pytest", "unittest", "mock", "hypothesis", "responses", "respx",
                                   "aioresponses", "httpretty", "vcr", "freezegun", "pytest_asyncio"})


def test_module(module: cst.Module) -> bool:
    """A module of tests: it defines pytest's `test_*` functions or a unittest `TestCase`.
    Its retries and its state serve its own test run against a test service, which no
    request or agent run shares: what the rules find there is said at `info`."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and test_function(statement):
            return True
        if isinstance(statement, cst.ClassDef) and any(
                (dotted_name(base.value) or "").rsplit(".", 1)[-1].endswith("TestCase") for base in statement.bases):
            return True
    return False


def test_function(node: cst.FunctionDef) -> bool:
    """A test as pytest and unittest name them (`test_refund`, `testRefund`), not a route or a
    tool that happens to be called so (`@app.post(...) def test_notification`)."""
    return re.match(r"test(_|[A-Z0-9]|$)", node.name.value) is not None and all(
        _test_decorator(d.decorator) for d in node.decorators)


def _test_decorator(decorator: cst.BaseExpression) -> bool:
    """A decorator a test wears: a plain name (`@patch(...)`, `@given(...)`) or one of a test library."""
    name = dotted_name(decorator.func if isinstance(decorator, cst.Call) else decorator) or ""
    return "." not in name or name.split(".", 1)[0] in _TEST_DECORATOR_ROOTS
