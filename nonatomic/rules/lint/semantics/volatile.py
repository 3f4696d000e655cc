"""Values that change every time they are computed: the clock, fresh UUIDs, randomness.

`volatile_sources(expr, where, model)` follows an expression through local
variables, dict fields and the module's own helper functions and returns the
calls, evaluated in `where`, that make it different on every evaluation
(`str(uuid.uuid4())`, `f"{order.id}-{time.time()}"`, `make_key(**payload)`
where the payload carries `"ts": time.time()` or `make_key` reads the clock).
Whether a source is evaluated again on each attempt is the retry scopes'
business (`per_attempt`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache

import libcst as cst

from nonatomic.rules.lint.semantics.callees import dotted_name
from nonatomic.rules.lint.semantics.loops import calls_in
from nonatomic.rules.lint.semantics.model import CallSite, FunctionFacts, ModuleModel, Retried
from nonatomic.rules.lint.semantics.tool_config import tool_pack
from nonatomic.rules.lint.tree import walk

# Resolved callees whose value differs on every call.
VOLATILE_CALLS = (
    "uuid.uuid1", "uuid.uuid4", "uuid.uuid6", "uuid.uuid7", "uuid6.*", "ulid.*", "nanoid.generate",
    "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns", "time.perf_counter",
    "time.perf_counter_ns", "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
    "datetime.date.today", "random.*", "secrets.*", "os.urandom", "shortuuid.*",
)
_DEPTH = 4


@dataclass(frozen=True)
class Source:
    anchor: cst.CSTNode  # the call (or the call id) in the analysed function that makes the value volatile
    shown: str  # what a message names: `uuid.uuid4()`, `make_key() (it calls time.time())`
    # a framework's id of the tool call (`ctx.tool_call_id`): new when the model issues the call again
    call_id: bool = False


@lru_cache(maxsize=None)
def _call_ids() -> frozenset[str]:
    return frozenset(tool_pack()["call_ids"])


def is_volatile_callee(callee: str | None) -> bool:
    return callee is not None and any(fnmatchcase(callee, pattern) for pattern in VOLATILE_CALLS)


class VolatileFinder:
    """Finds the volatile sources of expressions of one module (memoised per function)."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self.site_of: dict[int, CallSite] = {id(site.node): site for site in model.sites}
        self._inside: dict[int, str | None] = {}

    def sources(self, expr: cst.BaseExpression, where: FunctionFacts | None, depth: int = 0) -> list[Source]:
        if depth > _DEPTH:
            return []
        if isinstance(expr, (cst.Lambda, cst.FunctionDef)):
            return []
        if isinstance(expr, cst.Call):
            return self._call(expr, where, depth)
        last = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else None
        if last in _call_ids():
            return [Source(expr, f"`{dotted_name(expr) or last}` (the framework's id of this tool call)", call_id=True)]
        if isinstance(expr, cst.Name):
            if where is None:
                return []
            return [s for value in where.values_of(expr.value) for s in self.sources(value, where, depth + 1)]
        if isinstance(expr, cst.Subscript):
            return self._field(expr, where, depth)
        if isinstance(expr, cst.Attribute):
            return self.sources(expr.value, where, depth) if isinstance(expr.value, cst.Call) else []
        return [s for child in _expressions(expr) for s in self.sources(child, where, depth)]

    def _call(self, call: cst.Call, where: FunctionFacts | None, depth: int) -> list[Source]:
        site = self.site_of.get(id(call))
        callee = site.callee if site is not None else None
        if is_volatile_callee(callee):
            return [Source(call, f"`{callee}()`")]
        found = []
        helper = self.model.target_function(call.func, where)
        if helper is not None and not isinstance(helper.node, cst.Lambda):
            inner = self._reads_clock(helper)
            if inner is not None:
                found.append(Source(call, f"`{helper.name}()` (it calls `{inner}()`)"))
        if isinstance(call.func, cst.Attribute):
            found += self.sources(call.func.value, where, depth)  # `datetime.now().isoformat()`
        for arg in call.args:
            found += self.sources(arg.value, where, depth)
        return found

    def _field(self, expr: cst.Subscript, where: FunctionFacts | None, depth: int) -> list[Source]:
        """`payload["ts"]`: the value set for that field, not the whole payload."""
        index = expr.slice[0].slice if len(expr.slice) == 1 else None
        if not (isinstance(expr.value, cst.Name) and isinstance(index, cst.Index) and where is not None):
            return []
        key = index.value.evaluated_value if isinstance(index.value, cst.SimpleString) else None
        if not isinstance(key, str):
            return []
        values = [v for k, v in where.items_of(expr.value.value) if k == key]
        for bound in where.values_of(expr.value.value):
            if isinstance(bound, cst.Dict):
                values += [
                    e.value for e in bound.elements
                    if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                    and e.key.evaluated_value == key
                ]
        return [s for value in values for s in self.sources(value, where, depth + 1)]

    def _reads_clock(self, facts: FunctionFacts) -> str | None:
        """A volatile callee the module function itself calls (what a key helper mixes in)."""
        if id(facts) not in self._inside:
            self._inside[id(facts)] = None
            self._inside[id(facts)] = next(
                (site.callee for site in facts.sites if is_volatile_callee(site.callee)), None
            )
        return self._inside[id(facts)]

    def function_of(self, source: Source) -> FunctionFacts | None:
        site = self.site_of.get(id(source.anchor))
        return site.function if site is not None else None

    def per_attempt(self, source: Source, retried: Retried) -> bool:
        """`source` is evaluated again on every attempt of `retried`: it is inside the retried
        loop, the retried (decorated) function, or the lambda handed to a retry helper."""
        if source.call_id:  # the same across the tool's own retries, new when the agent runs it again
            return any(scope.construct is not None and scope.construct.entry.get("new_call_ids")
                       for scope in retried.scopes)
        function = self.function_of(source)
        if function is None:
            return False
        for scope in retried.scopes:
            if scope.kind in ("loop", "attempts") and isinstance(scope.node, (cst.For, cst.While)):
                if any(call is source.anchor for call in calls_in(scope.node.body)):
                    return True
            elif scope.kind in ("decorator", "retry_policy", "raise") and scope in function.scopes:
                return True
            elif isinstance(retried.function.node if retried.function else None, cst.Lambda):
                if function is retried.function:
                    return True
        return False


def _expressions(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The expressions directly under a non-expression node (`Arg`, `DictElement`, f-string parts)."""
    found = []
    for child in walk.children(node):
        if isinstance(child, cst.BaseExpression):
            found.append(child)
        elif not isinstance(child, (cst.Lambda, cst.FunctionDef)):
            found += _expressions(child)
    return found
