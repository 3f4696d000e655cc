"""The lint catalogue as the engine sees it before importing any rule.

For each code: its name, severity and default, and when it can fire at all — a
prefilter over the file's bytes and, for some rules, a gate over CPython's syntax
tree (built anyway for the syntax check).  Only a file that some enabled rule's
trigger passes is parsed by libcst, and only then are the rule modules imported:
linting a clean file never pays for libcst.  (ruff keeps a registry like this one
beside its rules.)  A rule's module is named by its code and name
(`na201_call_without_timeout.py`) and holds its documentation, cases and visitor.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nonatomic.rules.lint.options import Check, call_specs, one_of, positive_int, positive_number, strings
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.semantics.timeouts import UnboundedCallGate, load_specs
from nonatomic.rules.lint.semantics.tool_config import LEVELS, constructor_types, normal_key, tool_pack
from nonatomic.rules.lint.triggers import gates, prefilters
from nonatomic.rules.lint.triggers.gates import Gate
from nonatomic.rules.lint.triggers.prefilters import Prefilter
from nonatomic.rules.severity import SEVERITIES

Options = dict[str, Any]


def _never(options: Options, tools: Options) -> None:
    return None


@dataclass(frozen=True)
class Entry:
    code: str
    name: str
    severity: str
    default_on: bool = True
    # Both built from the rule's options and the [tool.nonatomic.tools] table:
    # what a file's bytes must match for the rule to fire (None: always run)
    prefilter: Callable[[Options, Options], Prefilter | None] = _never
    # what CPython's tree of a file must satisfy (None: no such test)
    gate: Callable[[Options, Options], Gate | None] = _never
    # The rule's options (`[tool.nonatomic.<name>]`) and what each must be: checked at load.
    options: Mapping[str, Check] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"{self.code}: unknown severity {self.severity!r}")

    @property
    def module(self) -> str:
        return f"{__package__}.{self.code.lower()}_{self.name.replace('-', '_')}"


def _regex(pattern: bytes) -> Callable[[Options, Options], re.Pattern[bytes]]:
    return lambda options, tools: re.compile(pattern)


def _always(check: Any) -> Callable[[Options, Options], Any]:
    """A prefilter or gate that takes no options (one object, so a file runs it once)."""
    return lambda options, tools: check


# A file with none of these words has no retry construct the retry rules can see: a
# library construct names itself, a hand-written loop sleeps, counts attempts,
# catches the failure or spins; Temporal activities (defined, or run by a workflow:
# `execute_activity`, `start_local_activity`) and dramatiq actors are retried without a
# word of it.  One prefilter for the four rules: it runs once per file.
_RETRY_TEXT = prefilters.Words(
    (b"retr", b"attempt", b"tries", b"backoff", b"stamina", b"sleep", b"except", b"while", b"count(", b"repeat(",
     b"activity.defn", b"_activity", b"dramatiq"),
    ignore_case=True,
)
# What a file must contain for any of its calls to be Redis commands (imports, client names).
_REDIS = _always(prefilters.Words((b"redis", b"Redis")))


def _key_spellings(options: Options, tools: Options) -> Prefilter:
    # The shipped key spellings only: a spelling added in [tool.nonatomic.tools] is
    # not an option of this rule.
    spellings = tuple(normal_key(s).encode() for s in tool_pack()["idempotency_keys"])
    # Values that differ per evaluation, as a file spells them (`from uuid import uuid4`,
    # `datetime.now()`, `random.random()`, `secrets.token_hex()`, `ulid.new()`).
    # A framework's id of the tool call (`tool_call_id`) is one too.
    return prefilters.Spellings(spellings, re.compile(rb"uuid|time|random|secrets|ulid|urandom|nanoid|call_id|tool_use_id"))


def _named_timeouts(options: Options, tools: Options) -> Prefilter:
    # A timeout exception must be named (`socket.timeout` is the one lower-case spelling).
    names = [n for n in load_pack("non_retryable")["timeout_exceptions"] if n != "timeout"]
    return re.compile(rb"\b(?:" + "|".join(names).encode() + rb")\b|\bsocket\.timeout\b")


def _timeout_imports(options: Options, tools: Options) -> Prefilter:
    # A call resolves to a spec through an import of its module, or of a constructor
    # of the type it is a method of (`[tool.nonatomic.tools] types` adds those).
    return prefilters.imports([*load_specs(options.get("extra-calls")), *constructor_types(tools)])


def _unbounded_calls(options: Options, tools: Options) -> Gate:
    return UnboundedCallGate(load_specs(options.get("extra-calls")), constructor_types(tools))


CATALOGUE: tuple[Entry, ...] = (
    Entry("NA000", "syntax-error", "error"),
    Entry(
        "NA101", "retry-write-without-idempotency-key", "error",
        prefilter=_always(_RETRY_TEXT), gate=_always(gates.retry_construct),
        options={"min-level": one_of(*LEVELS[1:])},
    ),
    # A key is volatile only per attempt of a retried write: NA102 needs a retry construct too,
    # or a tool call's id (the agent's own retry is a new call).
    Entry(
        "NA102", "volatile-idempotency-key", "error", prefilter=_key_spellings, gate=_always(gates.retried_or_call_id),
        options={"tracing-ids": strings},
    ),
    Entry(
        "NA103", "retry-on-non-retryable", "warning",
        prefilter=_always(_RETRY_TEXT), gate=_always(gates.retry_construct),
    ),
    Entry(
        "NA104", "retry-without-backoff", "warning",
        prefilter=_always(_RETRY_TEXT), gate=_always(gates.retry_construct),
        options={"fix-max-wait": positive_int},
    ),
    Entry(
        "NA105", "unbounded-retry", "warning",
        prefilter=_always(_RETRY_TEXT), gate=_always(gates.retry_construct),
        options={"fix-attempts": positive_int},
    ),
    Entry("NA106", "retry-after-timeout-without-verify", "warning", default_on=False, prefilter=_named_timeouts),
    Entry(
        "NA107", "failure-cached-as-result", "error",
        prefilter=_always(prefilters.Words(
            (b"idem", b"dedup", b"result", b"response", b"replay", b"outcome", b"cache", b"memo"),
            required=(b"except",), ignore_case=True,
        )),
        gate=_always(gates.failure_store),
    ),
    Entry(
        "NA108", "misleading-tool-annotation", "warning",
        prefilter=_always(prefilters.Words((b"readOnlyHint", b"idempotentHint"))),
    ),
    Entry(
        "NA201", "call-without-timeout", "error", prefilter=_timeout_imports, gate=_unbounded_calls,
        options={"extra-calls": call_specs, "ignore-calls": strings, "fix-timeout": positive_number},
    ),
    Entry(
        "NA202", "agent-run-without-deadline", "warning", default_on=False,
        # A run needs an agent constructor, the Runner, kickoff, or an agent-named
        # receiver of a graph method.
        prefilter=_regex(
            rb"\bRunner\b|kickoff|StateGraph|MessageGraph|create_react_agent|create_agent|create_supervisor"
            rb"|create_swarm|AgentExecutor|initialize_agent|smolagents|pydantic_ai"
            rb"|(?i:graph|agent|workflow|supervisor|swarm)\w*(?:\(\))?\.a?(?:invoke|stream)\b"
        ),
    ),
    Entry(
        "NA203", "timeout-without-cancel", "warning",
        prefilter=_always(prefilters.Words((b"wait", b".result(", b"shield"))), gate=_always(gates.bounded_wait),
    ),
    Entry(
        "NA301", "mutable-global-state", "warning",
        prefilter=_always(prefilters.MutatedGlobal()), gate=_always(gates.mutated_global),
        options={"ignore-names": strings},
    ),
    Entry(
        "NA302", "mutable-class-state", "warning",
        # A class-body `NAME = <container>` one level in, plus a `self.` or `cls.` to mutate it through.
        prefilter=_regex(
            rb"(?ms)\A(?=.*?\b(?:self|cls)\.).*?^(?: {4}|\t)\w+(?:[ \t]*:[^=\n]*)?[ \t]*=[ \t]*(?:\w+[ \t]*=[ \t]*)*"
            rb"(?:[{\[]|(?:[\w.]+\.)?(?:dict|list|set|bytearray|defaultdict|OrderedDict|Counter|deque"
            rb"|ChainMap|Weak\w+)\()"
        ),
        gate=_always(gates.class_container),
    ),
    Entry(
        "NA401", "lock-without-ttl", "error", prefilter=_REDIS, gate=_always(gates.lock_command),
        options={"fix-ttl-ms": positive_int, "fix-lock-timeout": positive_number},
    ),
    Entry("NA402", "unsafe-lock-release", "error", prefilter=_REDIS, gate=_always(gates.lock_command)),
    Entry("NA403", "state-without-ttl", "warning", default_on=False, prefilter=_REDIS, options={"state-words": strings}),
)
_BY_CODE = {entry.code: entry for entry in CATALOGUE}


def entry_for(code: str) -> Entry | None:
    return _BY_CODE.get(code.upper())
