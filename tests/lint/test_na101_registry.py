"""The tool registry and the retry semantics NA101 stands on (and NA102-NA107 will)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from nonatomic.config import ConfigError
from nonatomic.lint.config import load_settings
from nonatomic.rules.lint.semantics.names import named_like_retry
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.tool_config import validate_tools_table
from nonatomic.rules.lint.semantics.tools import ToolRegistry


def model_of(code: str):
    wrapper = MetadataWrapper(cst.parse_module(textwrap.dedent(code)))
    return wrapper.module, wrapper.resolve(RetryProvider)[wrapper.module]


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
            return psp.payments.create(invoice.total, txn_ref=invoice.id)
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

        def sync(http, body):
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


def test_validate_tools_table():
    assert validate_tools_table({"write": ["charge_card"], "read": [], "idempotency_keys": ["txn"]}) == []
    assert validate_tools_table({"levels": {"refund": "irreversible"}, "types": {"x.Client": ["x.Client"]}}) == []
    errors = validate_tools_table({"write": "charge_card", "levels": {"refund": "huge"}, "writes": []})
    assert len(errors) == 3
    assert any("`write` must be a list" in e for e in errors)
    assert any("level must be one of" in e for e in errors)
    assert any("unknown key `writes`" in e for e in errors)


def test_bad_tools_table_is_a_configuration_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.nonatomic.tools]\nwrite = "refund"\n')
    with pytest.raises(ConfigError, match="`write` must be a list"):
        load_settings(start=tmp_path)


def test_name_levels():
    registry = ToolRegistry()
    assert registry.name_level("refund_payment") == ("irreversible", False)
    assert registry.name_level("createTicket") == ("high", False)
    assert registry.name_level("get_or_create_user") == ("high", False)
    assert registry.name_level("get_refund_status")[0] is None
    assert registry.name_level("create_task")[0] is None  # a factory, not a tool
    assert registry.name_level("gather_with_cancel")[0] is None
    assert registry.name_level("update")[0] == "low"
    assert ToolRegistry({"levels": {"create_ticket": "low"}}).name_level("create_ticket")[0] == "low"


def test_retry_like_names():
    assert named_like_retry("retry_with_backoff")
    assert named_like_retry("utils.call_with_retry")
    assert named_like_retry("retry_on_failure")
    for name in ("should_retry", "on_retry", "max_retries", "retry_delay", "retry_if_exception_type",
                 "websocket_pre_event_retries_disabled", "tenacity.retry_if_result"):
        assert not named_like_retry(name), name


def test_scopes_expose_their_configuration_for_other_rules():
    module, model = model_of('''
        import time
        import backoff
        from tenacity import retry, stop_after_attempt, wait_fixed

        @retry(stop=stop_after_attempt(3), wait=wait_fixed(2))
        def a(api):
            api.create_order()

        @backoff.on_exception(backoff.constant, TimeoutError, max_tries=4, jitter=None)
        def b(api):
            api.create_order()

        def c(api):
            while True:
                try:
                    return api.create_order()
                except (TimeoutError, ConnectionError):
                    time.sleep(1)
    ''')
    by_kind = {}
    for scope in model.scopes:
        by_kind.setdefault((scope.kind, scope.library), scope)
    tenacity = by_kind[("decorator", "tenacity")]
    assert {role: module.code_for_node(arg.value) for role, arg in tenacity.config.items()} == {
        "stop": "stop_after_attempt(3)", "wait": "wait_fixed(2)",
    }
    backoff_scope = by_kind[("decorator", "backoff")]
    assert set(backoff_scope.config) == {"wait", "predicate", "stop", "jitter"}
    loop = by_kind[("loop", None)]
    assert loop.bound is None  # `while True`: NA105's unbounded retry
    assert loop.caught == ("TimeoutError", "ConnectionError")
    assert [module.code_for_node(s) for s in loop.sleeps] == ["time.sleep(1)"]
    assert len(model.retried) == 3
    assert all(len(r.scopes) == 1 for r in model.retried)


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
        "from tenacity import retry\n\n"
        "@retry\n"
        "def ask(client, prompt):\n"
        "    return client.chat.completions.create(model='gpt-4o', messages=[prompt])\n\n"
        "@retry\n"
        "def ask_claude(anthropic_client, prompt):\n"
        "    return anthropic_client.messages.create(model='claude', max_tokens=100, messages=[prompt])\n\n"
        "@retry\n"
        "def embed(client, text):\n"
        "    return client.embeddings.create(model='e', input=text)\n\n"
        "@retry\n"
        "def text_customer(twilio_client, phone, body):\n"
        "    return twilio_client.messages.create(to=phone, from_='+100', body=body)\n"
    )
    assert [f.line for f in lint(code, select=["NA101"]).findings] == [17]
