from __future__ import annotations


import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.callees import dotted_name, source
from nonatomic.rules.lint.semantics.calls import positional
from nonatomic.rules.lint.semantics.names import words
from nonatomic.rules.lint.tree import walk
from nonatomic.rules.lint.triggers.gates import CACHE_WORDS, RESULT_WORDS, STORES

# Result words (`RESULT_WORDS`) name a cache only when it outlives the call (an attribute
# or a module global): a local or a parameter `results` collects this call's per-item outcomes.
# ... unless the name says it records failures or counts things: that is what they are for.
# A run's own state (`self.state.results[node_id]`) records how each step ended: the run
# reads it back, nothing replays it as a cached answer.
_RECORD_WORDS = {"error", "errors", "failure", "failures", "failed", "metric", "metrics", "counter",
                 "counters", "stats", "log", "logs", "history", "attempts", "retries", "dlq", "state",
                 "status"}
# Keys that say a result store answers a repeated request (`results[request_id]`,
# `responses[idem_key]`): without one, a store named only for results is a hand-back slot or
# a run's table of outcomes (`results[cmd_id]` popped by the waiting caller) as often as a cache.
# A bare `key` names nothing: every dict has one.
_REQUEST_KEY_WORDS = {"request", "idempotency", "idem", "dedupe", "dedup", "fingerprint", "hash", "digest"}
# A store named for requests still in flight holds each one's outcome until its waiter takes it.
_IN_FLIGHT_WORDS = {"pending", "inflight", "outstanding", "waiting", "waiters"}
# Calls that write down what they are given: a failure passed to one is still the failure.
_RECORDERS = {"str", "repr", "format", "dict", "list", "tuple", "json.dumps", "pickle.dumps",
              "traceback.format_exception", "traceback.format_exc"}
# A store named with these answers a repeated request with what it holds.
_REPLAY_WORDS = CACHE_WORDS - {"cache", "cached", "memo", "memoized"}
# Clocks: a failure stored beside one of their readings is kept for a while, then retried.
_CLOCKS = {"now", "utcnow", "time", "monotonic", "perf_counter", "timestamp"}
# What a stored failure is spelled with.
_FAILURE_WORDS = {"error", "err", "errors", "fail", "failed", "failure", "exception", "exc",
                  "timeout", "timed", "traceback"}


def _cache_name(name: str, *, lasting: bool = True) -> bool:
    found = words(name)
    named = found & CACHE_WORDS or (lasting and found & RESULT_WORDS)
    return bool(named) and not found & _RECORD_WORDS


def _targets(node: cst.Assign | cst.AnnAssign) -> list[cst.BaseExpression]:
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def _walk(node: cst.CSTNode):
    yield node
    for child in walk.children(node):
        if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            yield from _walk(child)


