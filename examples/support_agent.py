"""A customer-support agent's tools, as many teams first write them.

`make demo` lints this file: every hazard below is one nonatomic reports.
"""

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import requests
from openai import OpenAI
from tenacity import retry, stop_after_attempt

CRM_URL = "https://crm.example.com/api"
PAYMENTS_URL = "https://payments.example.com/v1"

client = OpenAI()  # the SDK's default timeout is 10 minutes per request
session = requests.Session()
_pending_refunds = {}  # run-time state shared by every request this worker serves


def lookup_order(order_id: str) -> dict:
    """A read: safe to retry, but it still must not hang."""
    response = session.get(f"{CRM_URL}/orders/{order_id}")
    response.raise_for_status()
    return response.json()


@retry(stop=stop_after_attempt(5))
def refund_payment(order_id: str, amount_cents: int) -> dict:
    """Retried on any error, with no idempotency key: a timeout after the
    provider refunded means a second refund on the next attempt."""
    _pending_refunds[order_id] = amount_cents
    response = requests.post(
        f"{PAYMENTS_URL}/refunds",
        json={"order_id": order_id, "amount": amount_cents},
    )
    response.raise_for_status()
    return response.json()


def create_ticket(payload: dict) -> dict:
    for attempt in range(3):
        try:
            response = requests.post(f"{CRM_URL}/tickets", json=payload, timeout=10)
            response.raise_for_status()
            return response.json()
        except requests.RequestException:
            time.sleep(1)
    raise RuntimeError("CRM unavailable")


def notify_all(customers: list[str], message: str) -> None:
    """Iteration, not retry: one failed customer is skipped, nobody is emailed twice."""
    for customer in customers:
        try:
            requests.post(f"{CRM_URL}/notify", json={"to": customer, "text": message}, timeout=5)
        except requests.RequestException:
            continue


def export_report(path: str) -> None:
    subprocess.run(["report-exporter", "--out", path], check=True)


def summarise_in_background(text: str) -> str:
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(client.responses.create, model="gpt-4o-mini", input=text)
        return future.result().output_text
