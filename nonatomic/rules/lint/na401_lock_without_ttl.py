from __future__ import annotations


import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name, source
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.tree import walk
from nonatomic.rules.lint.semantics.redis import (
    TTL_KEYWORDS,
    RedisCall,
    RedisCallProvider,
    literal_truth,
)

DEFAULT_FIX_TTL_MS = 30_000
DEFAULT_FIX_LOCK_TIMEOUT = 30
# redis-py's positional layouts: set(name, value, ex, px, nx, ...), lock(name, timeout, ...),
# Lock(redis, name, timeout, ...); python-redis-lock's Lock(redis, name, expire, ...).
_SET_TTL_POSITIONS = (2, 3)
_SET_NX_POSITION = 4
_LOCK_CLASSES = {
    "redis.lock.Lock": ("timeout", 2), "redis.asyncio.lock.Lock": ("timeout", 2), "redis_lock.Lock": ("expire", 2),
}


# A value serialised from a document (`json.dumps(config)`, `self._serialize(config)`): the
# SET NX stores a record only if it is absent, it takes no lock.
_SERIALISERS = frozenset({"dumps", "serialize", "serialise", "model_dump_json", "to_json", "json"})
_LOCK_WORDS = frozenset({"lock", "locks", "mutex", "leader", "lease", "owner", "semaphore"})


def _named_for_lock(node: cst.Call) -> bool:
    plain = calls.positional(node)
    return bool(plain) and bool(_LOCK_WORDS & set(word_list(source(plain[0].value))))


def _stores_record(node: cst.Call) -> bool:
    """`set(key, json.dumps(config), nx=True)` under a key not named for a lock: an insert
    of a lasting record if it is absent (a second insert is refused), not a lock to release."""
    plain = calls.positional(node)
    if len(plain) < 2 or _named_for_lock(node):
        return False
    value = plain[1].value
    if isinstance(value, cst.Dict):
        return True
    name = dotted_name(value.func) if isinstance(value, cst.Call) else None
    return name is not None and name.rsplit(".", 1)[-1].lstrip("_") in _SERIALISERS


