"""NA104 on whole agent modules: which waits between attempts are flagged, and which are not."""

from __future__ import annotations

import textwrap


def findings(lint, code: str, select: str = "NA104") -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in lint(code, select=[select]).findings]


def line_of(code: str, marker: str) -> int:
    """The 1-based line holding `marker` (a comment naming the case)."""
    return next(i for i, text in enumerate(code.splitlines(), 1) if marker in text)


# A tool gateway as teams write it: some retries paced well, some not, and
# loops that look like retries but are not.
GATEWAY = textwrap.dedent('''
    """Tool gateway of the support agent: tickets, refunds, webhooks."""
    import asyncio
    import json
    import random
    import time

    import requests
    from langgraph.graph import StateGraph
    from langgraph.types import RetryPolicy
    from tenacity import retry, stop_after_attempt, wait_exponential_jitter, wait_fixed

    HOOK_URL = "https://hooks.example.com/agent-events"
    RETRY_DELAY = 2


    def post_webhook(event):
        for attempt in range(4):
            try:
                return requests.post(HOOK_URL, json=event, timeout=5)
            except requests.ConnectionError:
                time.sleep(RETRY_DELAY)  # case: fixed-constant


    @retry(stop=stop_after_attempt(3), wait=wait_fixed(1))  # case: tenacity-fixed
    def refund(payments, order):
        return payments.refunds.create(order_id=order.id, idempotency_key=order.key)


    @retry(stop=stop_after_attempt(3), wait=wait_exponential_jitter(initial=1, max=20))
    def open_ticket(crm, payload):
        return crm.tickets.create(payload, idempotency_key=payload["key"])


    async def sync_contact(crm, contact):
        delay = 1.0
        for attempt in range(5):
            try:
                return await crm.contacts.update(contact.id, fields=contact.fields)
            except TimeoutError:
                await asyncio.sleep(delay + random.random())
                delay *= 2


    def wait_for_refund(payments, refund_id):
        for _ in range(120):
            refund = payments.get_refund(refund_id)
            if refund.status in ("succeeded", "failed"):
                return refund
            time.sleep(5)


    def extract_fields(llm_client, prompt):
        for _ in range(3):
            try:
                return json.loads(llm_client.complete(prompt))
            except json.JSONDecodeError:
                continue


    def escalate(state):
        HELPDESK_API.escalate_ticket(state["ticket"])
        return state


    builder = StateGraph(dict)
    builder.add_node(
        "escalate",
        escalate,
        retry_policy=RetryPolicy(max_attempts=4, jitter=False, backoff_factor=1),  # case: policy-fixed
    )
    builder.add_node("triage", escalate, retry_policy=RetryPolicy(max_attempts=4))
''')


def test_fixed_and_missing_waits_are_flagged_and_paced_ones_are_not(lint):
    found = findings(lint, GATEWAY)
    assert [line for line, _ in found] == [
        line_of(GATEWAY, "case: fixed-constant"),
        line_of(GATEWAY, "case: tenacity-fixed"),
        line_of(GATEWAY, "case: policy-fixed"),
    ]
    assert all("no jitter" in message for _, message in found)
    assert found[0][1].startswith("`for attempt in ...` retry loop")


def test_a_read_polled_at_a_fixed_interval_becomes_a_retry_once_it_writes(lint):
    polled_write = GATEWAY.replace(
        "refund = payments.get_refund(refund_id)", "refund = payments.create_refund(refund_id)"
    )
    lines = [line for line, _ in findings(lint, polled_write)]
    assert line_of(polled_write, "time.sleep(5)") in lines


def test_a_retry_that_starts_at_once_is_flagged_at_its_header(lint):
    code = textwrap.dedent('''
        import requests

        def fetch_rates(base):
            for attempt in range(5):
                try:
                    return requests.get("https://fx.example.com/rates", params={"base": base}, timeout=5)
                except requests.RequestException:
                    continue
    ''')
    [(line, message)] = findings(lint, code)
    assert line == line_of(code, "for attempt in range(5)")
    assert "starts the next attempt at once" in message


def test_an_adaptive_loop_is_not_a_retry(lint):
    # Each failure shrinks the batch: the next attempt is a different request.
    code = textwrap.dedent('''
        def embed_all(api, texts):
            batch = texts
            while True:
                try:
                    return api.embed(batch)
                except ValueError:
                    batch = batch[: len(batch) // 2]
    ''')
    assert findings(lint, code) == []


def test_backoff_and_stamina_have_jitter_by_default(lint):
    code = textwrap.dedent('''
        import backoff
        import httpx
        import stamina

        @backoff.on_exception(backoff.constant, httpx.HTTPError, interval=3, max_tries=5)
        def push(client, body):
            return client.post("/events", json=body)

        @stamina.retry(on=httpx.HTTPError, wait_initial=1.0)
        def pull(client):
            return client.get("/events")
    ''')
    assert findings(lint, code) == []
    no_jitter = code.replace("max_tries=5)", "max_tries=5, jitter=None)")
    assert [line for line, _ in findings(lint, no_jitter)] == [line_of(no_jitter, "backoff.constant")]


def test_an_attempts_loop_is_named_as_the_code_spells_it(lint):
    # The message names the construct the loop iterates (`AsyncRetrying`), not the first
    # name the retry pack lists for it.
    code = textwrap.dedent('''
        from tenacity import AsyncRetrying, stop_after_attempt, wait_fixed

        async def post_event(client, body):
            async for attempt in AsyncRetrying(stop=stop_after_attempt(3), wait=wait_fixed(1)):
                with attempt:
                    return await client.post("https://hooks.example.com/events", json=body)
    ''')
    [(_, message)] = findings(lint, code)
    assert message.startswith("tenacity `AsyncRetrying` loop")
