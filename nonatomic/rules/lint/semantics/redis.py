"""Which calls are Redis commands, and which keys they touch.

`RedisCallProvider` gives every `Call` that is a redis-py command (sync or
asyncio client, cluster client or pipeline) a `RedisCall`: the command name
and the keys it names.  A call is a Redis command when its receiver is

- typed: built by a constructor of `objects.yaml` (`redis.Redis`, `from_url`,
  `RedisCluster`, `pipeline()`...), as `CalleeProvider` follows it;
- named like a client: a receiver whose dotted name contains "redis"
  (`self.redis`, `redis_client`, `get_redis()`), a variable assigned from
  such a name (`r = bus.get_redis()`), or a parameter or attribute annotated
  with a Redis type;
- proven by a command only Redis has: in a file that imports redis, a receiver
  on which `setnx(...)` or `set(..., nx=...)` is called is a Redis client from
  then on in that file (for `self.<attr>`, in that class).

An untyped receiver is never taken for Redis for a plain `set(k, v)`: that is
also `dict`-like caches, Django's `cache.set`, `aiocache` and friends.  A call
passing keywords the redis-py command does not take (`timeout=`, `ttl=`) is a
look-alike cache API, whatever its receiver is called.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import BatchableMetadataProvider

from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name, source

# Type names (see objects.yaml) whose methods are Redis commands.
CLIENT_TYPES = ("redis.Redis", "redis.Pipeline", "redis.JSON")
CLIENT_MODULES = frozenset({"redis", "aioredis"})
TTL_KEYWORDS = ("ex", "px", "exat", "pxat")
# Keyword arguments each command accepts in redis-py: anything else is another API.
_KEYWORDS = {
    "set": {"name", "value", "ex", "px", "nx", "xx", "keepttl", "get", "exat", "pxat"},
    "setnx": {"name", "value"},
    "lock": {"name", "timeout", "sleep", "blocking", "blocking_timeout", "lock_class", "thread_local"},
}
# Commands whose keys are all their positional arguments; the others take one key first.
_MULTI_KEY = frozenset({"delete", "unlink", "exists", "touch", "watch"})


@dataclass(frozen=True)
class Key:
    text: str  # the key expression as written
    resolved: str  # with a variable replaced by what it was assigned
    constant: bool = False  # a plain string: one key for everyone, not per task or session

    def same_as(self, other: Key) -> bool:
        return self.resolved == other.resolved or self.text == other.text


@dataclass(frozen=True)
class RedisCall:
    command: str  # the method name: "set", "delete", "hset"...
    receiver: str  # the receiver expression as written
    keys: tuple[Key, ...]
    json: bool = False  # a RedisJSON command: `set(name, path, obj)` takes no TTL


def literal_truth(expr: cst.BaseExpression) -> bool | None:
    """True/False for a literal whose truth is known (`True`, `0`, `None`, `""`), else None."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value != 0
    if isinstance(expr, cst.SimpleString):
        return bool(expr.evaluated_value)
    return None


def _command_keywords_fit(call: cst.Call, command: str) -> bool:
    """Whether every keyword of `call` is one redis-py's `command` accepts."""
    allowed = _KEYWORDS.get(command)
    if allowed is None:
        return True
    return all(arg.keyword is None or arg.keyword.value in allowed for arg in call.args)


