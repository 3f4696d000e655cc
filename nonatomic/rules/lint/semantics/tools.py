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
tool name is a write), or a name with a write verb on a client: an object of a
client package, known by its constructor or annotation (`es = OpenSearch(...)`;
`es.indices.create`), never by its variable's name.  Without a client the name
must say what it writes (`create_ticket`) or use a verb that is never container
plumbing (`refund`, `charge`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

import libcst as cst

from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import dotted_name, own_class
from nonatomic.rules.lint.semantics.model import FunctionFacts, ModuleModel, Retried
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.tool_config import LEVELS, client_class, client_packages, normal_key, tool_pack
from nonatomic.rules.lint.tree import walk
from nonatomic.rules.write_levels import NameLevels

_HTTP_WRITES = {"POST", "PUT", "PATCH", "DELETE"}
_HTTP_METHODS = _HTTP_WRITES | {"GET", "HEAD", "OPTIONS"}
_ORIGIN = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/]*")  # `https://host:443` of a URL
_INCREMENT = re.compile(r"([\w.]+)\s*=\s*\1\s*[-+]")  # `SET credits = credits + 1`


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
    # A raw HTTP call (`requests.post(url)`, `self._client.delete(path)`): its method, for
    # a write known from the verb alone; `named` when a URL literal names the endpoint
    # (`"/tickets"`, `f"{base}/v1/refunds"`), not a variable that may hold any URL.
    http: str | None = None
    named: bool = False
    # The statements it runs only merge, update or delete what they name (`MERGE (n {id: $id})
    # SET n += $props`, `INSERT ... ON CONFLICT DO UPDATE`): a repeat leaves the same state.
    upsert: bool = False
    # The keyword that makes it replace what is there (`upload_blob(name, data, overwrite=True)`):
    # a repeat puts the same state again.
    replaces: str | None = None
    # A POST or PATCH to an action of one resource the URL names by its id, moving it to a state
    # (`f"{base}/tasks/{task_id}/complete"`): the action (`complete`); a repeat finds it there.
    transition: str | None = None
    # A PATCH whose body is a JSON Patch (RFC 6902: a list of operations, which may `add` to
    # an array): unlike a body of fields to set (a merge patch), a repeat may add twice.
    operations: bool = False


