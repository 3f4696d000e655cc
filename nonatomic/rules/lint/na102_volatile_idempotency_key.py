from __future__ import annotations


import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.model import FunctionFacts, ModuleModel, Retried
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.tool_config import normal_key
from nonatomic.rules.lint.semantics.tools import ToolRegistry
from nonatomic.rules.lint.semantics.volatile import Source, VolatileFinder

# Key spellings that are as often a tracing id, fresh per request by design: a
# fresh one is only a finding when the user's tool registry lists it as a key.
_TRACING_IDS = ("request_id", "x-request-id")


class VolatileIdempotencyKey(LintRule):
    """
    ## What it does
    Flags an idempotency key that is computed again on every attempt of a retried
    write from a value that changes each time: `uuid4()`, `time.time()`,
    `datetime.now()`, `random`, `secrets`, or a key helper that hashes a payload
    carrying such a field (`"ts": time.time()`) or reads the clock itself; and a
    framework's id of the tool call (`ctx.tool_call_id`, `call_id`) when the
    retry is the agent running the tool again (pydantic-ai `ModelRetry`, an agno
    run retried) or a tool's key comes from its own call id (LangChain's
    `InjectedToolCallId`): each call the agent makes again has a new id.

    ## Why is this bad?
    The provider deduplicates by key: a second request with the same key is
    answered with the first result, a request with a new key is a new
    operation. A key minted inside the retried function is new on every
    attempt, so the retry after a timeout that in fact succeeded is taken as a
    second order. An airline booking agent built its key as
    `f"{passenger_id}-{int(time.time())}"` inside a tenacity-retried function;
    a slow response and two retries a few seconds apart gave three distinct keys
    and three tickets.

    A key generated once, before the retry (and passed in, or bound before the
    retry loop), is stable across attempts and correct. A fresh `request_id` is
    usually a tracing id, not a key: it is flagged only when
    `[tool.nonatomic.tools] idempotency_keys` lists it.

    ## Example
    ```python
    import uuid
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def refund_order(payments, order):
        return payments.refunds.create(charge=order.charge_id, idempotency_key=str(uuid.uuid4()))
    ```

    ## Use instead
    ```python
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def refund_order(payments, order):
        return payments.refunds.create(charge=order.charge_id, idempotency_key=f"refund-{order.id}")
    ```
    Derive the key from the business operation, or mint it once before the
    first attempt and pass it to every attempt.

    ## Options
    `[tool.nonatomic.volatile-idempotency-key]`: `tracing-ids` (default
    `["request_id", "x-request-id"]`): key spellings taken for tracing ids.
    Only files with a shipped key spelling (`tools.yaml`) are checked: a
    spelling added in `[tool.nonatomic.tools]` is seen in files that also
    have a shipped one.
    """

    code = "NA102"
    METADATA_DEPENDENCIES = (RetryProvider,)

    VALID = [
        # Derived from the business operation.
        """
            import uuid
            from tenacity import retry

            @retry
            def refund(payments, order):
                trace = uuid.uuid4()
                return payments.refunds.create(charge=order.charge_id, idempotency_key=f'refund-{order.id}')
            """,
        # Minted once, outside the retry, and passed in.
        """
            import uuid
            from tenacity import retry

            @retry
            def _create(crm, body, key):
                return crm.create_ticket(body, idempotency_key=key)

            def open_ticket(crm, body):
                return _create(crm, body, str(uuid.uuid4()))
            """,
        # Bound before the hand-written loop: the same key on every attempt.
        """
            import time, uuid

            def pay(api, invoice):
                key = uuid.uuid4().hex
                for attempt in range(3):
                    try:
                        return api.pay_invoice(invoice, idempotency_key=key)
                    except TimeoutError:
                        time.sleep(2 ** attempt)
            """,
        # A fresh request id is a tracing id.
        """
            import uuid, httpx
            from tenacity import retry

            @retry
            def notify(client, body, key):
                return client.post('https://hooks.example.com/n', json=body,
                                   headers={'X-Request-ID': str(uuid.uuid4()), 'Idempotency-Key': key})
            """,
        # Not retried: a fresh key per call is the SDK's own retry protection.
        """
            import uuid

            def create_charge(stripe_client, amount):
                return stripe_client.charges.create(amount=amount, idempotency_key=str(uuid.uuid4()))
            """,
        # A timestamp in the payload, but the key hashes only the order id.
        """
            import hashlib, time
            from tenacity import retry

            @retry
            def place(api, order):
                payload = {'order': order.id, 'ts': time.time()}
                key = hashlib.sha256(payload['order'].encode()).hexdigest()
                return api.orders.create(json=payload, idempotency_key=key)
            """,
        # A tool's own retry of one call keeps that call's id.
        """

            from tenacity import retry, stop_after_attempt

            @retry(stop=stop_after_attempt(3))
            def refund(ctx, order_id):
                return PAYMENTS.refund(order_id, idempotency_key=ctx.tool_call_id)
            """,
    ]
    INVALID = [
        Invalid(
            """
                import uuid
                from tenacity import retry, stop_after_attempt

                @retry(stop=stop_after_attempt(3))
                def refund(payments, order):
                    return payments.refunds.create(charge=order.charge_id, idempotency_key=str(uuid.uuid4()))
                """,
            line=6,
        ),
        Invalid(
            """
                import time

                def book(api, passenger, flight):
                    for attempt in range(3):
                        key = f'{passenger.id}-{int(time.time())}'
                        try:
                            return api.book_flight(flight, passenger, idempotency_key=key)
                        except TimeoutError:
                            time.sleep(2)
                """,
            line=7,
        ),
        Invalid(
            """
                from datetime import datetime
                import backoff, requests

                @backoff.on_exception(backoff.expo, requests.Timeout, max_tries=3)
                def create_ticket(body):
                    headers = {'Idempotency-Key': f"ticket-{datetime.now().isoformat()}"}
                    return requests.post('https://crm.example.com/tickets', json=body, headers=headers, timeout=5)
                """,
            line=6,
        ),
        Invalid(
            """
                import hashlib, json, time
                from tenacity import retry

                def make_key(**fields):
                    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()

                @retry
                def transfer(bank, src, dst, amount):
                    payload = {'src': src, 'dst': dst, 'amount': amount, 'timestamp': time.time()}
                    return bank.transfers.create(json=payload, dedupe_key=make_key(**payload))
                """,
            line=10,
        ),
        Invalid(
            """
                import uuid

                def call_with_retry(fn, attempts=3):
                    for i in range(attempts):
                        try:
                            return fn()
                        except OSError:
                            pass

                def cancel(api, sub_id):
                    return call_with_retry(lambda: api.cancel_subscription(sub_id, client_token=uuid.uuid4().hex))
                """,
            line=11,
        ),
        # A LangChain tool keyed by its injected call id: the agent's retry is a new call.
        Invalid("""

                from typing import Annotated

                import stripe
                from langchain_core.tools import InjectedToolCallId, tool

                @tool
                def refund_order(order_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
                    "Refund an order."
                    return stripe.Refund.create(payment_intent=order_id, idempotency_key=tool_call_id).id
                """, line=10),
        # The agent runs the tool again after ModelRetry: a new call, a new tool_call_id.
        Invalid("""

                from pydantic_ai import Agent, ModelRetry, RunContext

                agent = Agent("openai:gpt-4o")

                @agent.tool
                def refund(ctx: RunContext, order_id: str) -> str:
                    result = PAYMENTS.refund(order_id, idempotency_key=ctx.tool_call_id)
                    if result.status == "pending":
                        raise ModelRetry("refund pending, ask again")
                    return result.id
                """, line=8),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        settings = self.context.settings
        table = settings.tools if settings is not None else None
        self.registry = ToolRegistry.for_table(table)
        declared = {normal_key(k) for k in (table or {}).get("idempotency_keys", [])}
        tracing = self.context.options.get("tracing-ids", list(_TRACING_IDS))
        self.tracing = frozenset(normal_key(name) for name in tracing) - declared

    def visit_Module(self, node: cst.Module) -> None:
        model = self.get_metadata(RetryProvider, node)
        finder = VolatileFinder(model)
        self.reported: set[int] = set()
        for retried in model.retried:
            key = self._key(retried.carrier, retried.function)
            if key is not None:
                sources = [s for s in finder.sources(key, retried.function) if finder.per_attempt(s, retried)]
                self._report(key, sources, retried, None)
            inner = model.target_function(retried.target, retried.function)
            if inner is not None and retried.site is not None:
                self._inside(inner, retried, finder, model)
        for group in model.functions.values():
            for facts in group:
                if facts.tool_name:
                    self._tool_call_ids(facts, finder)

    def _tool_call_ids(self, facts: FunctionFacts, finder: VolatileFinder) -> None:
        """A tool keyed by its own call's id: the agent's retry of a failed or timed-out
        call is a new call, with a new id."""
        for site in facts.sites:
            key = self._key(site.node, facts)
            if key is None or id(key) in self.reported:
                continue
            found = [s for s in finder.sources(key, facts) if s.call_id]
            if found and self.registry.write_of(site.node.func, callee=site.callee, carrier=site.node,
                                                where=facts, model=finder.model) is not None:
                self.reported.add(id(key))
                self.report(
                    key,
                    f"idempotency key built from {found[0].shown} in tool `{facts.tool_name}`: when the agent "
                    "calls the tool again after a timeout or an error, that is a new call with a new id, and "
                    "the provider takes it for a new operation; derive the key from the business operation",
                )

    def _inside(self, facts: FunctionFacts, retried: Retried, finder: VolatileFinder, model: ModuleModel) -> None:
        """A retried module function runs whole on every attempt: so does the key its write mints."""
        for site in facts.sites:
            key = self._key(site.node, facts)
            if key is None:
                continue
            sources = [s for s in finder.sources(key, facts) if finder.function_of(s) is facts]
            self._report(key, sources, retried, facts.name)

    def _key(self, carrier: cst.Call, where: FunctionFacts | None) -> cst.BaseExpression | None:
        key = self.registry.idempotency_key_of(carrier, where, skip=self.tracing)
        if key is None or any(a.star == "**" and a.value is key for a in carrier.args):
            return None  # `**kwargs`: whatever the caller passed
        return key

    def _report(self, key: cst.BaseExpression, sources: list[Source], retried: Retried, via: str | None) -> None:
        if not sources or id(key) in self.reported:
            return
        self.reported.add(id(key))
        scope = retried.scopes[0]
        where = f"`{via}` is retried by {scope.label}" if via else f"retried by {scope.label}"
        self.report(
            key,
            f"idempotency key built from {sources[0].shown} is new on every attempt ({where}): "
            "the provider takes each retry for a new operation; derive the key from the business "
            "operation or mint it once before the first attempt",
        )
