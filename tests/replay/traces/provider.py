"""The payment provider the scenarios' refund tool calls: an httpx MockTransport that books, then times out.

The first refund request for an order in `flaky` is booked and then its
answer is lost, as a provider behind a slow gateway does: the sync client gets
`httpx.ReadTimeout` after the booking, the async client an answer so late
that the caller's own timeout ends the wait; every later request for that order is booked again and answered.  The
provider keeps its ledger, so a scenario knows how many refunds were really
booked twice: the incidents the replay must find.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import httpx

REFUNDS = "https://payments.example.com/v1/refunds"
LATE_ANSWER = 5.0  # seconds an async caller waits for a lost answer unless its own timeout ends the wait


class Provider:
    def __init__(self, flaky: set[str]):
        self.flaky = set(flaky)  # orders whose first answer is lost
        self.booked: Counter[str] = Counter()

    def _book(self, request: httpx.Request) -> tuple[str, bool]:
        order = json.loads(request.content)["order_id"]
        self.booked[order] += 1
        return order, order in self.flaky and self.booked[order] == 1

    def _answer(self, order: str) -> httpx.Response:
        return httpx.Response(200, json={"refund": f"re_{order}_{self.booked[order]}", "status": "succeeded"})

    def handler(self, request: httpx.Request) -> httpx.Response:
        order, lost = self._book(request)
        if lost:
            raise httpx.ReadTimeout("The read operation timed out", request=request)
        return self._answer(order)

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self.handler))

    def async_client(self) -> httpx.AsyncClient:
        async def handle(request: httpx.Request) -> httpx.Response:
            order, lost = self._book(request)
            if lost:  # the answer comes too late: the caller's own timeout gives up first
                await asyncio.sleep(LATE_ANSWER)
            return self._answer(order)
        return httpx.AsyncClient(transport=httpx.MockTransport(handle))

    def refund(self, order_id: str, amount: int) -> str:
        with self.client() as client:
            response = client.post(REFUNDS, json={"order_id": order_id, "amount": amount}, timeout=5)
        return response.json()["refund"]

    async def refund_async(self, order_id: str, amount: int) -> str:
        async with self.async_client() as client:
            response = await client.post(REFUNDS, json={"order_id": order_id, "amount": amount}, timeout=5)
        return response.json()["refund"]

    def doubles(self) -> int:
        """Refunds booked more than once: the incidents a replay must report."""
        return sum(1 for count in self.booked.values() if count > 1)
