"""NA107 on whole modules: an idempotency cache that stores the timeout it saw."""

from __future__ import annotations

import textwrap


def na107(lint, code: str) -> list[tuple[int, str]]:
    findings = lint(textwrap.dedent(code), select=["NA107"]).findings
    return [(f.line, f.message) for f in findings]


# A tool gateway that answers a repeated idempotency key from Redis.
GATEWAY = '''
    import json

    import redis


    class ToolGateway:
        def __init__(self, client: redis.Redis, tools):
            self.redis = client
            self.tools = tools
            self.failures = {}

        def call(self, name: str, args: dict, idem_key: str):
            cached = self.redis.get(f"idem:{idem_key}")
            if cached is not None:
                return json.loads(cached)
            try:
                outcome = self.tools[name](**args)
            except TimeoutError as exc:
                outcome = {"status": "timeout", "error": str(exc)}
                self.failures[idem_key] = exc
            self.redis.set(f"idem:{idem_key}", json.dumps(outcome), ex=86400)
            return outcome
'''


def test_a_timeout_stored_after_the_try_is_flagged(lint):
    found = na107(lint, GATEWAY)
    assert [line for line, _ in found] == [22]
    assert "idem:" in found[0][1]


def test_caching_in_else_and_dropping_on_failure_is_clean(lint):
    fixed = GATEWAY.replace(
        '''                outcome = {"status": "timeout", "error": str(exc)}
                self.failures[idem_key] = exc
            self.redis.set(f"idem:{idem_key}", json.dumps(outcome), ex=86400)
''',
        '''                self.failures[idem_key] = exc
                self.redis.delete(f"idem:{idem_key}")
                raise
            else:
                self.redis.set(f"idem:{idem_key}", json.dumps(outcome), ex=86400)
''',
    )
    assert fixed != GATEWAY
    assert na107(lint, fixed) == []


def test_a_response_cache_holding_the_exception_is_flagged(lint):
    code = '''
        _response_cache = {}

        async def send_message(client, message_id, text):
            try:
                reply = await client.post_message(text)
            except Exception as err:
                _response_cache[message_id] = err
                raise
            _response_cache[message_id] = reply
            return reply
    '''
    assert [line for line, _ in na107(lint, code)] == [8]


def test_a_metrics_counter_in_the_handler_is_clean(lint):
    code = '''
        from collections import Counter

        ERRORS = Counter()

        def run(tool, args, stats):
            try:
                return tool.invoke(args)
            except Exception as exc:
                ERRORS[type(exc).__name__] += 1
                stats.set("last_error", repr(exc))
                raise
    '''
    assert na107(lint, code) == []
