"""NA101 on whole agent modules (the shapes real support and orchestration code takes) and with the tool
registry that says what a write is."""

from __future__ import annotations

import textwrap


def na101(lint, code: str, **overrides) -> list[tuple[int, str]]:
    findings = lint(textwrap.dedent(code), select=["NA101"], **overrides).findings
    return [(f.line, f.message) for f in findings]


SUPPORT_AGENT = '''
    """Customer-support agent: looks orders up and refunds them."""
    import stripe
    from langchain_core.tools import tool
    from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

    TRANSIENT = (stripe.error.APIConnectionError, stripe.error.RateLimitError)


    @retry(stop=stop_after_attempt(3), wait=wait_exponential(multiplier=1, max=10),
           retry=retry_if_exception_type(TRANSIENT))
    def _issue_refund(payment_intent: str, amount: int):
        return stripe.Refund.create(payment_intent=payment_intent, amount=amount)


    @retry(stop=stop_after_attempt(5))
    def _lookup_order(order_id: str):
        return stripe.PaymentIntent.retrieve(order_id)


    @tool
    def refund_order(order_id: str, amount: int) -> str:
        """Refund part or all of an order."""
        intent = _lookup_order(order_id)
        refund = _issue_refund(intent.id, amount)
        return f"refund {refund.id} created"


    @tool
    def order_status(order_id: str) -> str:
        """Tell the customer where their order is."""
        return _lookup_order(order_id).status
'''


def test_support_agent_flags_the_retried_refund_only(lint):
    found = na101(lint, SUPPORT_AGENT)
    assert [line for line, _ in found] == [13]
    message = found[0][1]
    assert "stripe.Refund.create" in message and "tenacity `@retry`" in message


def test_support_agent_with_a_stable_key_is_clean(lint):
    keyed = SUPPORT_AGENT.replace(
        "stripe.Refund.create(payment_intent=payment_intent, amount=amount)",
        "stripe.Refund.create(payment_intent=payment_intent, amount=amount,\n"
        "                                idempotency_key=f'refund-{payment_intent}-{amount}')",
    )
    assert na101(lint, keyed) == []


ORCHESTRATOR = '''
    import logging
    import random
    import time

    import requests

    log = logging.getLogger(__name__)
    CRM = "https://crm.example.com/api"


    def create_ticket(payload: dict) -> dict:
        resp = requests.post(f"{CRM}/tickets", json=payload, timeout=10)
        resp.raise_for_status()
        return resp.json()


    def fetch_customer(customer_id: str) -> dict:
        return requests.get(f"{CRM}/customers/{customer_id}", timeout=10).json()


    def run_step(task: dict) -> dict:
        customer = fetch_customer(task["customer_id"])
        attempt = 0
        while True:
            attempt += 1
            try:
                return create_ticket({"customer": customer["id"], "body": task["text"]})
            except requests.Timeout:
                if attempt >= 3:
                    raise
                log.warning("create_ticket timed out (attempt %d)", attempt)
                time.sleep(2 ** attempt + random.random())


    def broadcast(users: list, text: str) -> None:
        for user in users:
            try:
                create_ticket({"customer": user, "body": text})
            except requests.RequestException:
                log.exception("skipping %s", user)
                continue
'''


def test_orchestration_loop_flags_the_hand_written_retry_not_the_fan_out(lint):
    found = na101(lint, ORCHESTRATOR)
    assert [line for line, _ in found] == [28]
    assert "`create_ticket(...)` is a write (it calls `requests.post`)" in found[0][1]
    assert "`while True` retry loop" in found[0][1]


def test_orchestration_key_passed_inside_the_payload(lint):
    keyed = ORCHESTRATOR.replace(
        'create_ticket({"customer": customer["id"], "body": task["text"]})',
        'create_ticket({"customer": customer["id"], "body": task["text"], "dedupe_key": task["id"]})',
    )
    assert na101(lint, keyed) == []


