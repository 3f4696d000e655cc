"""NA102 on whole agent modules: where a key is minted decides whether it is stable."""

from __future__ import annotations

import textwrap


def na102(lint, code: str, **overrides) -> list[tuple[int, str]]:
    findings = lint(textwrap.dedent(code), select=["NA102"], **overrides).findings
    return [(f.line, f.message) for f in findings]


# A travel agent's booking tool: the key helper hashes the whole payload, and the
# payload carries the moment it was built and a fresh request id.
BOOKING_AGENT = '''
    import hashlib
    import json
    import time
    import uuid

    import httpx
    from tenacity import retry, retry_if_exception_type, stop_after_attempt


    def payload_key(**fields):
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


    @retry(stop=stop_after_attempt(3), retry=retry_if_exception_type(httpx.ReadTimeout))
    def book_seat(client: httpx.Client, passenger_id: str, flight: str):
        payload = {
            "passenger": passenger_id,
            "flight": flight,
            "requested_at": time.time(),
            "request_id": str(uuid.uuid4()),
        }
        headers = {"Idempotency-Key": payload_key(**payload)}
        return client.post("https://gds.example.com/bookings", json=payload, headers=headers)
'''


def test_hashing_a_payload_with_a_timestamp_is_flagged_at_the_key(lint):
    found = na102(lint, BOOKING_AGENT)
    assert [line for line, _ in found] == [23]
    assert "time.time()" in found[0][1] or "uuid.uuid4()" in found[0][1]
    assert "tenacity `@retry`" in found[0][1]


def test_hashing_only_the_business_fields_is_clean(lint):
    stable = BOOKING_AGENT.replace(
        "payload_key(**payload)", "payload_key(passenger=passenger_id, flight=flight)"
    )
    assert na102(lint, stable) == []


def test_a_key_minted_by_the_caller_before_the_retry_is_clean(lint):
    code = '''
        import uuid
        from tenacity import retry, stop_after_attempt

        @retry(stop=stop_after_attempt(3))
        def _refund(payments, charge_id, key):
            return payments.refunds.create(charge=charge_id, idempotency_key=key)

        def refund_order(payments, order):
            key = str(uuid.uuid4())  # once per business operation
            return _refund(payments, order.charge_id, key)
    '''
    assert na102(lint, code) == []


def test_a_key_minted_inside_a_tool_that_is_retried_is_flagged_in_the_tool(lint):
    code = '''
        import uuid
        from tenacity import retry, stop_after_attempt

        def create_ticket(crm, body):
            return crm.tickets.create(body, idempotency_key=uuid.uuid4().hex)

        @retry(stop=stop_after_attempt(3))
        def escalate(crm, body):
            return create_ticket(crm, body)
    '''
    found = na102(lint, code)
    assert [line for line, _ in found] == [6]
    assert "`create_ticket` is retried" in found[0][1]


def test_a_clock_reading_key_helper_is_flagged(lint):
    code = '''
        import time

        def ticket_key(user_id):
            return f"{user_id}:{int(time.time() // 60)}"

        def open_ticket(crm, user_id, body):
            for attempt in range(3):
                try:
                    return crm.create_ticket(body, dedupe_key=ticket_key(user_id))
                except TimeoutError:
                    time.sleep(1)
    '''
    found = na102(lint, code)
    assert [line for line, _ in found] == [10]
    assert "`ticket_key()` (it calls `time.time()`)" in found[0][1]


def test_a_fresh_request_id_counts_once_the_registry_calls_it_a_key(lint):
    code = '''
        import uuid
        from tenacity import retry

        @retry
        def submit(api, order):
            return api.submit_order(order, request_id=str(uuid.uuid4()))
    '''
    assert na102(lint, code) == []
    found = na102(lint, code, tools={"idempotency_keys": ["request_id"]})
    assert [line for line, _ in found] == [7]