class ToolRegistry(NameLevels):
    def __init__(self, table: Mapping[str, Any] | None = None) -> None:
        super().__init__(table)
        pack = tool_pack()
        table = table or {}
        self.ambiguous = set(pack["ambiguous_alone"])
        self.not_tools = set(pack["not_tools"])
        # `[tool.nonatomic.tools.types]`: the user's own clients (`"acme.Crm" = ["acme.Crm"]`).
        self.client_types = tuple(f"{name}." for name in table.get("types", {}))
        self.not_writes = set(pack["not_writes"])
        self.applies_once = set(pack["applies_once"])
        self.client_parts = set(pack["client_parts"])
        self.data_methods = set(pack["data_methods"])
        self.replacing = set(pack["replacing_flags"])
        self.transitions = frozenset(pack["state_actions"])
        self.builders = set(pack["builders"])
        self.request_objects = set(pack["request_objects"])
        self.invocations = set(pack["tool_invocations"])
        self.inference = tuple(pack["inference_calls"])
        self.inference_with_model = tuple(pack["inference_calls_with_model"])
        self.response_accessors = set(pack["response_accessors"])
        self.inference_paths = tuple(pack["inference_paths"])
        self.inference_paths_with_model = tuple(pack["inference_paths_with_model"])
        self.inference_names = set(pack["inference_names"])
        self.inference_classes = set(pack["inference_classes"])
        self.model_words = set(pack["model_words"])
        self.credential_words = set(pack["credential_words"])
        self.statement_methods = set(pack["statement_methods"])
        self.read_statements = set(pack["read_statements"])
        self.statement_writes = set(pack["statement_writes"])
        self.statement_appends = set(pack["statement_appends"])
        self.statement_conditions = tuple(pack["statement_conditions"])
        self.dispatchers = pack["tool_dispatchers"]
        self.message_sends = pack["message_sends"]
        self.hint_names = pack["tool_annotations"]
        self.sdk = [(entry, tuple(entry["calls"])) for entry in pack["sdk"]]
        self.key_names = {normal_key(k) for k in [*pack["idempotency_keys"], *table.get("idempotency_keys", [])]}
        self.preconditions = {normal_key(k) for k in pack["preconditions"]}
        self.versions = set(pack["precondition_values"])
        self.precondition_keywords = {normal_key(k) for k in pack["precondition_keywords"]}

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

    def on_client(self, callee: str | None) -> bool:
        """A call resolved into a client package or a client type of the user's table: a
        method of an object its constructor or annotation made
        (`opensearchpy.OpenSearch.indices.create`), not the making of an object (a client,
        an exception)."""
        if callee is None or callee.rsplit(".", 1)[-1] in self.data_methods:
            return False  # `Response.model_validate(...)`: a value checked in memory
        if callee.startswith(self.client_types):
            return True
        return callee.split(".", 1)[0] in client_packages() and not client_class(callee)

    def _client_part(self, receiver: cst.BaseExpression) -> bool:
        """`client.connection_pool`, `session.lock`: an attribute of a client named for its
        own machinery (`client_parts`), not a resource of the service."""
        return isinstance(receiver, cst.Attribute) and bool(set(word_list(receiver.attr.value)) & self.client_parts)

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
        typed = self._typed_message(method, carrier, where)
        if typed is not None:
            return typed or None
        if callee is not None:
            sdk = self._sdk_write(callee, method, carrier, where, model)
            if sdk is not None:
                level, verb, request = sdk
                return self._http_write(shown, level, verb, request, where, model) if level != "none" else None
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
        if self._builds(method, receiver):
            return None
        # A client's in-process part (`node.connection_pool.release(conn)`) is plumbing, and
        # a command that applies only once (`set(key, token, nx=True)`: a retry finds the key).
        client = receiver is not None and self.on_client(callee) and not self._client_part(receiver)
        if receiver is not None and any(calls.is_true(arg.value) for arg in carrier.args
                                        if arg.keyword is not None and arg.keyword.value in self.applies_once):
            return None
        if not client and (level == "low" or (alone and word_list(method)[0] in self.ambiguous)):
            return None
        if alone and not carrier.args and word_list(method)[0] in self.ambiguous:
            return None  # `session.close()`, `task.cancel()`: a lifecycle call, not a tool
        if method in self.statement_methods and self._reads_statement(carrier):
            return None
        verb = method.upper() if method.upper() in _HTTP_WRITES else None
        if verb is not None and not self._external(verb, carrier, where, model):
            return None
        # Known: a method named for a high-level write on an object (`api.cancel_order`,
        # `payments.refund`; an overloaded verb got here only on a client known by its
        # constructor).  Guessed: an overloaded verb, a bare name (an import, unresolved), or
        # a method of the package's own class defined in another module (`memory.create_entities`
        # of `memory: GraphMemory`), whose body decides what it does.
        known = level != "low" and receiver is not None and not (callee and own_class(callee.rsplit(".", 1)[0]))
        return self._http_write(shown, level, verb, carrier, where, model, known=known)

    def _builds(self, method: str, receiver: cst.BaseExpression | None) -> bool:
        """The call makes an object in memory: a request another call sends (`drop_table_req`,
        `Prepare.create_database_req(...)`), or an instance of the class it is called on,
        named for what that class is (`LocalAudioTrack.create_audio_track(...)`)."""
        words = word_list(method)
        if words[-1] in self.request_objects:
            return True
        if receiver is None:
            return False
        owner = _last_part(receiver)
        owner_words = set(word_list(owner))
        return bool(owner_words & self.builders) or (
            owner[:1].isupper() and len(words) > 1 and set(words[1:]) <= owner_words)

    def _reads_statement(self, carrier: cst.Call) -> bool:
        """The call's first argument is a statement text that only reads (its literal
        words open with a read keyword and hold no write keyword)."""
        if not carrier.args or carrier.args[0].keyword is not None:
            return False
        text = _string_start(carrier.args[0].value)
        words = re.findall(r"[a-z_]+", text.lower()) if text else []
        return bool(words) and words[0] in self.read_statements and not set(words) & self.statement_writes

    def _http_write(self, shown: str, level: str, verb: str | None, carrier: cst.Call, where: FunctionFacts | None,
                    model: ModuleModel, *, known: bool = True) -> Write:
        url = _url_of(carrier, where, model) if verb is not None else None
        named = verb is not None and _names_endpoint(url)
        transition = _transition(url, self.transitions) if verb in ("POST", "PATCH") else None
        texts = self._statements(carrier, shown.rsplit(".", 1)[-1], where, model) if verb is None else None
        upsert = bool(texts) and all(self._upserts(text) for text in texts)
        replaces = next((arg.keyword.value for arg in carrier.args if arg.keyword is not None
                         and arg.keyword.value in self.replacing and calls.is_true(arg.value)), None)
        operations = verb == "PATCH" and _patch_operations(carrier, where)
        return Write(shown, level, known=known, http=verb, named=named, upsert=upsert, replaces=replaces,
                     transition=transition, operations=operations)

    def _statements(self, carrier: cst.Call, method: str, where: FunctionFacts | None, model: ModuleModel
                    ) -> list[str] | None:
        """The statement texts a call runs: its own, for a statement executor, or those the
        function it is handed runs (`session.execute_write(upsert_node)`); None when one is
        not a text the module spells."""
        if method in self.statement_methods:
            text = _statement_text(carrier, where)
            return None if text is None else [text]
        texts: list[str] = []
        for arg in carrier.args:
            facts = model.target_function(arg.value, where) if isinstance(arg.value, cst.Name) else None
            for site in facts.sites if facts is not None else ():
                if site.method in self.statement_methods:
                    text = _statement_text(site.node, facts)
                    if text is None:
                        return None
                    texts.append(text)
        return texts

    def _upserts(self, text: str) -> bool:
        """A statement that writes only by merging, updating or deleting what it names: it
        creates or inserts only under a condition (`ON CONFLICT`, `ON CREATE`, `IF NOT
        EXISTS`), and adds to no value (`SET n.count = n.count + 1`)."""
        words = set(re.findall(r"[a-z_]+", text.lower()))
        if not words & self.statement_writes or _INCREMENT.search(text):
            return False
        spoken = " ".join(text.lower().split())
        return not words & self.statement_appends or any(phrase in spoken for phrase in self.statement_conditions)

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

    def _typed_message(self, method: str, carrier: cst.Call, where: FunctionFacts | None) -> Write | bool | None:
        """A typed message's send judged by its type (`{"type": f"{kind}/list"}` reads):
        the write it makes, False when its type names no write, None when the call is not
        such a send or its message is not written out here."""
        if method not in self.message_sends["methods"] or not carrier.args:
            return None
        message = carrier.args[0].value
        if isinstance(message, cst.Name) and where is not None and len(where.assigned.get(message.value, [])) == 1:
            message = where.assigned[message.value][0]  # `message = {...}` just before
        if not isinstance(message, cst.Dict):
            return None
        kind = next((text for element in message.elements if isinstance(element, cst.DictElement)
                     and _string_start(element.key) in self.message_sends["keys"]
                     and (text := _string_start(element.value))), None)
        if kind is None:
            return None
        last = re.split(r"[/.:]", kind.rstrip("/"))[-1]
        level = self.name_level(last)[0] if last else None
        return Write(f"{method}({kind!r})", level) if level and level != "none" else False

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
        # `chat.completions.with_raw_response.create`: the same call, handing back the raw response
        name = ".".join(part for part in name.split(".") if part not in self.response_accessors)
        if any(fnmatchcase(name, pattern) for pattern in self.inference):
            return True
        return any(fnmatchcase(name, pattern) for pattern in self.inference_with_model) and (
            calls.keyword(carrier, "model") is not None or calls.has_star_kwargs(carrier)
        )

    def _sdk_write(
        self, callee: str, method: str, carrier: cst.Call, where: FunctionFacts | None, model: ModuleModel
    ) -> tuple[str, str | None, cst.Call] | None:
        """The level of a known SDK call ("none" for a known non-write), for a raw HTTP call
        its method, and the call that holds the request (the built one a transport sends);
        None if unknown."""
        for entry, patterns in self.sdk:
            if not any(fnmatchcase(callee, pattern) for pattern in patterns):
                continue
            verb = None
            if entry.get("built_request"):
                built = _built_request(carrier, where)
                if built is None:
                    return "none", None, carrier
                carrier = built
            if "method" in entry:
                at = entry["method"]
                arg = calls.argument(carrier, (at["keyword"],), at.get("position"))
                given = arg.value.evaluated_value if arg and isinstance(arg.value, cst.SimpleString) else None
                if not isinstance(given, str) or given.upper() not in _HTTP_WRITES:
                    return "none", None, carrier
                verb = given.upper()
            if entry.get("http"):
                verb = verb or callee.rsplit(".", 1)[-1].upper()
                external = self._external(verb, carrier, where, model)
                return (entry.get("level", "high"), verb, carrier) if external else ("none", None, carrier)
            if entry.get("verbs"):
                return self.name_level(method)[0] or "none", None, carrier
            return entry.get("level", "high"), None, carrier
        return None

    def _external(self, verb: str, carrier: cst.Call, where: FunctionFacts | None, model: ModuleModel) -> bool:
        """An HTTP write that changes something outside: not to this machine, and not a
        POST that asks a model or runs a query (by its URL or the function it is in)."""
        url = _url_of(carrier, where, model)
        if url is not None and names_local_host(url):
            return False
        if _callers_read(where, model, self.asks):
            return False
        text = _string_start(url) if url is not None else None
        return verb != "POST" or not (self._inference_url(text, carrier, where, model) or self._inference_name(where)
                                      or self._credentials(text, where))

    def _credentials(self, text: str | None, where: FunctionFacts | None) -> bool:
        """A POST that asks for credentials: its URL's path (`/oauth/token`, `/visitor/genvisitor2`)
        or the function it is in (`_ensure_cookies`, `fetch_access_token`) is named for a token,
        a login or a cookie, and for no write (`revoke_token`).  A repeat is issued another one;
        nothing else changes."""
        path = _ORIGIN.sub("", text or "").split("?", 1)[0]
        named = _named(where)
        words = set(word_list(path.replace("/", "_")))
        if not any(char.isalpha() for char in path):  # the URL names no endpoint: the function may
            words |= set(word_list(named.name)) if named else set()
        return bool(words & self.credential_words) and not words & set(self.verb_level)  # not `revoke_token`

    def _inference_url(self, text: str | None, carrier: cst.Call, where: FunctionFacts | None, model: ModuleModel
                       ) -> bool:
        """A POST to a model or query endpoint (`.../chat/completions`, a classifier, a
        search, a GraphQL query; `/v1/messages` or `/responses` with a `model` in its payload
        or sent by a function named for the model, `_call_model`)."""
        if text is None:
            return False
        # `/chat/completions`, or an endpoint named for it (`{base}/lollms_generate`)
        endpoint = text.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] if "/" in text else ""
        if any(path in text for path in self.inference_paths) or set(word_list(endpoint)) & self.inference_names:
            return not (_PATH_GRAPHQL in text and _spells_mutation(carrier, where, model))
        return any(path in text for path in self.inference_paths_with_model) and (
            _names_model(carrier, where) or self._named_for_model(where))

    def _named_for_model(self, where: FunctionFacts | None) -> bool:
        """The function a POST is written in (a lambda's enclosing one) is named for a model
        (`_call_model_with_retry`, `ask_claude`)."""
        where = _named(where)
        return where is not None and bool(set(word_list(where.name)) & self.model_words)

    def asks(self, where: FunctionFacts | None) -> bool:
        """The function is named for a read (`get_patent_claims`: a read verb leads it and no
        write verb is in it) or for inference or a query (`_inference_name`)."""
        named = _named(where)
        if named is None:
            return False
        words = word_list(named.name)
        first = next((w for w in words[:2] if w in self.verb_level or w in self.read_verbs), None)
        return (first in self.read_verbs and not set(words) & set(self.verb_level)) or self._inference_name(named)

    def _inference_name(self, where: FunctionFacts | None) -> bool:
        """The function the call is written in (a lambda's enclosing one) is named for
        inference or a query (`_classify`, `get_embeddings`, `search_documents`), or is a
        method of a class named for a model (`ApigeeLlm`, `TypesafeClassifier`)."""
        where = _named(where)
        if where is None:
            return False
        model_class = where.class_name is not None and set(word_list(where.class_name)) & self.inference_classes
        return bool(set(word_list(where.name)) & self.inference_names or model_class)

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
                    result = replace(inner, name=name, via=inner.via or inner.name, hops=inner.hops + 1)
        if result is not None and self.hint(facts, "destructive") is not None:
            result = replace(result, level=_max_level(result.level, "high"))
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
        key = self.idempotency_key_of(retried.carrier, retried.function) or self.precondition_of(retried.carrier)
        if key is not None:
            return key
        facts = model.target_function(retried.target, retried.function)
        if facts is None and isinstance(retried.target, cst.Attribute):
            facts = model.target_function(retried.target.value, retried.function)  # `tool.invoke`
        if facts is None:
            return None
        # A tool annotated idempotent is taken at its word (NA108 checks the word).
        return self.hint(facts, "idempotent") or self.key_inside(facts, model)

    def precondition_of(self, carrier: cst.Call) -> cst.BaseExpression | None:
        """What makes the write conditional on the state it read (`if_match=etag`, `last=
        entry.revision`): once one attempt lands, a repeat is refused, as a key's is."""
        for arg in carrier.args:
            if arg.keyword is None or calls.is_none(arg.value):
                continue  # `if_match=None`: no precondition
            if normal_key(arg.keyword.value) in self.preconditions:
                return arg.value
            value = arg.value
            if normal_key(arg.keyword.value) in self.precondition_keywords and isinstance(value, cst.Attribute) \
                    and set(word_list(value.attr.value)) & self.versions:
                return value
        return None

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