class LockWithoutTtl(LintRule):
    """
    ## What it does
    Flags Redis locks that never expire: `set(key, value, nx=True)` without
    `ex`/`px`/`exat`/`pxat`, `setnx(key, value)`, and `lock(name)` (or
    `redis.lock.Lock(client, name)`) without `timeout`, on redis-py's sync and
    asyncio clients, cluster clients and pipelines.

    ## Why is this bad?
    A lock without a TTL is released only by its holder. When the holder is a
    task abandoned after a timeout, a worker killed by a deploy, or a request
    whose 504 went back to the user while the agent kept running, nobody
    releases it: every later run for that session waits on the lock or fails
    to get it. One real incident: an agent's tool call hung, the request path
    timed out but the worker thread never cleaned up, and the per-user session
    lock stayed in Redis; every request for that user failed with "lock busy"
    for hours, until someone deleted the key by hand. With a short TTL the same
    bug costs seconds of errors.

    `setnx` followed by `expire` is flagged too: it is two commands, and a
    crash between them leaves a lock with no TTL. The classic SETNX lock is not:
    it stores the holder's deadline as the value, and a function that also
    takes a stale lock over with `getset` lets a dead holder's lock expire.

    A `set(key, json.dumps(record), nx=True)` that stores a serialised record
    (a document, a config) under a key not named for a lock is an insert only
    if absent, which must last: it is not flagged.  Nor is a SET NX whose answer
    nobody reads (a statement, `await r.set(key, token, nx=True)`, or a command
    queued on a pipeline) under such a key that the module never deletes: it
    stores a value if absent (a cache generation token), and a lock is only
    taken when its taker checks it got it, or releases it.

    Receivers are recognised when they are built by a Redis constructor in the
    file, named like a client (`self.redis`, `redis_client`), annotated with a
    Redis type, or (in a file importing redis) used with `setnx` / `nx=`.

    ## Example
    ```python
    import redis

    def handle(r: redis.Redis, session_id, token):
        if not r.set(f"lock:session:{session_id}", token, nx=True):
            raise Busy(session_id)
    ```

    ## Use instead
    ```python
    import redis

    def handle(r: redis.Redis, session_id, token):
        if not r.set(f"lock:session:{session_id}", token, nx=True, px=30_000):
            raise Busy(session_id)
    ```
    Pick a TTL longer than the critical section, or renew it while working
    (`Lock.extend`, `Lock.reacquire`).

    ## Options
    `[tool.nonatomic.lock-without-ttl]`: `fix-ttl-ms` (the `px=` the fix
    writes, default 30000) and `fix-lock-timeout` (the `timeout=` in seconds
    the fix gives `lock()`, default 30).

    ## Fix
    Unsafe: adds `px=<fix-ttl-ms>` to `set(..., nx=True)`, rewrites
    `setnx(k, v)` into `set(k, v, nx=True, px=<fix-ttl-ms>)` (it then returns
    `None` rather than `False` when the key is taken), and adds
    `timeout=<fix-lock-timeout>` to `lock()`. A TTL shorter than the work it
    guards lets a second holder in while the first is still running, so check
    the value.
    """

    code = "NA401"
    METADATA_DEPENDENCIES = (CalleeProvider, RedisCallProvider)

    VALID = [
        # A token stored if absent, its answer unread (a statement, a pipelined command): a
        # cache generation meant to last, not a lock anyone waits on.
        """
            import uuid
            import redis.asyncio as redis

            async def generation(client: redis.Redis, key):
                current = await client.get(key)
                if current is not None:
                    return current
                token = uuid.uuid4().hex
                await client.set(key, token, nx=True)
                pipe = client.pipeline()
                pipe.set(f"{key}:children", token, nx=True)
                await pipe.execute()
                return token
            """,
        # Insert a lasting record only if it is absent: no lock, and an expiry would lose it.
        """
            import redis.asyncio as redis

            class AgentStore:
                def __init__(self, url):
                    self.redis = redis.from_url(url)

                async def insert(self, config):
                    was_set = await self.redis.set(self._key(config.name), self._serialize(config), nx=True)
                    if not was_set:
                        raise ValueError(f"Agent '{config.name}' already exists")
            """,
        """
            import redis
            r = redis.Redis()
            r.set('lock:order:1', token, nx=True, ex=30)
            """,
        """
            import redis
            r = redis.Redis()
            r.set('lock:order:1', token, nx=True, px=30000)
            """,
        """
            import redis
            r = redis.Redis()
            r.set('lock:order:1', token, nx=True, exat=deadline)
            """,
        # Positional TTL: set(name, value, ex, px, nx).
        """
            import redis
            r = redis.Redis()
            r.set('lock:order:1', token, 30, None, True)
            """,
        # Not a set-if-absent: a plain write (NA403's business, not a lock).
        """
            import redis
            r = redis.Redis()
            r.set('greeting', 'hi')
            r.set('k', v, nx=False)
            """,
        # A flag passed through by a wrapper: unknown, not flagged.
        """
            import redis
            r = redis.Redis()
            def put(k, v, nx):
                r.set(k, v, nx=nx)
            """,
        """
            import redis
            r = redis.Redis()
            with r.lock('report', timeout=60, blocking_timeout=5):
                build()
            """,
        """
            import redis
            r = redis.Redis()
            lock = r.lock('report', 60)
            """,
        """
            from redis.lock import Lock
            lock = Lock(client, 'report', timeout=10)
            """,
        """
            import redis_lock
            lock = redis_lock.Lock(conn, 'report', expire=60, auto_renewal=True)
            """,
        # A TTL parameter with a default, or one the function fills in.
        """

            import redis

            r = redis.Redis()

            def acquire(key, token, ttl=30):
                return r.set(f"lock:{key}", token, nx=True, ex=ttl)

            def take(key, token, ttl=None):
                ttl = ttl or 30
                return r.set(f"lock:{key}", token, nx=True, ex=ttl)
            """,
        # **kwargs may carry the TTL.
        """
            import redis
            r = redis.Redis()
            def take(k, **kw):
                return r.set(k, 1, nx=True, **kw)
            """,
        # Look-alikes: dict.setdefault, a cache with its own default expiry, threading locks.
        """
            d = {}
            d.setdefault('k', [])
            """,
        """
            import redis
            from django.core.cache import cache
            cache.set('k', v, nx=True, timeout=None)
            cache.add('k', v)
            """,
        """
            import threading
            lock = threading.Lock()
            with lock:
                pass
            """,
        # An untyped receiver with a generic name in a file that never imports redis.
        """
            def take(store, k):
                store.set(k, 1, nx=True)
                store.setnx(k, 1)
            # redis-like store
            """,
        # The classic SETNX lock: the value is the holder's deadline, and a contender that finds
        # it past takes the lock over with GETSET, so the lock of a dead holder expires.
        """
            import time
            import redis

            class Lock:
                def __init__(self, client: redis.Redis, name: str, timeout: float = 60):
                    self.redis, self.name, self.timeout = client, name, timeout

                def acquire(self):
                    while True:
                        now = time.time()
                        until = now + self.timeout
                        if self.redis.setnx(self.name, until):
                            return True
                        held = float(self.redis.get(self.name) or 1)
                        if held < now and float(self.redis.getset(self.name, until) or 1) < now:
                            return True
                        time.sleep(0.1)
            """,
        # lock() on a client that is not Redis (its module is not redis, its name says nothing).
        """
            import redis
            from myapp.kv import kv
            kv.lock('job')
            """,
    ]
    INVALID = [
        # Its answer unread, but the module deletes the key when done: a lock.
        Invalid("""
            import redis

            r = redis.Redis()

            def process(job_id, worker):
                key = f"job:{job_id}:running"
                r.set(key, worker, nx=True)
                try:
                    run(job_id)
                finally:
                    r.delete(key)
            """, line=7),
        # The same set under a key not named for a lock, but its answer decides who goes on: a lock.
        Invalid("""
            import redis.asyncio as redis

            async def claim(client: redis.Redis, job_id, worker):
                if not await client.set(f"job:{job_id}", worker, nx=True):
                    raise RuntimeError("taken")
            """, line=4),
        Invalid(
            """
                import redis
                r = redis.Redis()
                r.set('lock:order:1', token, nx=True)
                """,
            line=3,
            fixed="""
                import redis
                r = redis.Redis()
                r.set('lock:order:1', token, nx=True, px=30000)
                """,
        ),
        # An explicit ex=None is no TTL either; the fix keeps it harmlessly.
        Invalid(
            """
                import redis
                r = redis.Redis()
                r.set('lock:x', t, nx=True, ex=None)
                """,
            line=3,
            fixed="""
                import redis
                r = redis.Redis()
                r.set('lock:x', t, nx=True, ex=None, px=30000)
                """,
        ),
        Invalid(
            """
                import redis.asyncio as aioredis
                r = aioredis.from_url(url)
                async def f(sid):
                    return await r.set(f'lock:{sid}', token, nx=True)
                """,
            line=4,
        ),
        Invalid(
            """
                import redis
                r = redis.Redis()
                if r.setnx('lock:job', 1):
                    r.expire('lock:job', 30)
                """,
            line=3,
            fixed="""
                import redis
                r = redis.Redis()
                if r.set('lock:job', 1, nx=True, px=30000):
                    r.expire('lock:job', 30)
                """,
        ),
        Invalid(
            """
                import redis
                r = redis.Redis()
                with r.lock('report'):
                    build()
                """,
            line=3,
            fixed="""
                import redis
                r = redis.Redis()
                with r.lock('report', timeout=30):
                    build()
                """,
        ),
        Invalid(
            """
                import redis
                r = redis.Redis()
                lock = r.lock('report', timeout=None, blocking_timeout=5)
                """,
            line=3,
            fixed="""
                import redis
                r = redis.Redis()
                lock = r.lock('report', timeout=30, blocking_timeout=5)
                """,
        ),
        Invalid("""
                from redis.lock import Lock
                lock = Lock(client, 'report')
                """, line=2),
        # python-redis-lock's Lock never expires without `expire`.
        Invalid("""

                import redis
                import redis_lock

                conn = redis.Redis()

                def rebuild(report_id):
                    with redis_lock.Lock(conn, f"report:{report_id}"):
                        build(report_id)
                """, line=8),
        # A TTL parameter whose default is None: the default call takes a lock for ever.
        Invalid("""

                import redis

                r = redis.Redis()

                def acquire(key, token, ttl=None):
                    return r.set(f"lock:{key}", token, nx=True, ex=ttl)
                """, line=7, severity="warning"),
        # A client held in an attribute assigned elsewhere: known by its name.
        Invalid(
            """
                class Sessions:
                    def acquire(self, sid, token):
                        return self.redis.set(f'session-lock:{sid}', token, nx=True)
                """,
            line=3,
        ),
        # A client parameter, proven by the command in a file importing redis.
        Invalid("""
                import redis
                def take(client, key):
                    return client.setnx(key, '1')
                """, line=3),
        Invalid("""
                from redis import Redis
                def take(conn: Redis, key):
                    return conn.lock(key)
                """, line=3),
        Invalid(
            """
                import redis
                r = redis.RedisCluster(host='h')
                pipe = r.pipeline()
                pipe.set('lock:a', 1, nx=True)
                """,
            line=4,
        ),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        options = self.context.options
        self.fix_ttl_ms = int(options.get("fix-ttl-ms", DEFAULT_FIX_TTL_MS))
        self.fix_lock_timeout = options.get("fix-lock-timeout", DEFAULT_FIX_LOCK_TIMEOUT)
        self._functions: list[tuple[dict[str, cst.BaseExpression], set[str], bool]] = []
        self._discarded: set[int] = set()
        self._module: cst.Module | None = None
        self._released: set[str] | None = None  # keys the module deletes, found when first asked

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def _deleted(self, key: cst.BaseExpression) -> bool:
        """`r.delete(key)` somewhere in the module: whoever set the key releases it."""
        if self._released is None:
            self._released = {
                source(call.args[0].value) for call in walk.subtree(self._module) if isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("delete", "unlink", "getdel")
                and call.args
            } if self._module is not None else set()
        return source(key) in self._released

    def visit_Expr(self, node: cst.Expr) -> None:
        # `await r.set(key, token, nx=True)` as a statement: nobody learns whether it was set
        value = node.value.expression if isinstance(node.value, cst.Await) else node.value
        self._discarded.add(id(value))

    def _initialises(self, node: cst.Call) -> bool:
        """A SET NX whose answer nobody reads (a statement, a pipelined command) under a key not
        named for a lock, and that the module never deletes: it stores a value if absent (a
        generation token, a default), which is meant to last; an acquisition is only a lock
        when its caller checks it got it, or releases it."""
        if id(node) not in self._discarded or _named_for_lock(node):
            return False
        plain = calls.positional(node)
        return not (plain and self._deleted(plain[0].value))

    def visit_Call(self, node: cst.Call) -> None:
        if calls.has_star_kwargs(node) or calls.has_star_args(node):
            return
        found: RedisCall | None = self.get_metadata(RedisCallProvider, node, None)
        if found is not None and found.command == "set":
            self._check_set(node, found)
        elif found is not None and found.command == "setnx":
            self._check_setnx(node, found)
        elif found is not None and found.command == "lock":
            self._check_lock(node, f"{found.receiver}.lock", 1)
        else:
            callee = self.get_metadata(CalleeProvider, node, None)
            if callee in _LOCK_CLASSES:
                keyword, position = _LOCK_CLASSES[callee]
                self._check_lock(node, callee, position, keyword)

    def _check_set(self, node: cst.Call, found: RedisCall) -> None:
        nx = calls.argument(node, ("nx",), _SET_NX_POSITION)
        if nx is None or literal_truth(nx.value) is not True or _stores_record(node) or self._initialises(node):
            return
        plain = calls.positional(node)
        given = [calls.argument(node, (keyword,), position) for position, keyword in zip(_SET_TTL_POSITIONS, TTL_KEYWORDS)]
        given += [calls.keyword(node, keyword) for keyword in TTL_KEYWORDS[len(_SET_TTL_POSITIONS):]]
        given = [arg for arg in given if arg is not None]
        if any(not self._none(arg.value) for arg in given):
            return
        replacement = None
        passed_on = any(not calls.is_none(arg.value) for arg in given)  # a TTL parameter: the caller's to set
        if len(plain) <= 2 and not passed_on:  # a positional ex/px would clash with the keyword
            replacement = calls.with_keyword(node, "px", cst.Integer(str(self.fix_ttl_ms)))
        self.report(
            node,
            f"`{found.receiver}.set(..., nx=True)` takes a lock that never expires{_defaulted(given)}: if its "
            "holder dies or is abandoned after a timeout, nobody releases it; pass `ex=`/`px=`",
            severity="warning" if passed_on else None,  # a caller may pass the TTL
            replacement=replacement,
            fix_title=f"Add `px={self.fix_ttl_ms}`" if replacement else None,
        )

    def _check_setnx(self, node: cst.Call, found: RedisCall) -> None:
        if self._initialises(node):
            return
        if self._functions and self._functions[-1][2]:
            # The classic SETNX lock: the value is the holder's deadline, and a contender that
            # finds it past takes the lock over with GETSET, so a dead holder's lock expires.
            return
        replacement = None
        if len(node.args) == 2 and len(calls.positional(node)) == 2:
            assert isinstance(node.func, cst.Attribute)
            as_set = node.with_changes(func=node.func.with_changes(attr=cst.Name("set")))
            as_set = calls.with_keyword(as_set, "nx", cst.Name("True"))
            replacement = calls.with_keyword(as_set, "px", cst.Integer(str(self.fix_ttl_ms)))
        self.report(
            node,
            f"`{found.receiver}.setnx(...)` sets no expiry (and an `expire` after it is a second "
            "command: a crash in between leaves the lock forever); use `set(key, token, nx=True, px=...)`",
            replacement=replacement,
            fix_title=f"Use `set(..., nx=True, px={self.fix_ttl_ms})`" if replacement else None,
        )

    def _check_lock(self, node: cst.Call, shown: str, timeout_position: int, keyword: str = "timeout") -> None:
        given = calls.argument(node, (keyword,), timeout_position)
        if given is not None and not self._none(given.value):
            return
        replacement = None
        passed_on = given is not None and not calls.is_none(given.value)  # a parameter: the caller's to set
        if len(calls.positional(node)) <= timeout_position and not passed_on:
            value = cst.parse_expression(repr(self.fix_lock_timeout))
            replacement = calls.with_keyword(node, keyword, value)
        self.report(
            node,
            f"`{shown}(...)` has no `{keyword}`{_defaulted([given] if given else [])}: a holder that dies or "
            "is abandoned never releases the lock, and every later run waits on it",
            severity="warning" if passed_on else None,  # a caller may pass the TTL
            replacement=replacement,
            fix_title=f"Add `{keyword}={self.fix_lock_timeout}`" if replacement else None,
        )

    # -- a TTL parameter that defaults to None ------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        defaults = {
            p.name.value: p.default for p in (*params.params, *params.kwonly_params) if p.default is not None
        }
        takes_over = any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "getset"
                         for n in walk.subtree(node.body))
        self._functions.append((defaults, _rebound(node.body), takes_over))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def _none(self, expr: cst.BaseExpression) -> bool:
        """None, or a parameter of the enclosing function that defaults to None and that
        the function never rebinds (`def acquire(key, ttl=None): r.set(key, 1, nx=True, ex=ttl)`)."""
        if calls.is_none(expr):
            return True
        if not isinstance(expr, cst.Name) or not self._functions:
            return False
        defaults, rebound, _ = self._functions[-1]
        default = defaults.get(expr.value)
        return default is not None and calls.is_none(default) and expr.value not in rebound


def _defaulted(given: list[cst.Arg]) -> str:
    """What a message adds for a TTL parameter defaulting to None: "(`ex=ttl` is None unless ...)"."""
    for arg in given:
        if isinstance(arg.value, cst.Name) and arg.value.value != "None":
            shown = f"{arg.keyword.value}={arg.value.value}" if arg.keyword is not None else arg.value.value
            return f" (`{shown}` is None unless the caller passes one)"
    return ""


class _Rebinds(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.names |= {n.value for n in _names(node.target)}

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.names |= {n.value for n in _names(node.target)}

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.names |= {n.value for n in _names(node.target)}

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.names |= {n.value for n in _names(node.target)}


def _names(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _names(element.value)]
    return []


def _rebound(body: cst.CSTNode) -> set[str]:
    """Names a function body assigns (`ttl = ttl or 30`)."""
    found = _Rebinds()
    body.visit(found)
    return found.names
