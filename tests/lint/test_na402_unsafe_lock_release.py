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