class FailureCachedAsResult(LintRule):
    """
    ## What it does
    Flags an idempotency or result cache (a name with idempotency/idem/dedupe/
    result/response/replay/cache in it: `self._results[key] = ...`,
    `redis.set(idem_key, ...)`, `response_cache.set(...)`) that stores a
    failure from an `except` path: the exception, an `{"error": ...}` record, a
    timeout marker, or a value assigned in the handler and stored after the
    `try`.

    ## Why is this bad?
    An idempotency cache answers a repeated request with the stored outcome. If
    the outcome stored is the failure, every retry replays the failure without
    trying again, and a write that did happen (a timeout after the side effect)
    is reported as failed for the whole life of the entry. A payment gateway
    stored `{"status": "timeout"}` under the idempotency key when the bank call
    timed out; the bank had in fact captured the payment, and for the next 24
    hours every retry of the order answered "timeout" and the customer was
    charged for an order shown as unpaid.

    Caching in the `else:` branch or after a successful call is right; counting
    a failure in a metrics counter or writing it to a log or error record
    (`self.errors[key] = exc`) is not a result cache and is not flagged.

    ## Severity
    An error when the store is named for answering a repeated request
    (`idempotency`, `idem`, `dedupe`, `replay`). Any other cache or result
    store (`cache`, `memo`, `results`, `responses`, `outcome`) is a warning
    when its key names a request (`request_id`, `idem_key`, a hash), and
    `info` otherwise: a plain cache that keeps a failure is most often a
    lazy loader or a connection factory failing fast on purpose, and a store
    keyed by a command's or a worker's own id is as often a slot that hands an
    outcome back to the caller waiting for it, or a run's table of outcomes. A
    slot is `info` whatever its key: a store named for requests in flight
    (`pending_results`), or one whose reader takes the entry out and uses it
    (`result = results.pop(request_id)`); a cache's own `cache.pop(key, None)`
    only drops an entry. A failure
    stored with the time it was stored (`cache[key] = exc, datetime.now()`) is a
    negative cache that expires, kept on purpose so a failing endpoint is not
    hammered: `info`.

    ## Example
    ```python
    def charge(order, idem_key):
        try:
            result = bank.capture(order.amount, idempotency_key=idem_key)
        except TimeoutError as exc:
            result = {"status": "timeout", "error": str(exc)}
        redis_client.set(f"idem:{idem_key}", json.dumps(result), ex=86400)
        return result
    ```

    ## Use instead
    ```python
    def charge(order, idem_key):
        try:
            result = bank.capture(order.amount, idempotency_key=idem_key)
        except TimeoutError:
            redis_client.delete(f"idem:{idem_key}")  # unknown outcome: verify, then retry
            raise
        redis_client.set(f"idem:{idem_key}", json.dumps(result), ex=86400)
        return result
    ```
    """

    code = "NA107"

    VALID = [
        # A dict made for one call that dedupes the lookups of one batch: the next call starts empty.
        """
            import requests

            def enrich(records):
                cache = {}
                for record in records:
                    domain = record["domain"]
                    if domain not in cache:
                        try:
                            cache[domain] = requests.get(f"https://rdap.org/domain/{domain}", timeout=10).json()
                        except requests.RequestException as e:
                            cache[domain] = {"found": False, "error": str(e)[:120]}
                    record["whois"] = cache[domain]
                return records
            """,
        # A run's report, filled field by field: a check that failed is what it reports.
        """
            import subprocess

            class Validator:
                def __init__(self):
                    self.result = {"passed": True, "checks": {}}

                def run(self):
                    try:
                        subprocess.run(["ruff", "check", "."], check=True, timeout=60)
                        self.result["checks"]["ruff"] = {"passed": True}
                    except subprocess.TimeoutExpired:
                        self.result["checks"]["ruff"] = {"error": "ruff timed out"}
                    except Exception as e:
                        self.result["checks"]["ruff"] = {"error": str(e)}
                    return self.result
            """,
        # A handler that recovers from a miss (creates what was missing) and caches the
        # created thing: a success, even though its request mentions a timeout setting.
        """
            class Channel:
                def _new_queue(self, queue):
                    try:
                        return self._resolve_queue_url(queue)
                    except QueueDoesNotExist:
                        attributes = {"VisibilityTimeout": str(self.visibility_timeout)}
                        resp = self._create_queue(queue, attributes)
                        url = self._queue_cache[queue] = resp["QueueUrl"]
                        return url
            """,
        # Cached after success only.
        """
            def run(tool, key, args):
                try:
                    out = tool.invoke(args)
                except TimeoutError:
                    raise
                else:
                    RESULT_CACHE[key] = out
                return out
            """,
        # The failure is counted and logged, not cached as a result.
        """
            def run(self, key, args):
                try:
                    return self.tool.invoke(args)
                except Exception as exc:
                    self.metrics['tool_errors'] += 1
                    self.errors[key] = exc
                    self.logger.warning('failed: %s', exc)
                    raise
            """,
        # The entry is removed on failure.
        """
            def charge(r, bank, key, amount):
                try:
                    result = bank.capture(amount, idempotency_key=key)
                except TimeoutError:
                    r.delete(f'idem:{key}')
                    raise
                r.set(f'idem:{key}', result, ex=86400)
                return result
            """,
        # A local list of per-item outcomes lives for this call only: not a cache.
        """
            def run_all(tools, inputs):
                results = {}
                for i, (tool, args) in enumerate(zip(tools, inputs)):
                    try:
                        results[i] = tool.invoke(args)
                    except Exception as exc:
                        results[i] = {'error': str(exc)}
                return results
            """,
        # Negative caching of a missing optional import: a plain value, not a failure record.
        """
            _cache = {}

            def load(name):
                try:
                    _cache[name] = __import__(name)
                except ImportError:
                    _cache[name] = None
                return _cache[name]
            """,
        # A dict that hands a thread's result or exception back to the caller: a slot, not a cache.
        """

            import asyncio
            import threading

            def fetch_many(self, urls):
                outcome = {}

                def runner():
                    loop = asyncio.new_event_loop()
                    try:
                        outcome["pages"] = loop.run_until_complete(self.afetch_many(urls))
                    except BaseException as e:  # re-raised on the calling thread
                        outcome["error"] = e
                    finally:
                        loop.close()

                thread = threading.Thread(target=runner)
                thread.start()
                thread.join()
                if "error" in outcome:
                    raise outcome["error"]
                return outcome["pages"]
            """,
        # A run's state records how each node ended: the run reads it, nothing replays it.
        """

            async def execute_node(self, node):
                try:
                    result = await node.executor.invoke_async(self.task)
                except Exception as e:
                    node_result = NodeResult(result=e, status=Status.FAILED)
                    self.state.results[node.node_id] = node_result
                    raise
                self.state.results[node.node_id] = NodeResult(result=result, status=Status.COMPLETED)
            """,
    ]
    INVALID = [
        # A loader cache that keeps a failed import so a broken optional dependency fails
        # fast: a plain cache, shown at info.
        Invalid(
            """
                class LazyCache:
                    def get(self, key, loader):
                        with self._lock:
                            try:
                                value = loader()
                            except BaseException as e:
                                self._cache[key] = e
                                raise
                            self._cache[key] = value
                            return value
                """,
            line=7, severity="info",
        ),
        # A cache that keeps a failed connection attempt for a while (a negative cache):
        # shown, since it answers a retry with the failure, but by design more often than not.
        Invalid(
            """
                import datetime

                class CachingProtocol(type):
                    def __call__(cls, *args, **kwargs):
                        key = cls._cache_key(kwargs["config"])
                        try:
                            protocol = super().__call__(*args, **kwargs)
                        except TransportError as e:
                            cls._protocol_cache[key] = e, datetime.datetime.now()
                            raise e
                        cls._protocol_cache[key] = protocol, datetime.datetime.now()
                        return protocol
                """,
            line=9, severity="info",
        ),
        # The failure wrapped in a result object, by its keyword.
        Invalid(
            """
                class Runner:
                    def run(self, idem_key, tool, args):
                        try:
                            return tool.invoke(args)
                        except TimeoutError as exc:
                            self._idempotency_cache[idem_key] = ToolResult(ok=False, error=str(exc))
                            raise
                """,
            line=6,
        ),
        Invalid(
            """
                import json

                def charge(bank, r, key, amount):
                    try:
                        result = bank.capture(amount, idempotency_key=key)
                    except TimeoutError as exc:
                        r.set(f'idem:{key}', json.dumps({'error': str(exc)}), ex=86400)
                        raise
                    return result
                """,
            line=7,
        ),
        Invalid(
            """
                class Gateway:
                    def call(self, key, tool, args):
                        try:
                            out = tool.invoke(args)
                        except Exception as e:
                            out = {'status': 'failed', 'error': repr(e)}
                            self._idempotency_cache[key] = out
                        return out
                """,
            line=7,
        ),
        Invalid(
            """
                import json

                def book(api, redis_client, key, slot):
                    try:
                        result = api.book_room(slot, idempotency_key=key)
                    except TimeoutError as exc:
                        result = {'status': 'timeout', 'detail': str(exc)}
                    redis_client.set(f'idem:{key}', json.dumps(result), ex=3600)
                    return result
                """,
            line=8,
        ),
        # Named only like a result store, keyed by the request: it answers a repeat.
        Invalid(
            """
                RESPONSES = {}

                def send(mailer, request_id, msg):
                    if request_id in RESPONSES:
                        return RESPONSES[request_id]
                    try:
                        RESPONSES[request_id] = mailer.send_email(msg)
                    except Exception as err:
                        RESPONSES[request_id] = err
                    return RESPONSES[request_id]
                """,
            line=9, severity="warning"),
        # Keyed by a command's own id, and taken out by the caller that waits for it: a
        # hand-back slot as often as a cache, so info.
        Invalid(
            """
                class BrowserThread:
                    def __init__(self):
                        self.results = {}

                    def _serve(self, cmd_id, func):
                        try:
                            self.results[cmd_id] = (func(), None)
                        except Exception as e:
                            self.results[cmd_id] = (None, e)

                    def wait(self, cmd_id):
                        result, error = self.results.pop(cmd_id)
                        if error:
                            raise error
                        return result
                """,
            line=9, severity="info"),
        # Keyed by the request, but a slot of a request in flight: the reader gives every
        # waiter the fatal error so it fails fast instead of timing out; the waiter pops it.
        Invalid(
            """
                class Query:
                    def __init__(self):
                        self.pending_control_results = {}
                        self.pending_control_responses = {}

                    async def read_messages(self):
                        try:
                            async for message in self.transport.read():
                                self.route(message)
                        except Exception as error:
                            for request_id, event in list(self.pending_control_responses.items()):
                                if request_id not in self.pending_control_results:
                                    self.pending_control_results[request_id] = error
                                    event.set()

                    async def send_control_request(self, request_id, event):
                        await event.wait()
                        result = self.pending_control_results.pop(request_id)
                        if isinstance(result, Exception):
                            raise result
                        return result
                """,
            line=13, severity="info"),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        self._functions: list[cst.FunctionDef] = []
        # Handlers open around the current node, and how many were open when each function began.
        self._handlers: list[cst.ExceptHandler] = []
        self._outer: list[int] = [0]
        self._failures: dict[int, set[str]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)
        self._outer.append(len(self._handlers))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()
        self._outer.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._handlers.append(node)

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self._handlers.pop()

    def visit_Module(self, node: cst.Module) -> None:
        self._taken = _taken_out(node)
        self._after_tries(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._after_tries(node.body)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(self._handlers) > self._outer[-1]:
            self._check_assign(node, self._handler_failures())

    def visit_Call(self, node: cst.Call) -> None:
        if len(self._handlers) > self._outer[-1]:
            self._check_store(node, self._handler_failures())

    # -- the parts -------------------------------------------------------------------
    def _handler_failures(self) -> set[str]:
        """Names that hold the failure in the current handler: `as exc`, and names it assigns."""
        handler = self._handlers[-1]
        if id(handler) not in self._failures:
            caught = {handler.name.name.value} if handler.name and isinstance(handler.name.name, cst.Name) else set()
            self._failures[id(handler)] = caught | _assigned_failures(handler.body, caught)
        return self._failures[id(handler)]

    def _check_assign(self, node: cst.Assign, failures: set[str]) -> None:
        for target in node.targets:
            # `items[i:j] = ...` rewrites a list in place: not a keyed store.
            if isinstance(target.target, cst.Subscript) and not _sliced(target.target):
                store = target.target.value
                index = target.target.slice[0].slice
                key = index.value if isinstance(index, cst.Index) else None
                self._check(node, store, store, node.value, failures, key)

    def _check_store(self, call: cst.Call, failures: set[str]) -> None:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in STORES:
            return
        key_at, value_at = STORES[func.attr.value]
        plain = positional(call)
        key = plain[key_at].value if key_at is not None and key_at < len(plain) else None
        value = plain[value_at].value if value_at < len(plain) else None
        if value is None:
            keyword = next((a for a in call.args if a.keyword and a.keyword.value in ("value", "mapping")), None)
            value = keyword.value if keyword is not None else None
        if value is None:
            return
        # A Redis client named anything (`r.set(idem_key, ...)`): then the key says it is the cache.
        named = func.value if _cache_name(source(func.value)) or key is None else key
        self._check(call, named, func.value, value, failures, key)

    def _check(self, node: cst.CSTNode, named: cst.BaseExpression, holder: cst.BaseExpression,
               value: cst.BaseExpression, failures: set[str], key: cst.BaseExpression | None) -> None:
        shown = source(named)
        if not _cache_name(shown, lasting=self._lasting(holder)) or not _failure(value, failures):
            return
        if not words(shown) & CACHE_WORDS and _field(holder, key):
            return  # `self.result["checks"][name] = {"error": ...}`: a report's field, not a cache entry
        if isinstance(holder, cst.Name) and self._functions and _made_empty(self._functions[-1], holder.value):
            return  # `cache = {}` in this call: it dedupes one batch, and the next call starts empty
        # Named for answering a repeated request (`idempotency`, `dedupe`): seen.  Any other
        # cache or result store: a warning when its key names a request, else info.  Stored
        # with its time: a negative cache that expires, on purpose.
        stamped = _stamped(value)
        # A slot of a request in flight (`pending_results[request_id]`), or one the waiting
        # caller takes out (`result = results.pop(request_id)`): it hands one outcome back
        # once, and nothing replays it.
        slot = bool(words(shown) & _IN_FLIGHT_WORDS) or source(holder) in self._taken
        cache = not stamped and not slot and bool(words(shown) & _REPLAY_WORDS)
        keyed = not stamped and not slot and key is not None and bool(words(source(key)) & _REQUEST_KEY_WORDS)
        self.report(
            node,
            f"`{shown}` looks like an idempotency/result cache, and this stores a failure "
            f"(`{source(value)[:60]}`) from an `except` path: retries replay the failure, and a write that "
            "did happen stays reported as failed; cache only a success and drop the entry on failure",
            severity=None if cache else "warning" if keyed else "info",
        )

    def _lasting(self, holder: cst.BaseExpression) -> bool:
        """The store outlives this call: not a local or parameter of the current function,
        nor of one it is nested in (`outcome = {}` handed to a thread's `runner()`)."""
        if not isinstance(holder, cst.Name):
            return True
        return not any(_binds(function, holder.value) for function in self._functions)


    def _after_tries(self, statements) -> None:
        """`except: result = {"error": ...}` then `cache.set(key, result)` after the `try`."""
        for i, statement in enumerate(statements):
            if not isinstance(statement, cst.Try):
                continue
            failures: set[str] = set()
            for handler in statement.handlers:
                if not _leaves(handler):
                    failures |= _assigned_failures(handler.body, set())
            if not failures:
                continue
            for following in statements[i + 1:]:
                for inner in _walk(following):
                    if isinstance(inner, cst.Call):
                        self._check_store(inner, failures)
                    elif isinstance(inner, cst.Assign):
                        self._check_assign(inner, failures)


def _taken_out(module: cst.Module) -> set[str]:
    """The stores whose entries a reader takes out and uses (`result = self.results.pop(cmd_id)`):
    hand-back slots.  A cache's own `cache.pop(key, None)`, a statement, only drops an entry."""
    dropped = {id(node.value) for node in walk.subtree(module) if isinstance(node, cst.Expr)}
    return {source(node.func.value) for node in walk.subtree(module)
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "pop" and id(node) not in dropped}


def _binds(function: cst.FunctionDef, name: str) -> bool:
    """`name` is a parameter or local of `function`."""
    params = function.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    if isinstance(params.star_arg, cst.Param):
        names.add(params.star_arg.name.value)
    if params.star_kwarg is not None:
        names.add(params.star_kwarg.name.value)
    if name in names:
        return True
    return any(
        isinstance(target, cst.Name) and target.value == name
        for node in _walk(function.body)
        if isinstance(node, (cst.Assign, cst.AnnAssign))
        for target in _targets(node)
    )


def _field(holder: cst.BaseExpression, key: cst.BaseExpression | None) -> bool:
    """A store reached by a literal name (`result["checks"]`, or stored under one): a record's
    field.  A cache is keyed by what was asked, not by a name the code spells out."""
    if isinstance(key, cst.SimpleString):
        return True
    return any(isinstance(node, cst.Subscript) and any(
        isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) for e in node.slice)
        for node in walk.subtree(holder))


def _made_empty(function: cst.FunctionDef, name: str) -> bool:
    """`name = {}` (or `dict()`, `[]`) in `function` itself: a store that lives for one call."""
    return any(
        isinstance(target, cst.Name) and target.value == name and node.value is not None and (
            isinstance(node.value, (cst.Dict, cst.List)) and not node.value.elements
            or isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name)
            and node.value.func.value in ("dict", "list", "OrderedDict", "defaultdict") and not node.value.args[1:])
        for node in _walk(function.body) if isinstance(node, (cst.Assign, cst.AnnAssign))
        for target in _targets(node))