_PATH_GRAPHQL = "/graphql"


def _last_part(expr: cst.BaseExpression) -> str:
    return (dotted_name(expr) or "").rsplit(".", 1)[-1]


def _built_request(send: cst.Call, where: FunctionFacts | None) -> cst.Call | None:
    """The call that built the request a transport send is given (`requests.Request("GET",
    url)` of `session.send(prepared)`, through one local, `.prepare()` and
    `session.prepare_request(...)`), or None when the module does not show it."""
    arg = calls.argument(send, ("request",), 0)
    expr = arg.value if arg is not None else None
    for _ in range(4):
        if isinstance(expr, cst.Name) and where is not None and len(values := where.values_of(expr.value)) == 1:
            expr = values[0]
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "prepare":
            expr = expr.func.value
        elif (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
              and expr.func.attr.value == "prepare_request" and expr.args):
            expr = expr.args[0].value
        else:
            break
    return expr if isinstance(expr, cst.Call) else None


def _url_of(carrier: cst.Call, where: FunctionFacts | None, model: ModuleModel) -> cst.BaseExpression | None:
    """The URL an HTTP call is given: `url=`, else its first positional argument that is
    not the method (`request("POST", url)`); a local bound once (`url = f"{base}/messages"`),
    or an upper-case module constant bound once to a string (`API_URL =
    "https://.../chat/completions"`), stands for its value."""
    url = None
    keyword = calls.keyword(carrier, "url")
    if keyword is not None:
        url = keyword.value
    for arg in carrier.args if url is None else ():
        if arg.keyword is None and not arg.star:
            text = _string_start(arg.value)
            if text is None or text.upper() not in _HTTP_METHODS:
                url = arg.value
                break
    if isinstance(url, cst.Name):
        local = where is not None and where.binds(url.value)
        constant = url.value.isupper() and not local  # `API_URL`, by convention never rebound
        values = where.values_of(url.value) if local else model.assigned.get(url.value, []) if constant else []
        if len(values) == 1 and (local or _string_start(values[0]) is not None):
            return values[0]
    return url


