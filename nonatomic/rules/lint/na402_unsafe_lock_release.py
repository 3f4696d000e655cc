from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.names import words
from nonatomic.rules.lint.semantics.redis import (
    Key,
    RedisCall,
    RedisCallProvider,
    literal_truth,
)

# Calls that can release a lock atomically: a Lua compare-and-delete (eval, a
# registered Script called with keys=), a Redis function, or a WATCH transaction.
_ATOMIC_RELEASE = frozenset(
    {"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "register_script", "script_load", "watch"}
)
_RELEASE = frozenset({"delete", "unlink"})
_LOCK_WORDS = frozenset({"lock", "locks", "locked", "unlock", "lease", "mutex", "semaphore"})


@dataclass
class _Acquire:
    node: cst.Call
    key: Key
    value: cst.BaseExpression | None


@dataclass
class _Release:
    node: cst.Call
    call: RedisCall
    function: str
    atomic: bool  # its function can compare-and-delete
    reads: list[Key]  # keys its function reads with GET


@dataclass
class _Frame:
    name: str
    container: bool  # a class or the module: its functions share keys only by name
    acquires: list[_Acquire] = field(default_factory=list)
    releases: list[_Release] = field(default_factory=list)
    reads: list[Key] = field(default_factory=list)
    atomic: bool = False


class UnsafeLockRelease(LintRule):
    """
    ## What it does
    Flags a Redis lock released with a plain `delete` (or `unlink`): a key
    taken with `set(key, token, nx=True, ...)` or `setnx` and deleted without
    checking that it still holds the caller's token. The acquire and the delete
    are matched by key in one function, or across the methods of a class (and
    the functions of a module) when the key, the function or the class is
    named like a lock.

    ## Why is this bad?
    A lock with a TTL can expire while its holder still works: a slow tool
    call, a GC pause, a retry loop. Another run then takes the lock, and when
    the first run reaches `finally: r.delete(key)` it deletes the *second*
    run's lock. A third run gets in, and two runs now write the same session
    state at once. One real incident: a FastAPI endpoint returned 504 while the
    agent kept running; the user resubmitted, the new request took the expired
    session lock, and the old task's `finally` deleted it, so two agent
    instances edited the same order.

    Reading the token with `get` and then calling `delete` is flagged as well:
    the lock can expire and change hands between the two commands. The
    function is trusted when it releases atomically: a Lua script (`eval`,
    `evalsha`, `register_script`), a Redis function (`fcall`), or a
    `WATCH`/`MULTI` transaction.

    ## Example
    ```python
    import redis

    def run_step(r: redis.Redis, session_id, token):
        key = f"lock:session:{session_id}"
        if not r.set(key, token, nx=True, ex=30):
            raise Busy(session_id)
        try:
            advance(session_id)
        finally:
            r.delete(key)
    ```

    ## Use instead
    ```python
    import redis

    RELEASE = (
        "if redis.call('get', KEYS[1]) == ARGV[1] then "
        "return redis.call('del', KEYS[1]) else return 0 end"
    )

    def run_step(r: redis.Redis, session_id, token):
        key = f"lock:session:{session_id}"
        if not r.set(key, token, nx=True, ex=30):
            raise Busy(session_id)
        try:
            advance(session_id)
        finally:
            r.eval(RELEASE, 1, key, token)
    ```
    Or use `redis.lock.Lock` (`with r.lock(key, timeout=30):`), whose
    `release()` does exactly this.
    """

    code = "NA402"
    METADATA_DEPENDENCIES = (RedisCallProvider,)

    VALID = [
        # Compare-and-delete in Lua.
        """
            import redis
            r = redis.Redis()
            RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end"
            def step(key, token):
                if r.set(key, token, nx=True, ex=30):
                    try:
                        work()
                    finally:
                        r.eval(RELEASE, 1, key, token)
            """,
        # A registered script object called with keys=.
        """
            import redis
            r = redis.Redis()
            release = r.register_script(LUA)
            def step(key, token):
                r.set(key, token, nx=True, ex=30)
                try:
                    work()
                finally:
                    release(keys=[key], args=[token])
            """,
        # redis-py's Lock releases with its own owner check.
        """
        import redis
        r = redis.Redis()
        lock = r.lock('job', timeout=30)
        if lock.acquire():
            try:
                work()
            finally:
                lock.release()
        """,
        # A WATCH/MULTI transaction checks the owner atomically.
        """
            import redis
            r = redis.Redis()
            def step(key, token):
                r.set(key, token, nx=True, ex=30)
                with r.pipeline() as pipe:
                    pipe.watch(key)
                    if pipe.get(key) == token:
                        pipe.multi()
                        pipe.delete(key)
                        pipe.execute()
            """,
        # Deleting a key that was never taken as a lock.
        """
        import redis
        r = redis.Redis()
        def reset(sid):
            r.set(f'cart:{sid}', '[]')
            r.delete(f'cart:{sid}')
        """,
        # Another key than the one locked.
        """
        import redis
        r = redis.Redis()
        def f(a, b, t):
            r.set(a, t, nx=True, ex=5)
            r.delete(b)
        """,
        # A class whose set-if-absent and delete share a key name but nothing says lock.
        """
            import redis
            class Seen:
                def __init__(self):
                    self.r = redis.Redis()
                def add(self, key):
                    return self.r.set(key, 1, nx=True, ex=3600)
                def forget(self, key):
                    self.r.delete(key)
            """,
        # Not Redis: a dict and a Django cache.
        """
        cache = {}
        def f(k):
            cache.setdefault(k, 1)
            del cache[k]
        # redis
        """,
        """
        import redis
        from django.core.cache import cache
        def f(k):
            cache.add(k, 1)
            cache.delete(k)
        """,
    ]
    INVALID = [
        Invalid(
            """
            import redis
            r = redis.Redis()
            def step(sid, token):
                key = f'lock:session:{sid}'
                if not r.set(key, token, nx=True, ex=30):
                    return
                try:
                    work()
                finally:
                    r.delete(key)
            """,
            line=10,
        ),
        # The key spelled out at both ends, in asyncio.
        Invalid(
            """
            import redis.asyncio as redis
            r = redis.Redis()
            async def step(sid, token):
                await r.set(f'lock:{sid}', token, nx=True, px=5000)
                await work()
                await r.unlink(f'lock:{sid}')
            """,
            line=6,
        ),
        # GET then DEL: the lock can change hands in between.
        Invalid(
            """
            import redis
            r = redis.Redis()
            def step(key, token):
                r.set(key, token, nx=True, ex=30)
                work()
                if r.get(key) == token:
                    r.delete(key)
            """,
            line=7,
        ),
        # A lock class: acquire and release in different methods.
        Invalid(
            """
            import uuid
            import redis
            class RedisLock:
                def __init__(self, client, name):
                    self.client = client
                    self.key = f'lock:{name}'
                    self.token = uuid.uuid4().hex
                def acquire(self):
                    return self.client.set(self.key, self.token, nx=True, ex=10)
                def release(self):
                    self.client.delete(self.key)
            """,
            line=11,
        ),
        # Module-level helpers; the client is a parameter, proven Redis by setnx.
        Invalid(
            """
            import redis
            def acquire_lock(client, name):
                return client.setnx(name, 1)
            def release_lock(client, name):
                client.delete(name)
            """,
            line=5,
        ),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        self.frames: list[_Frame] = []

    # -- frames ---------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.frames.append(_Frame("", container=True))

    def leave_Module(self, original_node: cst.Module) -> None:
        self._close(self.frames.pop(), None)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.frames.append(_Frame(node.name.value, container=True))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._close(self.frames.pop(), None)  # `self.<key>` means nothing outside its class

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.append(_Frame(node.name.value, container=False))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        frame = self.frames.pop()
        for release in frame.releases:
            release.atomic = release.atomic or frame.atomic
            release.reads = release.reads or frame.reads
        self._close(frame, self.frames[-1])

    def _close(self, frame: _Frame, parent: _Frame | None) -> None:
        """Report the releases matched here; hand the others (and the acquires) to `parent`."""
        unmatched = []
        for release in frame.releases:
            acquire = self._match(frame, release)
            if acquire is None:
                unmatched.append(release)
            elif not release.atomic:
                self._report(release, acquire)
        if parent is not None:
            parent.acquires += frame.acquires
            parent.releases += unmatched

    def _match(self, frame: _Frame, release: _Release) -> _Acquire | None:
        """The acquisition of the released key; of several (a class with a blocking
        `acquire` and a `try_lock`), the nearest one above the release, which is the one
        a reader pairs it with."""
        found = []
        for acquire in frame.acquires:
            if not any(acquire.key.same_as(key) for key in release.call.keys):
                continue
            if frame.container:
                named = words(f"{acquire.key.text} {acquire.key.resolved} {release.function} {frame.name}")
                if not named & _LOCK_WORDS:
                    continue
            found.append(acquire)
        if len(found) < 2:
            return found[0] if found else None
        at = self.line_of(release.node)
        above = [acquire for acquire in found if self.line_of(acquire.node) < at]
        return max(above, key=lambda acquire: self.line_of(acquire.node)) if above else found[0]

    # -- what a function does -------------------------------------------------------
    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if "redis.call" in node.value:
            self.frames[-1].atomic = True

    def visit_Call(self, node: cst.Call) -> None:
        frame = self.frames[-1]
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        if name in _ATOMIC_RELEASE or any(arg.keyword and arg.keyword.value == "keys" for arg in node.args):
            frame.atomic = True
        found: RedisCall | None = self.get_metadata(RedisCallProvider, node, None)
        if found is None or not found.keys:
            return
        if found.command == "setnx" or (found.command == "set" and self._is_nx(node)):
            value = node.args[1].value if len(node.args) > 1 else None
            frame.acquires.append(_Acquire(node, found.keys[0], value))
        elif found.command in _RELEASE:
            frame.releases.append(_Release(node, found, frame.name, False, []))
        elif found.command == "get":
            frame.reads.append(found.keys[0])

    @staticmethod
    def _is_nx(node: cst.Call) -> bool:
        return any(
            arg.keyword is not None and arg.keyword.value == "nx" and literal_truth(arg.value) is not False
            for arg in node.args
        )

    def _report(self, release: _Release, acquire: _Acquire) -> None:
        line = self.line_of(acquire.node)
        call = release.call
        if any(acquire.key.same_as(key) for key in release.reads):
            why = "after reading its token with `get`: two commands, and the lock can expire and change hands in between"
        else:
            why = "without checking that it still holds it: if the lock expired and another run took it, this deletes that run's lock"
        if acquire.value is not None and literal_truth(acquire.value) is not None:
            why += " (and its constant value identifies no owner: store a unique token)"
        self.report(
            release.node,
            f"`{call.receiver}.{call.command}(...)` releases the lock taken on line {line} {why}; "
            "compare-and-delete in a Lua script, or use `redis.lock.Lock`",
        )
