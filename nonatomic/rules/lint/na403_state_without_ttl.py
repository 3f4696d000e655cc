from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.names import words
from nonatomic.rules.lint.semantics.redis import (
    TTL_KEYWORDS,
    Key,
    RedisCall,
    RedisCallProvider,
    literal_truth,
)

DEFAULT_STATE_WORDS = (
    "task", "session", "run", "conversation", "chat", "thread", "agent",
    "state", "checkpoint", "job", "workflow", "step",
)
# Commands that create a key with no expiry (SETEX/PSETEX always carry one).
_WRITES = frozenset({"set", "hset", "hmset", "hsetnx", "lpush", "rpush", "sadd", "zadd", "append"})
_EXPIRES = frozenset({"expire", "pexpire", "expireat", "pexpireat"})
_SET_TTL_POSITIONS = (2, 3)


@dataclass
class _Frame:
    writes: list[tuple[cst.Call, RedisCall]] = field(default_factory=list)
    expired: list[Key] = field(default_factory=list)


class StateWithoutTtl(LintRule):
    """
    ## What it does
    Flags task, session, run or conversation state written to Redis with no
    expiry: `set` without `ex`/`px`/`exat`/`pxat`/`keepttl`, and `hset`,
    `hmset`, `rpush`, `lpush`, `sadd`, `zadd`, `append`, on a key that looks
    like the state of one run: built per run (not one constant string) and
    naming a task, session, run, conversation, chat, thread, agent, state,
    checkpoint, job, workflow or step, when no
    `expire`/`pexpire`/`expireat` is applied to the same key in the same
    function, class or module.

    Off by default: whether a key must expire is a design decision the code
    cannot always show (a session store may be swept by a job).

    ## Why is this bad?
    Run state outlives the run whenever cleanup does not happen: a task killed
    by a timeout, a worker restart, a 504 returned while the agent goes on. The
    state then stays forever: the next run of the same session resumes from a
    stale half-finished trace, chat histories grow until Redis runs out of
    memory, and "in progress" markers block the session for good. One real
    incident: after a timeout the cleanup path had a bug, and only the keys that
    carried a short TTL healed themselves; the rest had to be found and deleted
    by hand. A TTL a little longer than the run's overall deadline makes
    forgotten state rot away on its own.

    ## Example
    ```python
    import json
    import redis.asyncio as redis

    async def save_step(r: redis.Redis, task_id, step, result):
        await r.hset(f"task:{task_id}:steps", step, json.dumps(result))
    ```

    ## Use instead
    ```python
    import json
    import redis.asyncio as redis

    async def save_step(r: redis.Redis, task_id, step, result):
        async with r.pipeline(transaction=True) as pipe:
            pipe.hset(f"task:{task_id}:steps", step, json.dumps(result))
            pipe.expire(f"task:{task_id}:steps", 3600)
            await pipe.execute()
    ```

    ## Options
    `[tool.nonatomic.state-without-ttl]`: `state-words` (the words a key must
    contain to count as run state; default the list above).
    """

    code = "NA403"
    METADATA_DEPENDENCIES = (RedisCallProvider,)

    VALID = [
        """
        import redis
        r = redis.Redis()
        r.set(f'session:{sid}', data, ex=3600)
        """,
        """
        import redis
        r = redis.Redis()
        r.set(f'session:{sid}', data, None, 3_600_000)
        """,
        """
        import redis
        r = redis.Redis()
        r.set(f'session:{sid}', data, keepttl=True)
        """,
        """
        import redis
        r = redis.Redis()
        r.setex(f'task:{tid}:status', 600, 'running')
        """,
        # Expired on the same key, through a pipeline.
        """
            import redis
            r = redis.Redis()
            def save(tid, step, out):
                key = f'task:{tid}:steps'
                pipe = r.pipeline()
                pipe.hset(key, step, out)
                pipe.expire(key, 3600)
                pipe.execute()
            """,
        # Expired in another method of the same class.
        """
            import redis
            class Store:
                def __init__(self):
                    self.r = redis.Redis()
                def add(self, sid, msg):
                    self.r.rpush(f'chat:{sid}', msg)
                    self._touch(sid)
                def _touch(self, sid):
                    self.r.expire(f'chat:{sid}', 86400)
            """,
        # Not run state: configuration and counters.
        """
        import redis
        r = redis.Redis()
        r.set('feature:dark-mode', '1')
        r.hset('config', 'model', 'gpt-4o')
        """,
        # One constant key shared by every run is global state, even if it says "state" or "run".
        """
            import redis
            r = redis.Redis()
            ACTIVE_RUNS = 'agent:run:active'
            r.set('circuit:llm:state', 'open')
            def admit():
                r.set(ACTIVE_RUNS, 0)
            """,
        # A lock (NA401's business).
        """
        import redis
        r = redis.Redis()
        r.set(f'lock:session:{sid}', token, nx=True)
        """,
        # Not Redis: a dict-like cache and a Django cache with its default timeout.
        """
        import redis
        from django.core.cache import cache
        cache.set(f'session:{sid}', data)
        """,
        """
        sessions = {}
        sessions[sid] = state
        # redis
        """,
    ]
    INVALID = [
        Invalid("""
            import redis
            r = redis.Redis()
            r.set(f'session:{sid}', json.dumps(state))
            """, line=3),
        Invalid(
            """
            import redis.asyncio as redis
            r = redis.from_url(url)
            async def record(task_id, step, out):
                await r.hset(f'task:{task_id}:steps', step, out)
            """,
            line=4,
        ),
        # The key through a local variable; the expire touches another key.
        Invalid(
            """
            import redis
            r = redis.Redis()
            def push(conversation_id, msg):
                key = f'conversation:{conversation_id}:messages'
                r.rpush(key, msg)
                r.expire(f'conversation:{conversation_id}:summary', 60)
            """,
            line=5,
        ),
        Invalid(
            """
            class Memory:
                def save(self, thread_id, state):
                    self.redis.json().set(f'thread:{thread_id}', '$', state)
            """,
            line=3,
        ),
        # Plural words count: "sessions:{id}".
        Invalid("""
            import redis
            r = redis.Redis()
            r.sadd(f'sessions:{sid}:tools', name)
            """, line=3),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        self.state_words = {w.lower() for w in self.context.options.get("state-words", DEFAULT_STATE_WORDS)}
        self.frames: list[_Frame] = []

    def visit_Module(self, node: cst.Module) -> None:
        self.frames.append(_Frame())

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, call in self._close(self.frames.pop()):
            self._report(node, call)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.append(_Frame())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._hand_up()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.frames.append(_Frame())

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._hand_up()

    def _hand_up(self) -> None:
        """Writes not expired in this scope may be expired by a sibling: decide at the module."""
        frame = self.frames.pop()
        self.frames[-1].writes += self._close(frame)
        self.frames[-1].expired += frame.expired

    @staticmethod
    def _close(frame: _Frame) -> list[tuple[cst.Call, RedisCall]]:
        return [
            (node, call)
            for node, call in frame.writes
            if not any(call.keys[0].same_as(key) for key in frame.expired)
        ]

    def visit_Call(self, node: cst.Call) -> None:
        found: RedisCall | None = self.get_metadata(RedisCallProvider, node, None)
        if found is None or not found.keys:
            return
        if found.command in _EXPIRES:
            self.frames[-1].expired.append(found.keys[0])
        elif found.command in _WRITES and not self._carries_ttl(node, found) and self._is_state(found.keys[0]):
            self.frames[-1].writes.append((node, found))

    @staticmethod
    def _carries_ttl(node: cst.Call, found: RedisCall) -> bool:
        if found.command != "set" or found.json:
            return False
        if calls.has_star_kwargs(node) or calls.has_star_args(node):
            return True  # may carry one
        nx = calls.keyword(node, "nx")
        if nx is not None and literal_truth(nx.value) is not False:
            return True  # a lock: NA401 judges it
        keepttl = calls.keyword(node, "keepttl")
        if keepttl is not None and literal_truth(keepttl.value) is not False:
            return True
        for position, keyword in zip(_SET_TTL_POSITIONS, TTL_KEYWORDS):
            given = calls.argument(node, (keyword,), position)
            if given is not None and not calls.is_none(given.value):
                return True
        return any(
            (given := calls.keyword(node, keyword)) is not None and not calls.is_none(given.value)
            for keyword in TTL_KEYWORDS[len(_SET_TTL_POSITIONS):]
        )

    def _is_state(self, key: Key) -> bool:
        if key.constant:
            return False  # one key for all runs: a global setting or counter, not a run's state
        found = words(f"{key.text} {key.resolved}")
        return bool((found | {w[:-1] for w in found if w.endswith("s")}) & self.state_words)

    def _report(self, node: cst.Call, call: RedisCall) -> None:
        self.report(
            node,
            f"`{call.receiver}.{call.command}({call.keys[0].text}, ...)` writes run state that never "
            "expires: when the run is abandoned (timeout, crash, restart) nothing deletes it; "
            "pass `ex=` or `expire` the key",
        )
