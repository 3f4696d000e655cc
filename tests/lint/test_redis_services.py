"""The Redis rules (NA401, NA402, NA403) together on whole modules shaped like real agent services."""

from __future__ import annotations

import textwrap

SESSION_SERVICE = textwrap.dedent(
    '''
    import json
    import uuid

    import redis.asyncio as aioredis
    from fastapi import FastAPI, HTTPException

    app = FastAPI()
    r = aioredis.from_url("redis://cache:6379/0")


    class SessionLock:
        """One agent run per chat session at a time."""

        def __init__(self, client, session_id):
            self.client = client
            self.key = f"agent:lock:{session_id}"
            self.token = uuid.uuid4().hex

        async def __aenter__(self):
            if not await self.client.set(self.key, self.token, nx=True):
                raise HTTPException(409, "session busy")
            return self

        async def __aexit__(self, *exc):
            await self.client.delete(self.key)


    @app.post("/sessions/{session_id}/turns")
    async def turn(session_id: str, body: dict):
        async with SessionLock(r, session_id):
            state = await graph.ainvoke(body)
            await r.set(f"session:{session_id}:state", json.dumps(state))
            await r.rpush(f"session:{session_id}:messages", body["text"])
            await r.expire(f"session:{session_id}:messages", 86400)
            return state


    async def mark_step(task_id, step):
        token = uuid.uuid4().hex
        key = f"lock:task:{task_id}:step:{step}"
        if not await r.set(key, token, nx=True, ex=30):
            return False
        try:
            await run_step(task_id, step)
        finally:
            await r.delete(key)
        return True
    '''
)


def codes_and_lines(findings):
    return sorted((f.code, f.line) for f in findings)


def test_session_service_lock_without_ttl_and_unsafe_releases(lint):
    findings = lint(SESSION_SERVICE, select=["NA401", "NA402"]).findings
    assert codes_and_lines(findings) == [
        ("NA401", 21),  # self.client.set(..., nx=True): no TTL
        ("NA402", 26),  # __aexit__ deletes whatever holds the key now
        ("NA402", 47),  # finally: r.delete(key) after set(..., nx=True, ex=30)
    ]


def test_state_without_ttl_is_off_by_default_and_finds_only_the_unexpired_key(lint):
    assert [f for f in lint(SESSION_SERVICE).findings if f.code == "NA403"] == []
    findings = lint(SESSION_SERVICE, select=["NA403"]).findings
    # The messages list is expired; the state blob is not.
    assert codes_and_lines(findings) == [("NA403", 33)]
    assert "session:{session_id}:state" in findings[0].message


def test_lock_fix_adds_the_configured_ttl_and_leaves_the_rest(lint):
    result = lint(SESSION_SERVICE, select=["NA401"], fix=True, rule_options={"NA401": {"fix-ttl-ms": 15000}})
    fixed = result.fixed.decode()
    assert "await self.client.set(self.key, self.token, nx=True, px=15000)" in fixed
    assert "await r.set(key, token, nx=True, ex=30)" in fixed
    assert lint(fixed, select=["NA401"]).findings == []


def test_safe_lock_module_is_clean(lint):
    code = textwrap.dedent(
        '''
        import uuid
        import redis

        RELEASE = """
        if redis.call("get", KEYS[1]) == ARGV[1] then
            return redis.call("del", KEYS[1])
        end
        return 0
        """

        class Locks:
            def __init__(self, url):
                self.redis = redis.Redis.from_url(url)
                self._release = self.redis.register_script(RELEASE)

            def acquire(self, name, ttl_ms=30_000):
                token = uuid.uuid4().hex
                if self.redis.set(f"lock:{name}", token, nx=True, px=ttl_ms):
                    return token
                return None

            def release(self, name, token):
                return self._release(keys=[f"lock:{name}"], args=[token])

            def report(self):
                with self.redis.lock("lock:nightly-report", timeout=600, blocking_timeout=1):
                    build_report()

            def forget(self, session_id):
                # Deleting state (not a lock) is not a release.
                self.redis.delete(f"session:{session_id}:state")
        '''
    )
    assert lint(code, select=["NA401", "NA402", "NA403"]).findings == []


def test_look_alike_caches_are_not_redis(lint):
    code = textwrap.dedent(
        '''
        import redis
        from django.core.cache import cache
        from cachetools import TTLCache

        local = TTLCache(maxsize=100, ttl=60)
        r = redis.Redis()

        def remember(session_id, state):
            cache.set(f"session:{session_id}", state, nx=True, timeout=None)
            cache.add(f"lock:{session_id}", 1)
            cache.delete(f"lock:{session_id}")
            local.setdefault(f"task:{session_id}", {})
            defaults = {}
            defaults.setdefault("run", [])
        '''
    )
    assert lint(code, select=["NA401", "NA402", "NA403"]).findings == []
