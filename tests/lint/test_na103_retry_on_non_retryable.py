"""NA103 on whole modules: catch-alls and status sets around writes, not around reads."""

from __future__ import annotations

import textwrap


def na103(lint, code: str) -> list[tuple[int, str]]:
    findings = lint(textwrap.dedent(code), select=["NA103"]).findings
    return [(f.line, f.message) for f in findings]


# A CRM client with a hand-written retry loop deciding by status, as integrations are written.
CRM_CLIENT = '''
    import time
    from http import HTTPStatus

    import requests

    RETRY_STATUSES = {HTTPStatus.BAD_REQUEST, HTTPStatus.TOO_MANY_REQUESTS, 502, 503}


    class Crm:
        def __init__(self, session: requests.Session, base: str):
            self.session = session
            self.base = base

        def create_ticket(self, body: dict, key: str):
            for attempt in range(4):
                resp = self.session.post(f"{self.base}/tickets", json=body,
                                         headers={"Idempotency-Key": key}, timeout=10)
                if resp.status_code in RETRY_STATUSES:
                    time.sleep(2 ** attempt)
                    continue
                resp.raise_for_status()
                return resp.json()

        def get_ticket(self, ticket_id: str):
            for attempt in range(4):
                try:
                    return self.session.get(f"{self.base}/tickets/{ticket_id}", timeout=10).json()
                except Exception:
                    time.sleep(1)
'''


def test_a_status_set_with_400_retrying_a_write_is_flagged_at_the_test(lint):
    found = na103(lint, CRM_CLIENT)
    assert [line for line, _ in found] == [19]
    assert "400" in found[0][1] and "429" not in found[0][1].split(":")[0]


def test_transient_statuses_only_are_clean(lint):
    assert na103(lint, CRM_CLIENT.replace("HTTPStatus.BAD_REQUEST, ", "")) == []


def test_a_threshold_that_keeps_client_errors_out_is_clean(lint):
    code = '''
        import time

        import httpx

        def post_event(http: httpx.Client, body, key):
            while True:
                resp = http.post("https://events.example.com/v1", json=body, headers={"Idempotency-Key": key})
                if resp.status_code < 300:
                    return resp
                if 400 <= resp.status_code < 500 and resp.status_code != 429:
                    raise RuntimeError(resp.text)
                time.sleep(1)
    '''
    assert na103(lint, code) == []


def test_ok_or_go_round_retries_every_client_error(lint):
    code = '''
        import time

        import httpx

        def post_event(http: httpx.Client, body, key):
            while True:
                resp = http.post("https://events.example.com/v1", json=body, headers={"Idempotency-Key": key})
                if resp.status_code < 300:
                    return resp
                time.sleep(1)
    '''
    assert [line for line, _ in na103(lint, code)] == [9]


def test_a_predicate_function_naming_404_is_flagged(lint):
    code = '''
        from tenacity import retry, retry_if_exception, stop_after_attempt

        def _retryable(exc):
            return getattr(exc, "status_code", None) in (404, 429, 503)

        @retry(stop=stop_after_attempt(5), retry=retry_if_exception(_retryable))
        def cancel_order(api, order_id):
            return api.cancel_order(order_id)
    '''
    found = na103(lint, code)
    assert [line for line, _ in found] == [5]
    assert "404" in found[0][1]


def test_backoff_on_exception_with_a_tuple_including_exception_is_flagged(lint):
    code = '''
        import backoff
        import requests

        @backoff.on_exception(backoff.expo, (requests.ConnectionError, Exception), max_tries=3)
        def publish(api, post):
            return api.publish_post(post)
    '''
    found = na103(lint, code)
    assert [line for line, _ in found] == [5]
    assert "`Exception`" in found[0][1]


def test_stamina_on_transient_errors_is_clean(lint):
    code = '''
        import httpx
        import stamina

        @stamina.retry(on=(httpx.ConnectError, httpx.ReadTimeout), attempts=3)
        def send(client, body, key):
            return client.post("/messages", json=body, headers={"Idempotency-Key": key})
    '''
    assert na103(lint, code) == []
