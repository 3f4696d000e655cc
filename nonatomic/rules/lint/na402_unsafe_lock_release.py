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
        (
            "import redis\nr = redis.Redis()\nRELEASE = \"if redis.call('get', KEYS[1]) == ARGV[1] then "
            "return redis.call('del', KEYS[1]) end\"\n"
            "def step(key, token):\n    if r.set(key, token, nx=True, ex=30):\n        try:\n            work()\n"
            "        finally:\n            r.eval(RELEASE, 1, key, token)\n"
        ),
        # A registered script object called with keys=.
        (
            "import redis\nr = redis.Redis()\nrelease = r.register_script(LUA)\n"
            "def step(key, token):\n    r.set(key, token, nx=True, ex=30)\n    try:\n        work()\n"
            "    finally:\n        release(keys=[key], args=[token])\n"
        ),
        # redis-py's Lock releases with its own owner check.
        "import redis\nr = redis.Redis()\nlock = r.lock('job', timeout=30)\nif lock.acquire():\n    try:\n        work()\n    finally:\n        lock.release()\n",
        # A WATCH/MULTI transaction checks the owner atomically.
        (
            "import redis\nr = redis.Redis()\ndef step(key, token):\n    r.set(key, token, nx=True, ex=30)\n"
            "    with r.pipeline() as pipe:\n        pipe.watch(key)\n        if pipe.get(key) == token:\n"
            "            pipe.multi()\n            pipe.delete(key)\n            pipe.execute()\n"
        ),
        # Deleting a key that was never taken as a lock.
        "import redis\nr = redis.Redis()\ndef reset(sid):\n    r.set(f'cart:{sid}', '[]')\n    r.delete(f'cart:{sid}')\n",
        # Another key than the one locked.
        "import redis\nr = redis.Redis()\ndef f(a, b, t):\n    r.set(a, t, nx=True, ex=5)\n    r.delete(b)\n",
        # A class whose set-if-absent and delete share a key name but nothing says lock.
        (
            "import redis\nclass Seen:\n    def __init__(self):\n        self.r = redis.Redis()\n"
            "    def add(self, key):\n        return self.r.set(key, 1, nx=True, ex=3600)\n"
            "    def forget(self, key):\n        self.r.delete(key)\n"
        ),
        # Not Redis: a dict and a Django cache.
        "cache = {}\ndef f(k):\n    cache.setdefault(k, 1)\n    del cache[k]\n# redis\n",
        "import redis\nfrom django.core.cache import cache\ndef f(k):\n    cache.add(k, 1)\n    cache.delete(k)\n",
    ]
    INVALID = [
        Invalid(
            "import redis\nr = redis.Redis()\ndef step(sid, token):\n    key = f'lock:session:{sid}'\n"
            "    if not r.set(key, token, nx=True, ex=30):\n        return\n    try:\n        work()\n"
            "    finally:\n        r.delete(key)\n",
            line=10,
        ),
        # The key spelled out at both ends, in asyncio.
        Invalid(
            "import redis.asyncio as redis\nr = redis.Redis()\nasync def step(sid, token):\n"
            "    await r.set(f'lock:{sid}', token, nx=True, px=5000)\n    await work()\n"
            "    await r.unlink(f'lock:{sid}')\n",
            line=6,
        ),
        # GET then DEL: the lock can change hands in between.
        Invalid(
            "import redis\nr = redis.Redis()\ndef step(key, token):\n    r.set(key, token, nx=True, ex=30)\n"
            "    work()\n    if r.get(key) == token:\n        r.delete(key)\n",
            line=7,
        ),
        # A lock class: acquire and release in different methods.
        Invalid(
            "import uuid\nimport redis\nclass RedisLock:\n    def __init__(self, client, name):\n        self.client = client\n"
            "        self.key = f'lock:{name}'\n        self.token = uuid.uuid4().hex\n"
            "    def acquire(self):\n        return self.client.set(self.key, self.token, nx=True, ex=10)\n"
            "    def release(self):\n        self.client.delete(self.key)\n",
            line=11,
        ),
        # Module-level helpers; the client is a parameter, proven Redis by setnx.
        Invalid(
            "import redis\ndef acquire_lock(client, name):\n    return client.setnx(name, 1)\n"
            "def release_lock(client, name):\n    client.delete(name)\n",
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
        for acquire in frame.acquires:
            if not any(acquire.key.same_as(key) for key in release.call.keys):
                continue
            if frame.container:
                named = words(f"{acquire.key.text} {acquire.key.resolved} {release.function} {frame.name}")
                if not named & _LOCK_WORDS:
                    continue
            return acquire
        return None

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
