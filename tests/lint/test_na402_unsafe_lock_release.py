"""NA402 and the noqa that keeps a deliberate force-unlock."""

from __future__ import annotations

import textwrap


def test_noqa_silences_a_deliberate_force_unlock(lint):
    code = textwrap.dedent(
        '''
        import redis
        r = redis.Redis()

        def take_over(key, token):
            r.set(key, token, nx=True, ex=10)
            r.delete(key)  # noqa: NA402 - operator tool, clears a stuck lock on purpose
        '''
    )
    assert lint(code, select=["NA402"]).findings == []


def test_a_release_cites_the_nearest_acquisition_above_it(lint):
    """A class with a blocking acquire and a non-blocking claim of the same key: `unlock`
    releases the claim written just above it, not the acquire further up."""
    code = textwrap.dedent(
        '''
        import uuid
        import redis.asyncio as aioredis

        class Bus:
            def __init__(self):
                self._client = aioredis.Redis()

            async def acquire_lock(self, key):
                token = uuid.uuid4().hex
                while not await self._client.set(key, token, nx=True, ex=600):
                    pass
                return token

            async def try_lock(self, key):
                return bool(await self._client.set(key, "1", nx=True, ex=600))

            async def unlock(self, key):
                await self._client.delete(key)
        '''
    )
    [finding] = lint(code, select=["NA402"]).findings
    assert finding.line == 19
    assert "the lock taken on line 16" in finding.message