def _callers_read(where: FunctionFacts | None, model: ModuleModel,
                  queries: Callable[[FunctionFacts | None], bool]) -> bool:
    """A request helper whose HTTP method is its callers' choice (`def _request(self, path,
    method="GET")`, the POST in a branch on it), and every call of it in the module reads:
    it passes no method other than a read one (`GET`, `HTTPMethods.GET`), or is written in a
    function that `queries` takes for a read or a query (`search_patents` POSTs a search).  A helper no
    code in the module calls is judged by its body."""
    where = _named(where)
    if where is None:
        return False
    at = next((i for i, p in enumerate(where.params) if "method" in word_list(p.name.value)
               and p.default is not None and _read_method(p.default)), None)
    if at is None:
        return False
    name = where.params[at].name.value
    bound = 1 if where.class_name is not None and where.params and where.params[0].name.value in ("self", "cls") else 0
    called = False
    for site in model.sites:
        if model.target_function(site.node.func, site.function) is not where:
            continue
        called = True
        if calls.has_star_kwargs(site.node) or calls.has_star_args(site.node):
            return False  # the method may be in them
        given = calls.argument(site.node, (name,), at - bound)
        if given is None:
            continue
        # passed on: a re-send of its own (`return await self._request(path, method)` after a 429)
        passed_on = site.function is where and isinstance(given.value, cst.Name) and given.value.value == name
        posts = (_method_text(given.value) or "").upper() == "POST"
        if not (passed_on or _read_method(given.value) or (posts and queries(site.function))):
            return False
    return called


