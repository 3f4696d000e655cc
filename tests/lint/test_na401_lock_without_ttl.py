"""NA401 on a lock taken with setnx and given its TTL too late."""

from __future__ import annotations

import textwrap


def test_setnx_then_expire_is_still_a_lock_without_ttl(lint):
    code = textwrap.dedent(
        '''
        import redis

        def claim(r: redis.Redis, job_id):
            if r.setnx(f"lock:job:{job_id}", 1):
                r.expire(f"lock:job:{job_id}", 60)
                return True
            return False
        '''
    )
    findings = lint(code, select=["NA401"]).findings
    assert [(f.code, f.line) for f in findings] == [("NA401", 5)]
    assert "expire" in findings[0].message