def _sliced(target: cst.Subscript) -> bool:
    return any(isinstance(element.slice, cst.Slice) for element in target.slice)

def _assigned_failures(body: cst.CSTNode, known: set[str]) -> set[str]:
    """Names a handler binds to a failure value (`result = {"status": "timeout"}`)."""
    found = set(known)
    for node in _walk(body):
        if isinstance(node, cst.Assign) and _failure(node.value, found):
            found |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
    return found - known


def _failure(value: cst.BaseExpression, failures: set[str]) -> bool:
    """The value is, or spells, a failure: the caught exception, an error record, a timeout marker."""
    for node in _spelled(value):
        text = None
        if isinstance(node, cst.Name) and node.value in failures:
            return True
        if isinstance(node, cst.SimpleString):
            text = node.evaluated_value if isinstance(node.evaluated_value, str) else None
        elif isinstance(node, cst.FormattedStringText):
            text = node.value
        elif isinstance(node, (cst.Name, cst.Attribute)):
            text = dotted_name(node)
        if text and words(text) & _FAILURE_WORDS:
            return True
    return False


def _spelled(value: cst.CSTNode):
    """The parts of `value` that make up what it holds.  A call given a failure makes
    something new (`create_queue(name, attributes)` answers with the queue), unless it
    writes the failure down: `str(exc)`, `json.dumps({...})`, `ErrorResult(exc)`."""
    yield value
    if isinstance(value, cst.Call) and not _records(value):
        yield from _spelled(value.func)
        for arg in value.args:  # `Result(ok=False, error=msg)`, `Outcome("timeout")`: a record still
            if arg.keyword is not None:
                yield arg.keyword
            if isinstance(arg.value, (cst.SimpleString, cst.FormattedString)):
                yield from _spelled(arg.value)
        return
    for child in walk.children(value):
        if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            yield from _spelled(child)


def _records(call: cst.Call) -> bool:
    name = dotted_name(call.func) or ""
    return name in _RECORDERS or bool(words(name.rsplit(".", 1)[-1]) & _FAILURE_WORDS)


def _stamped(value: cst.BaseExpression) -> bool:
    """`exc, datetime.now()`: the value carries the time it was stored."""
    return isinstance(value, cst.Tuple) and any(
        isinstance(e.value, cst.Call) and (dotted_name(e.value.func) or "").rsplit(".", 1)[-1] in _CLOCKS
        for e in value.elements)


def _leaves(handler: cst.ExceptHandler) -> bool:
    body = handler.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = statements[-1] if statements else None
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and bool(last.body) and isinstance(
        last.body[-1], (cst.Raise, cst.Return, cst.Break, cst.Continue)
    )