STATUS_HELPER = '''
    import random
    from time import sleep

    RETRYABLE = {429, 500, 502, 503, 504}


    def call_with_retry(fn, task_id, step_no, max_attempts=3, base=0.5):
        for attempt in range(1, max_attempts + 1):
            resp = fn()
            if resp.code in RETRYABLE and attempt < max_attempts:
                sleep(base * (2 ** (attempt - 1)) + random.random())
                continue
            return resp
        return resp


    def book(crm, payload, task_id):
        return call_with_retry(lambda: crm.book_meeting_room(payload), task_id, 2)


    def lookup(crm, room, task_id):
        return call_with_retry(lambda: crm.get_room(room), task_id, 1)


    def book_keyed(crm, payload, task_id):
        return call_with_retry(lambda: crm.book_meeting_room(payload, idempotency_key=f"{task_id}:2"), task_id, 2)
'''


def test_status_code_retry_helper_retries_its_lambda(lint):
    found = na101(lint, STATUS_HELPER)
    assert [line for line, _ in found] == [19]
    assert "retry helper `call_with_retry`" in found[0][1]


def test_helper_called_with_a_function_reference(lint):
    code = STATUS_HELPER + textwrap.indent(
        textwrap.dedent('''
        from functools import partial

        def send_invoice(mailer, invoice):
            return mailer.send_email(invoice.to, invoice.pdf)

        def bill(mailer, invoice, task_id):
            return call_with_retry(partial(send_invoice, mailer, invoice), task_id, 3)
        '''),
        "    ",
    )
    found = na101(lint, code)
    assert [line for line, _ in found] == [19, 35]
    assert "`send_invoice`" in found[1][1]


HOMEMADE_DECORATOR = '''
    import functools
    import time


    def retry_on_failure(times=3, delay=1.0):
        def decorate(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                for attempt in range(times):
                    try:
                        return fn(*args, **kwargs)
                    except Exception:
                        if attempt == times - 1:
                            raise
                        time.sleep(delay * 2 ** attempt)
            return wrapper
        return decorate


    @retry_on_failure(times=5)
    def notify_customer(sms, phone, text):
        sms.send_sms(phone, text)


    @retry_on_failure()
    def customer_phone(db, customer_id):
        return db.get_customer(customer_id).phone
'''


def test_homemade_retry_decorator_factory(lint):
    found = na101(lint, HOMEMADE_DECORATOR)
    assert [line for line, _ in found] == [23]
    assert "retry decorator `@retry_on_failure`" in found[0][1]


LANGCHAIN_WITH_RETRY = '''
    from langchain_core.tools import tool


    @tool
    def create_refund(order_id: str, amount: float) -> str:
        """Create a refund for an order."""
        return BILLING.refunds.create(order=order_id, amount=amount)


    @tool
    def search_orders(query: str) -> list:
        """Search the customer's orders."""
        return BILLING.orders.search(query)


    def tools_for(agent_llm):
        return [
            create_refund.with_retry(stop_after_attempt=3),
            search_orders.with_retry(stop_after_attempt=3),
        ]


    def chain(prompt, llm, parser):
        return (prompt | llm | parser).with_retry(stop_after_attempt=2)
'''


def test_langchain_with_retry_on_a_write_tool(lint):
    found = na101(lint, LANGCHAIN_WITH_RETRY)
    assert [line for line, _ in found] == [19]
    assert "`create_refund`" in found[0][1] and "LangChain `.with_retry()`" in found[0][1]


def test_langchain_tool_taking_an_idempotency_key_is_clean(lint):
    keyed = LANGCHAIN_WITH_RETRY.replace(
        "def create_refund(order_id: str, amount: float) -> str:",
        "def create_refund(order_id: str, amount: float, idempotency_key: str) -> str:",
    )
    assert na101(lint, keyed) == []


