"""The tool registry: which calls are writes, how bad their side effect is, and
where their idempotency key is.

Defaults come from `tools.yaml`; `[tool.nonatomic.tools]` extends them
(`write`, `read`, `idempotency_keys`, `levels`).  A `write`/`read` entry that is
one word is a verb (`write = ["disburse"]` makes `disburse_funds` a write);
any other entry is a glob over a call's dotted or last name (`charge_card`,
`billing.*.preview`).

A verb alone is not enough to call something a tool: `d.update(x)`,
`cache.set(k, v)` and `lock.release()` are not.  A call is a write when it is a
known SDK write, a function or tool of the module whose body writes (or whose
tool name is a write), or a name with a write verb on a receiver that looks
like an external client (`crm.tickets.create`, `self.http.post`) — without
such a receiver the name must say what it writes (`create_ticket`) or use a
verb that is never container plumbing (`refund`, `charge`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

import libcst as cst

from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import dotted_name
from nonatomic.rules.lint.semantics.model import FunctionFacts, ModuleModel, Retried
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.tool_config import LEVELS, normal_key, tool_pack
from nonatomic.rules.write_levels import NameLevels

_HTTP_WRITES = {"POST", "PUT", "PATCH", "DELETE"}


@dataclass(frozen=True)
class Write:
    name: str  # the call as a message names it: `crm.tickets.create`
    level: str  # a LEVELS entry other than "none"
    via: str | None = None  # for a module function: the write it makes (`requests.post`)
    # Seen, not guessed: the user's table, a known SDK call, a tool's name, an HTTP write
    # verb or a high-level write verb on an external client.  A guess from an overloaded
    # verb (`close`, `set`, `dispatch`) or a name alone is not known: findings built on it
    # are reported at a lower severity.
    known: bool = True
    hops: int = 0  # module functions between the call and the write (`via`)


class ToolRegistry(NameLevels):
    def __init__(self, table: Mapping[str, Any] | None = None) -> None:
        super().__init__(table)
        pack = tool_pack()
        table = table or {}
        self.ambiguous = set(pack["ambiguous_alone"])
        self.client_words = set(pack["client_words"])
        self.not_tools = set(pack["not_tools"])
        self.not_writes = set(pack["not_writes"])
        self.invocations = set(pack["tool_invocations"])
        self.inference = tuple(pack["inference_calls"])
        self.inference_with_model = tuple(pack["inference_calls_with_model"])
        self.local_hosts = tuple(pack["local_hosts"])
        self.inference_paths = tuple(pack["inference_paths"])
        self.dispatchers = pack["tool_dispatchers"]
        self.hint_names = pack["tool_annotations"]
        self.sdk = [(entry, tuple(entry["calls"])) for entry in pack["sdk"]]
        self.key_names = {normal_key(k) for k in [*pack["idempotency_keys"], *table.get("idempotency_keys", [])]}

    @classmethod
    def for_table(cls, table: Mapping[str, Any] | None) -> ToolRegistry:
        return _registry(json.dumps(table or {}, sort_keys=True, default=str))

    def _user_kind(self, names: list[str | None]) -> str | None:
        for name in filter(None, names):
            if any(fnmatchcase(name, glob) for glob in self.read_globs):
                return "read"
            if any(fnmatchcase(name, glob) for glob in self.write_globs):
                return "write"
        return None

    def is_key_name(self, name: str) -> bool:
        return normal_key(name) in self.key_names

    def _client_like(self, receiver: cst.BaseExpression) -> bool:
        """Reading back from the method: a client word before any private attribute
        (`self._client.tickets` yes, `client._resolver` no: an internal component)."""
        for segment in _receiver_names(receiver):
            if set(word_list(segment)) & self.client_words:
                return True
            if segment.startswith("_"):
                return False
        return False

    def on_client(self, target: cst.Attribute) -> bool:
        """A method called on a receiver that looks like an external client (`self.http.get`)."""
        return self._client_like(target.value)

    # -- writes -----------------------------------------------------------------------------
    def write_of(
        self,
        target: cst.BaseExpression,
        *,
        callee: str | None,
        carrier: cst.Call,
        where: FunctionFacts | None,
        model: ModuleModel,
    ) -> Write | None:
        """The write that calling `target` (with `carrier`'s arguments) makes, if any."""
        method = target.attr.value if isinstance(target, cst.Attribute) else getattr(target, "value", None)
        if not isinstance(method, str):
            return None
        dotted = dotted_name(target)
        shown = dotted or method
        kind = self._user_kind([callee, dotted, method])
        if kind == "read":
            return None
        if kind == "write":
            return Write(shown, self.levels.get(method, "high"))
        if self._inference(dotted or callee, carrier):
            return None
        dispatched = self._dispatched(method, carrier)
        if dispatched is not None:
            return dispatched
        if callee is not None:
            sdk = self._sdk_write(callee, method, carrier)
            if sdk is not None:
                return Write(shown, sdk) if sdk != "none" else None
            if callee.split(".", 1)[0] in self.not_tools:
                return None
        facts = model.target_function(target, where)
        if facts is None and method in self.invocations and isinstance(target, cst.Attribute):
            tool = model.target_function(target.value, where)
            facts = tool if tool is not None and tool.tool_name else None
        if facts is not None:
            return self.function_write(facts, model)
        if method in self.not_writes:
            return None
        level, alone = self.name_level(method)
        if level is None:
            return None
        receiver = target.value if isinstance(target, cst.Attribute) else None
        if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            return None  # a method the module does not define: framework plumbing
        client = receiver is not None and self._client_like(receiver)
        if not client and (level == "low" or (alone and word_list(method)[0] in self.ambiguous)):
            return None
        if alone and not carrier.args and word_list(method)[0] in self.ambiguous:
            return None  # `session.close()`, `task.cancel()`: a lifecycle call, not a tool
        if method.upper() in _HTTP_WRITES and (self._local(carrier) or self._inference_url(carrier)):
            return None
        return Write(shown, level, known=client and level != "low")

    def _dispatched(self, method: str, carrier: cst.Call) -> Write | None:
        """`session.call_tool("send_email", {...})`: the tool's name decides."""
        if method not in self.dispatchers["methods"]:
            return None
        arg = calls.argument(carrier, tuple(self.dispatchers["keywords"]), self.dispatchers["position"])
        name = arg.value.evaluated_value if arg is not None and isinstance(arg.value, cst.SimpleString) else None
        if not isinstance(name, str):
            return None
        if self._user_kind([name]) == "read":
            return None
        level = "high" if self._user_kind([name]) == "write" else self.name_level(name)[0]
        return Write(f"{method}({name!r})", self.levels.get(name, level)) if level else None

    def hint(self, facts: FunctionFacts, which: str) -> cst.BaseExpression | None:
        """The value of an MCP annotation (`read_only`, `idempotent`, `destructive`) given
        as True where the function is declared a tool."""
        value = facts.hints.get(self.hint_names[which])
        return value if isinstance(value, cst.Name) and value.value == "True" else None

    def body_write(self, facts: FunctionFacts, model: ModuleModel) -> Write | None:
        """The first write a function's own body makes."""
        for site in facts.sites:
            inner = self.write_of(site.node.func, callee=site.callee, carrier=site.node, where=facts, model=model)
            if inner is not None:
                return inner
        return None

    def _inference(self, name: str | None, carrier: cst.Call) -> bool:
        """A model call (`client.chat.completions.create(model=...)`): not a write."""
        if name is None:
            return False
        if any(fnmatchcase(name, pattern) for pattern in self.inference):
            return True
        return any(fnmatchcase(name, pattern) for pattern in self.inference_with_model) and (
            calls.keyword(carrier, "model") is not None or calls.has_star_kwargs(carrier)
        )

    def _sdk_write(self, callee: str, method: str, carrier: cst.Call) -> str | None:
        """The level of a known SDK call ("none" for a known non-write); None if unknown."""
        for entry, patterns in self.sdk:
            if not any(fnmatchcase(callee, pattern) for pattern in patterns):
                continue
            if "method" in entry:
                where = entry["method"]
                arg = calls.argument(carrier, (where["keyword"],), where.get("position"))
                given = arg.value.evaluated_value if arg and isinstance(arg.value, cst.SimpleString) else None
                if not isinstance(given, str) or given.upper() not in _HTTP_WRITES:
                    return "none"
            if entry.get("http") and (self._local(carrier) or self._inference_url(carrier)):
                return "none"
            if entry.get("verbs"):
                return self.name_level(method)[0] or "none"
            return entry.get("level", "high")
        return None

    def _inference_url(self, carrier: cst.Call) -> bool:
        """A POST to a model endpoint (`.../chat/completions`, a classifier): inference."""
        return any(
            path in text
            for arg in carrier.args
            if arg.keyword is None or arg.keyword.value == "url"
            if (text := _string_start(arg.value)) is not None
            for path in self.inference_paths
        )

    def _local(self, carrier: cst.Call) -> bool:
        """The request goes to this machine (a URL literal naming a local host)."""
        for arg in carrier.args:
            if arg.keyword is None or arg.keyword.value == "url":
                text = _string_start(arg.value)
                if text is not None:
                    return any(host in text for host in self.local_hosts)
        return False

    def function_write(self, facts: FunctionFacts, model: ModuleModel) -> Write | None:
        """A module function or tool is a write when its tool name or its body says so."""
        memo_key = ("write", id(facts))
        if memo_key in model.memo:
            return model.memo[memo_key]
        model.memo[memo_key] = None  # recursion: assume no write while deciding
        name = facts.tool_name or facts.name
        result = None
        kind = self._user_kind([name, facts.name])
        first_verb = next((w for w in word_list(name)[:2] if w in self.verb_level or w in self.read_verbs), None)
        if kind == "write":
            result = Write(name, self.levels.get(name, "high"))
        elif kind is None and first_verb not in self.read_verbs:
            # A tool's name tells, unless its MCP annotations say it only reads.
            named = facts.tool_name and self.hint(facts, "read_only") is None
            level = self.name_level(name)[0] if named else None
            if level is not None:
                result = Write(name, level)
            inner = self.body_write(facts, model)
            if inner is not None:
                if result is not None:  # a tool named for its write: known from its name
                    result = Write(name, _max_level(inner.level, result.level))
                else:
                    result = Write(name, inner.level, inner.via or inner.name, inner.known, inner.hops + 1)
        if result is not None and self.hint(facts, "destructive") is not None:
            result = Write(result.name, _max_level(result.level, "high"), result.via, result.known, result.hops)
        model.memo[memo_key] = result
        return result

    def retried_write(self, retried: Retried, model: ModuleModel) -> Write | None:
        callee = retried.site.callee if retried.site is not None else None
        return self.write_of(retried.target, callee=callee, carrier=retried.carrier, where=retried.function, model=model)

    # -- idempotency keys ----------------------------------------------------------------------
    def idempotency_key_of(
        self, carrier: cst.Call, where: FunctionFacts | None, *, skip: frozenset[str] = frozenset()
    ) -> cst.BaseExpression | None:
        """The expression a call passes as its idempotency key: a keyword, a header, a
        payload field (followed through local variables).  A `**kwargs` may carry one:
        it is returned as is.  `skip`: spellings (normalised, see `normal_key`) not to
        take for the key here."""
        for arg in carrier.args:
            if arg.star == "**":
                return arg.value
            if arg.keyword is not None and self._is_key(arg.keyword.value, skip):
                return arg.value
            found = self._key_in(arg.value, where, 0, skip)
            if found is not None:
                return found
        return None

    def _is_key(self, name: str, skip: frozenset[str]) -> bool:
        return self.is_key_name(name) and normal_key(name) not in skip

    def _key_in(
        self, expr: cst.BaseExpression, where: FunctionFacts | None, depth: int, skip: frozenset[str]
    ) -> cst.BaseExpression | None:
        if depth > 3:
            return None
        if isinstance(expr, cst.Await):
            expr = expr.expression
        if isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    key = _string_start(element.key)
                    if key is not None and self._is_key(key, skip):
                        return element.value
                found = self._key_in(element.value, where, depth + 1, skip)
                if found is not None:
                    return found
        elif isinstance(expr, cst.Call):
            for arg in expr.args:
                if arg.keyword is not None and self._is_key(arg.keyword.value, skip):
                    return arg.value
                found = self._key_in(arg.value, where, depth + 1, skip)
                if found is not None:
                    return found
        elif isinstance(expr, cst.Name) and where is not None:
            for key, value in where.items_of(expr.value):
                if self._is_key(key, skip):
                    return value
            for value in where.values_of(expr.value):
                found = self._key_in(value, where, depth + 1, skip)
                if found is not None:
                    return found
        return None

    def key_of_retried(self, retried: Retried, model: ModuleModel) -> cst.CSTNode | None:
        """The idempotency key reaching a retried write: passed at the call, a key
        parameter the callee requires, or the keys the callee's own writes pass."""
        key = self.idempotency_key_of(retried.carrier, retried.function)
        if key is not None:
            return key
        facts = model.target_function(retried.target, retried.function)
        if facts is None and isinstance(retried.target, cst.Attribute):
            facts = model.target_function(retried.target.value, retried.function)  # `tool.invoke`
        if facts is None:
            return None
        # A tool annotated idempotent is taken at its word (NA108 checks the word).
        return self.hint(facts, "idempotent") or self.key_inside(facts, model)

    def key_inside(self, facts: FunctionFacts, model: ModuleModel) -> cst.CSTNode | None:
        memo_key = ("key", id(facts))
        if memo_key in model.memo:
            return model.memo[memo_key]
        model.memo[memo_key] = None
        found: cst.CSTNode | None = next((p for p in facts.params if self.is_key_name(p.name.value)), None)
        if found is None:
            keys = []
            for site in facts.sites:
                write = self.write_of(site.node.func, callee=site.callee, carrier=site.node, where=facts, model=model)
                if write is None:
                    continue
                inner = model.target_function(site.node.func, facts)
                key = self.idempotency_key_of(site.node, facts)
                if key is None and inner is not None:
                    key = self.key_inside(inner, model)
                keys.append(key)
            found = keys[0] if keys and all(k is not None for k in keys) else None
        model.memo[memo_key] = found
        return found


@lru_cache(maxsize=8)
def _registry(table_json: str) -> ToolRegistry:
    return ToolRegistry(json.loads(table_json))


def _max_level(a: str, b: str) -> str:
    return max(a, b, key=LEVELS.index)


def _string_start(expr: cst.BaseExpression) -> str | None:
    """A string literal's text, or the literal start of an f-string."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.FormattedString):
        return "".join(p.value for p in expr.parts if isinstance(p, cst.FormattedStringText))
    if isinstance(expr, cst.ConcatenatedString):
        left = _string_start(expr.left)
        return left
    return None


def _receiver_names(expr: cst.BaseExpression) -> list[str]:
    """Names along a receiver chain, last first: `self._http.tickets` -> tickets, _http, self."""
    found: list[str] = []
    while True:
        if isinstance(expr, cst.Attribute):
            found.append(expr.attr.value)
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Await):
            expr = expr.expression
        elif isinstance(expr, cst.Name):
            return [*found, expr.value]
        else:
            return found
