"""NA106 (off by default): a write repeated after a timeout without looking first."""

from __future__ import annotations

import textwrap

from nonatomic.rules.lint import rule_for


def na106(lint, code: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(code), select=["NA106"]).findings]


def test_the_rule_is_off_by_default():
    assert rule_for("NA106").default_on is False


def test_not_run_unless_selected(lint):
    code = "def f(crm, p):\n    try:\n        crm.create_ticket(p)\n    except TimeoutError:\n        crm.create_ticket(p)\n"
    assert [f for f in lint(code).findings if f.code == "NA106"] == []
    assert [f.line for f in lint(code, select=["NA106"]).findings] == [5]


def test_a_refund_retried_after_a_read_timeout_then_verified(lint):
    code = '''
        import requests

        def refund(api, order):
            try:
                return api.refund_payment(order.payment_id, order.amount)
            except requests.ReadTimeout:
                status = api.get_refund_status(order.payment_id)
                if status == "succeeded":
                    return status
                return api.refund_payment(order.payment_id, order.amount)
    '''
    assert na106(lint, code) == []
    assert na106(lint, code.replace("                status = api.get_refund_status(order.payment_id)\n", "")
                 .replace('if status == "succeeded"', "if False")) == [10]


def test_connect_timeouts_happen_before_the_request_left(lint):
    code = '''
        import httpx

        def notify(client, body):
            try:
                return client.post("https://hooks.example.com/x", json=body)
            except httpx.ConnectTimeout:
                return client.post("https://hooks.example.com/x", json=body)
    '''
    assert na106(lint, code) == []


def test_a_loop_whose_timeout_handler_goes_round(lint):
    code = '''
        import time

        def provision(cloud, spec):
            for attempt in range(5):
                try:
                    return cloud.provision_vm(spec)
                except TimeoutError:
                    time.sleep(2 ** attempt)
    '''
    assert na106(lint, code) == [7]
    verified = code.replace(
        "                    time.sleep(2 ** attempt)",
        "                    if cloud.find_vm(spec.name):\n                        return None\n"
        "                    time.sleep(2 ** attempt)",
    )
    assert na106(lint, verified) == []