def _method_text(expr: cst.BaseExpression) -> str | None:
    """The HTTP method an argument spells: `"POST"`, `HTTPMethods.POST`."""
    return expr.attr.value if isinstance(expr, cst.Attribute) else _string_start(expr)


def _read_method(expr: cst.BaseExpression) -> bool:
    """`"GET"`, `"head"`, `HTTPMethods.GET`: an HTTP method that reads."""
    text = _method_text(expr)
    return text is not None and text.upper() in ("GET", "HEAD", "OPTIONS")


def _names_endpoint(url: cst.BaseExpression | None) -> bool:
    """A URL literal (or f-string) whose path names the endpoint (`"/tickets"`,
    `f"{base}/v1/refunds"`), not one whose path is all placeholders (`f"{base}{path}"`)."""
    text = _string_start(url) if url is not None else None
    return text is not None and any(char.isalpha() for char in _ORIGIN.sub("", text))


def _transition(url: cst.BaseExpression | None, actions: frozenset[str]) -> str | None:
    """The action a URL ends in when it acts on one resource named by its id: the last path
    segment an action, the one before it a placeholder (`f"{base}/tasks/{task_id}/complete"`)."""
    if not isinstance(url, cst.FormattedString):
        return None
    path = "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in url.parts)
    segments = path.split("?", 1)[0].rstrip("/").split("/")
    if len(segments) < 3 or segments[-2] != "{}":
        return None
    action = segments[-1].lower()
    return action if action in actions else None