def _receiver_name(expr: cst.BaseExpression) -> str | None:
    """The dotted name a receiver is known by: `self.redis`, or `get_redis` for `get_redis()`."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if isinstance(expr, cst.Call):
        expr = expr.func
    return dotted_name(expr)


def _is_redis_annotation(annotation: cst.Annotation | None) -> bool:
    return annotation is not None and "redis" in source(annotation.annotation).lower()


class _Scope:
    def __init__(self) -> None:
        self.assigned: dict[str, cst.BaseExpression] = {}
        self.clients: set[str] = set()  # receiver texts known to be Redis clients here


class RedisCallProvider(BatchableMetadataProvider["RedisCall | None"]):
    METADATA_DEPENDENCIES = (CalleeProvider,)

    def __init__(self) -> None:
        super().__init__()
        self._imports_redis = False
        self._functions: list[_Scope] = [_Scope()]
        self._classes: list[_Scope] = []
        self._commands: set[cst.Call] = set()

    # -- what the file and its scopes tell ---------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted_name(alias.name)
            if name and name.split(".", 1)[0] in CLIENT_MODULES:
                self._imports_redis = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = dotted_name(node.module) if node.module is not None and not node.relative else None
        if module and module.split(".", 1)[0] in CLIENT_MODULES:
            self._imports_redis = True

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        scope = _Scope()
        for statement in node.body.body:  # `client: Redis` in a dataclass or a pydantic model
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if (
                        isinstance(small, cst.AnnAssign)
                        and isinstance(small.target, cst.Name)
                        and _is_redis_annotation(small.annotation)
                    ):
                        scope.clients.add(f"self.{small.target.value}")
        self._classes.append(scope)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = _Scope()
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if _is_redis_annotation(param.annotation):
                scope.clients.add(param.name.value)
        self._functions.append(scope)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def leave_Assign(self, original_node: cst.Assign) -> None:
        for target in original_node.targets:
            self._assigned(target.target, original_node.value, None)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._assigned(original_node.target, original_node.value, original_node.annotation)

    def _assigned(self, target: cst.BaseExpression, value: cst.BaseExpression | None, annotation) -> None:
        name = dotted_name(target)
        if name is None:
            return
        scope = self._scope_for(name)
        if value is not None:
            scope.assigned[name] = value
        if _is_redis_annotation(annotation):
            scope.clients.add(name)

    def _scope_for(self, name: str) -> _Scope:
        """Where a binding of `name` goes: `self.<attr>` in its class, the rest in the function."""
        if name.startswith("self.") and self._classes:
            return self._classes[-1]
        return self._functions[-1]

    def _visible(self, name: str) -> list[_Scope]:
        """The scopes a use of `name` sees, innermost first."""
        if name.startswith("self."):
            return self._classes[-1:]
        return self._functions[::-1]

    # -- calls ---------------------------------------------------------------
    def leave_Call(self, original_node: cst.Call) -> None:
        func = original_node.func
        if not isinstance(func, cst.Attribute):
            return
        command = func.attr.value
        if not _command_keywords_fit(original_node, command):
            return
        receiver = func.value
        if not self._is_client(original_node, receiver, command):
            return
        receiver_text = source(receiver)
        self._commands.add(original_node)
        callee = self.get_metadata(CalleeProvider, original_node, None) or ""
        json = callee.startswith("redis.JSON.") or (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "json"
        )
        self.set_metadata(
            original_node, RedisCall(command, receiver_text, self._keys(original_node, command), json)
        )

    def _is_client(self, call: cst.Call, receiver: cst.BaseExpression, command: str) -> bool:
        callee = self.get_metadata(CalleeProvider, call, None)
        if callee and callee.rsplit(".", 1)[0] in CLIENT_TYPES:
            return True
        if callee and callee.split(".", 1)[0] in CLIENT_MODULES:
            return False  # the module itself: `redis.from_url(...)`, `redis.lock.Lock(...)`
        if isinstance(receiver, cst.Call) and receiver in self._commands:
            return True  # a chained pipeline: `pipe.hset(...).expire(...)`
        name = _receiver_name(receiver)
        if name is not None and "redis" in name.lower():
            return True
        text = dotted_name(receiver)
        if text is None:
            return False
        origin = next((scope.assigned[text] for scope in self._visible(text) if text in scope.assigned), None)
        origin_name = _receiver_name(origin) if origin is not None else None
        if origin_name is not None and "redis" in origin_name.lower():
            return True  # `r = bus.get_redis()`
        if any(text in scope.clients for scope in self._visible(text)):
            return True
        proven = command == "setnx" or (command == "set" and calls.keyword(call, "nx") is not None)
        if proven and self._imports_redis:
            # File-wide: module helpers pass the same `client` parameter around.
            scope = self._classes[-1] if text.startswith("self.") and self._classes else self._functions[0]
            scope.clients.add(text)
            return True
        return False

    def _keys(self, call: cst.Call, command: str) -> tuple[Key, ...]:
        plain = []
        for arg in call.args:
            if arg.star:
                break
            if arg.keyword is None or arg.keyword.value == "name":
                plain.append(arg.value)
        if command not in _MULTI_KEY:
            plain = plain[:1]
        keys = []
        for expr in plain:
            value = self._resolve(expr)
            keys.append(Key(source(expr), source(value), isinstance(value, (cst.SimpleString, cst.ConcatenatedString))))
        return tuple(keys)

    def _resolve(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        name = dotted_name(expr)
        if name is not None:
            for scope in self._visible(name):
                if name in scope.assigned:
                    return scope.assigned[name]
        return expr