LANGGRAPH_POLICY = '''
    from langgraph.graph import END, START, StateGraph
    from langgraph.prebuilt import ToolNode
    from langgraph.types import RetryPolicy

    from .tools import cancel_subscription, lookup_plan


    def charge_node(state):
        PAYMENTS_API.charge(state["customer"], state["amount"])
        return {"charged": True}


    def plan_node(state):
        return {"plan": lookup_plan(state["customer"])}


    builder = StateGraph(dict)
    builder.add_node("charge", charge_node, retry_policy=RetryPolicy(max_attempts=3))
    builder.add_node("plan", plan_node, retry_policy=RetryPolicy(max_attempts=5))
    builder.add_node("tools", ToolNode([cancel_subscription, lookup_plan]), retry=RetryPolicy())
    builder.add_edge(START, "plan")
    builder.add_edge("plan", END)
'''


def test_langgraph_retry_policy_on_nodes_and_tool_nodes(lint):
    found = na101(lint, LANGGRAPH_POLICY)
    assert [line for line, _ in found] == [10, 21]
    assert "LangGraph `RetryPolicy` on node `charge_node`" in found[0][1]
    assert "`cancel_subscription`" in found[1][1]


def test_langgraph_functional_task_with_retry_policy(lint):
    code = '''
        from langgraph.func import task
        from langgraph.types import RetryPolicy

        @task(retry_policy=RetryPolicy(max_attempts=4))
        def publish_post(client, draft):
            return client.posts.publish(draft)

        @task()
        def publish_once(client, draft):
            return client.posts.publish(draft)
    '''
    assert [line for line, _ in na101(lint, code)] == [7]


# -- the tool registry: what is a write ------------------------------------------------------

def test_user_registry_makes_and_unmakes_writes(lint):
    code = textwrap.dedent('''
        from tenacity import retry

        @retry
        def checkout(gateway, card, draft):
            gateway.capture_funds(card)
            gateway.create_preview(draft)
            gateway.disburse_funds(card)
    ''')
    default = [f.line for f in lint(code, select=["NA101"]).findings]
    assert default == [7]  # `capture` and `disburse` are no write verbs of the pack; `create` is
    tools = {"write": ["capture_funds", "disburse"], "read": ["create_preview"]}
    custom = [f.line for f in lint(code, select=["NA101"], tools=tools).findings]
    assert custom == [6, 8]


def test_user_idempotency_key_spelling(lint):
    code = textwrap.dedent('''
        import backoff

        @backoff.on_exception(backoff.expo, TimeoutError, max_tries=3)
        def pay(psp, invoice):
            return psp.create_payment(invoice.total, txn_ref=invoice.id)
    ''')
    assert len(lint(code, select=["NA101"]).findings) == 1
    assert lint(code, select=["NA101"], tools={"idempotency_keys": ["txn_ref"]}).findings == []


def test_look_alikes_inside_a_retry_are_not_writes(lint):
    code = textwrap.dedent('''
        import asyncio
        import os
        from tenacity import retry

        @retry
        async def step(self, state, lock, graph, results, logger, f, sock, pool):
            state.update(done=True)
            os.environ.update({"A": "1"})
            self.update_state(state="PROGRESS")
            results.add(1)
            lock.release()
            graph.add_node("x", lambda s: s)
            task = asyncio.create_task(self.work())
            logger.info("posted")
            f.write("x")
            sock.send(b"ping")
            pool.submit(print)
            task.cancel()
            self.cache.set("k", 1)
            return WorkspaceArchiveWriteError("not a write")
    ''')
    assert lint(code, select=["NA101"]).findings == []


def test_http_writes_are_writes_on_any_client_shape(lint):
    code = textwrap.dedent('''
        import time
        import httpx
        import requests

        def sync(http: httpx.Client, body):
            session = requests.Session()
            client = httpx.Client()
            for attempt in range(3):
                try:
                    session.put("https://api.example.com/a", json=body, timeout=5)
                    client.delete("https://api.example.com/b")
                    http.patch("https://api.example.com/c", json=body)
                    requests.request("POST", "https://api.example.com/d", timeout=5)
                    requests.request("GET", "https://api.example.com/e", timeout=5)
                    requests.post("http://127.0.0.1:9000/metrics", timeout=1)
                    return
                except requests.RequestException:
                    time.sleep(attempt)
    ''')
    assert [f.line for f in lint(code, select=["NA101"]).findings] == [11, 12, 13, 14]