def _spells_mutation(carrier: cst.Call, where: FunctionFacts | None, model: ModuleModel) -> bool:
    """A string in the call's arguments, or bound to a name they use (a local, a module
    constant), is a GraphQL mutation."""
    seen: set[int] = set()
    todo: list[cst.CSTNode] = [arg.value for arg in carrier.args]
    while todo:
        node = todo.pop()
        if id(node) in seen or len(seen) > 200:
            continue
        seen.add(id(node))
        if isinstance(node, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            text = _string_start(node)
            if text is not None and text.lstrip().startswith("mutation"):
                return True
        elif isinstance(node, cst.Name):
            local = where is not None and where.binds(node.value)
            todo += where.values_of(node.value) if local else model.assigned.get(node.value, [])
        else:
            todo += walk.children(node)
    return False


def _patch_operations(carrier: cst.Call, where: FunctionFacts | None) -> bool:
    """A PATCH that sends a JSON Patch: a list as its `json=` body (a literal, or a local bound
    to one), or a `json-patch` content type spelled in the call."""
    payload = calls.keyword(carrier, "json")
    values = [payload.value] if payload is not None else []
    if payload is not None and isinstance(payload.value, cst.Name) and where is not None:
        values = where.values_of(payload.value.value)
    lists = any(isinstance(value, (cst.List, cst.ListComp)) for value in values)
    return lists or "json-patch" in cst.Module([]).code_for_node(carrier)


def _named(where: FunctionFacts | None) -> FunctionFacts | None:
    """The named function a call is written in: a lambda's enclosing one."""
    while where is not None and not where.name:
        where = where.parent
    return where


def _names_model(carrier: cst.Call, where: FunctionFacts | None) -> bool:
    """The payload (`json=`) names a `model`: a dict literal, or a local dict built with one."""
    payload = calls.keyword(carrier, "json")
    if payload is None:
        return False
    values = [payload.value]
    if isinstance(payload.value, cst.Name) and where is not None:
        if any(key == "model" for key, _ in where.items_of(payload.value.value)):
            return True
        values = where.values_of(payload.value.value)
    return any(
        isinstance(value, cst.Dict)
        and any(isinstance(e, cst.DictElement) and _string_start(e.key) == "model" for e in value.elements)
        for value in values
    )


def _statement_text(call: cst.Call, where: FunctionFacts | None) -> str | None:
    """The text of the statement a call runs: its first argument (or `query=`), a literal
    or a local bound once to one (`query = f"MERGE ..."`)."""
    arg = calls.argument(call, ("query", "statement", "sql"), 0)
    value = arg.value if arg is not None else None
    if isinstance(value, cst.Name) and where is not None:
        bound = where.values_of(value.value)
        value = bound[0] if len(bound) == 1 else None
    return _literal_text(value) if value is not None else None


def _literal_text(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.ConcatenatedString):
        left, right = _literal_text(expr.left), _literal_text(expr.right)
        return None if left is None or right is None else left + right
    return _string_start(expr)


def names_local_host(expr: cst.BaseExpression) -> bool:
    """A URL or host literal (or an f-string's literal start) naming this machine
    (`"http://localhost:8000/..."`, `"127.0.0.1"`)."""
    text = _string_start(expr)
    return text is not None and any(host in text for host in tool_pack()["local_hosts"])


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