def test_sdk_clients_followed_through_their_constructors(lint):
    code = textwrap.dedent('''
        import boto3
        import stripe
        from slack_sdk import WebClient
        from tenacity import retry

        sqs = boto3.client("sqs")
        slack = WebClient(token=TOKEN)

        @retry
        def fan_out(order, key):
            s3 = boto3.Session().client("s3")
            s3.get_object(Bucket="b", Key="k")
            s3.put_object(Bucket="b", Key="k", Body=b"")
            sqs.send_message(QueueUrl=Q, MessageBody="m", MessageDeduplicationId=key)
            slack.chat_postMessage(channel="#ops", text="refunded")
            stripe.StripeClient(API_KEY).refunds.create(params={"payment_intent": order.pi})
    ''')
    assert [f.line for f in lint(code, select=["NA101"]).findings] == [14, 16, 17]


def test_model_calls_are_not_writes_but_an_sms_is(lint):
    code = (
        "import anthropic\n"
        "import openai\n"
        "from tenacity import retry\n"
        "from twilio.rest import Client\n\n"
        "@retry\n"
        "def ask(client: openai.OpenAI, prompt):\n"
        "    return client.chat.completions.create(model='gpt-4o', messages=[prompt])\n\n"
        "@retry\n"
        "def ask_claude(claude: anthropic.Anthropic, prompt):\n"
        "    return claude.messages.create(model='claude', max_tokens=100, messages=[prompt])\n\n"
        "@retry\n"
        "def embed(client: openai.OpenAI, text):\n"
        "    return client.embeddings.create(model='e', input=text)\n\n"
        "@retry\n"
        "def text_customer(twilio: Client, phone, body):\n"
        "    return twilio.messages.create(to=phone, from_='+100', body=body)\n"
    )
    assert [f.line for f in lint(code, select=["NA101"]).findings] == [20]


def test_a_client_is_known_by_its_constructor_never_by_its_name(lint):
    code = textwrap.dedent('''
        from acme import Crm
        from tenacity import retry, stop_after_attempt

        @retry(stop=stop_after_attempt(3))
        def open_ticket(body):
            crm = Crm(token=TOKEN)
            return crm.tickets.create(body)

        @retry(stop=stop_after_attempt(3))
        def open_ticket_again(crm_client, body):
            return crm_client.tickets.create(body)
    ''')
    # Neither client is known to the shipped packs: an overloaded `create` is no write.
    assert lint(code, select=["NA101"]).findings == []
    # Declared in the user's table, the constructed one is; the one only named like a client is not.
    found = lint(code, select=["NA101"], tools={"types": {"acme.Crm": ["acme.Crm"]}}).findings
    assert [(f.line, f.severity) for f in found] == [(8, "error")]


def test_a_batch_built_in_memory_is_not_the_write_the_send_is(lint):
    # Event Hubs: `create_batch()` makes the batch in memory, `send_batch(batch)` sends it.
    found = na101(lint, '''
        import json

        from azure.eventhub import EventData, EventHubProducerClient

        def send_chunk(connection: str, events: list[dict], retries: int = 3) -> None:
            client = EventHubProducerClient.from_connection_string(connection)
            for attempt in range(retries + 1):
                try:
                    batch = client.create_batch()
                    for event in events:
                        batch.add(EventData(json.dumps(event)))
                    client.send_batch(batch)
                    return
                except Exception:
                    if attempt == retries:
                        raise
        ''')
    assert [line for line, _ in found] == [13]
    assert "send_batch" in found[0][1]
