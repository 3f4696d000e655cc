from __future__ import annotations

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.model import Retried
from nonatomic.rules.lint.semantics.pacing import adapts
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.tool_config import LEVELS
from nonatomic.rules.lint.semantics.tools import ToolRegistry


class RetryWriteWithoutIdempotencyKey(LintRule):
    """
    ## What it does
    Flags a write-tool call inside a retry scope that passes no idempotency key.
    Retry scopes are tenacity `@retry` and `Retrying` loops, backoff
    `on_exception`/`on_predicate`, stamina `retry`/`retry_context`,
    `retrying.retry`, LangChain `.with_retry()`, LangGraph nodes and tasks with a
    `RetryPolicy`, hand-written `for attempt in range(n)` / `while` loops that go
    round again on failure and stop on success, and the module's own retry
    helpers (`call_with_retry(lambda: crm.create_ticket(payload))`).

    A key counts when it is passed as a keyword (`idempotency_key=`,
    `ClientToken=`, `dedupe_key=`, ...), as a header (`Idempotency-Key`), or as a
    field of the payload, also through a local variable or a key parameter of
    the module's own tool function.

    ## Why is this bad?
    A timeout does not mean the write failed: the provider may have refunded the
    order and only the answer was lost. A support agent's refund tool was
    wrapped in `@retry(stop=stop_after_attempt(3))`; the payment API answered
    slowly during an incident, every attempt timed out on the client side, and
    each one went through on the server: one complaint, three refunds. With an
    idempotency key the provider recognises the second and third attempts as
    the same request and answers with the first result.

    Loops that iterate over work (`for user in users: try: send(user) except:
    continue`) are not retries, and retrying a read is harmless. A retry that
    only retries connection errors raised before the request left
    (`ConnectError`, `ConnectTimeout`) cannot repeat a side effect and is not
    flagged.

    ## Example
    ```python
    import stripe
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def refund_order(order):
        return stripe.Refund.create(payment_intent=order.payment_id, amount=order.total)
    ```

    ## Use instead
    ```python
    import stripe
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def refund_order(order):
        return stripe.Refund.create(
            payment_intent=order.payment_id,
            amount=order.total,
            idempotency_key=f"refund-{order.id}",  # stable across attempts
        )
    ```
    The key must be the same on every attempt: derive it from the business
    operation (order id, ticket id), never from the clock or a fresh UUID
    (NA102).

    ## Options
    `[tool.nonatomic.retry-write-without-idempotency-key]`: `min-level` (`low`,
    `high` or `irreversible`; default `low`: every write) — writes below it are
    not flagged.  What is a write and how keys are spelled is the tool registry,
    `[tool.nonatomic.tools]` (`write`, `read`, `idempotency_keys`, `levels`).
    """

    code = "NA101"
    METADATA_DEPENDENCIES = (RetryProvider,)

    VALID = [
        # The key is a keyword, a header, or a payload field.
        """
            import stripe
            from tenacity import retry

            @retry
            def refund(order):
                stripe.Refund.create(payment_intent=order.pi, idempotency_key=f'refund-{order.id}')
            """,
        """
            import requests
            from tenacity import retry, stop_after_attempt

            @retry(stop=stop_after_attempt(3))
            def open_ticket(body, key):
                headers = {'Idempotency-Key': key}
                return requests.post('https://crm.example.com/tickets', json=body, headers=headers, timeout=10)
            """,
        """
            import backoff, requests

            @backoff.on_exception(backoff.expo, requests.RequestException, max_tries=5)
            def create_order(cart):
                payload = dict(items=cart.items)
                payload['dedupe_key'] = cart.id
                return requests.post(URL, json=payload, timeout=5)
            """,
        # A read may be retried.
        """
        from tenacity import retry

        @retry
        def load(client, order_id):
            return client.orders.get(order_id)
        """,
        # Iteration over work, not a retry.
        """
            import time

            def notify_all(mailer, users):
                for user in users:
                    try:
                        mailer.send_email(user.email, 'hi')
                    except OSError:
                        time.sleep(1)
                        continue
            """,
        # Index iteration with a counter is iteration too.
        """
            import time

            def push(api, batches):
                for i in range(len(batches)):
                    try:
                        api.create_batch(batches[i])
                    except OSError:
                        time.sleep(1)
            """,
        # A worker loop goes on after a success: not a retry.
        """
            import time

            def heartbeat(api):
                while True:
                    try:
                        api.post_heartbeat()
                    except OSError:
                        pass
                    time.sleep(10)
            """,
        # Container and in-process look-alikes inside a retry.
        """
            from tenacity import retry

            @retry
            def step(state, cache, lock, items, logger):
                state.update({'n': 1})
                cache.set('k', 1)
                items.append(1)
                lock.release()
                logger.info('sent')
                return dict(a=1)
            """,
        # Connection errors happen before the request is sent.
        """
            import httpx
            from tenacity import retry, retry_if_exception_type

            @retry(retry=retry_if_exception_type(httpx.ConnectError))
            def send(client, body):
                return client.post('https://hooks.example.com/x', json=body)
            """,
        # A local service is not an external side effect.
        """
            import requests
            from tenacity import retry

            @retry
            def warm():
                requests.post('http://localhost:8080/warmup', timeout=2)
            """,
        # A handler that always re-raises stops the loop: no retry.
        """
            def charge_once(gateway, card):
                for attempt in range(3):
                    try:
                        return gateway.charge(card)
                    except Exception:
                        raise
            """,
        # Polling a read until it is visible.
        """
            import time

            def wait_done(api, job_id):
                while True:
                    job = api.get_job(job_id)
                    if job.done:
                        return job
                    time.sleep(5)
            """,
        # `.with_retry()` on a chain of model calls, not on a write tool.
        """
        def build(prompt, llm):
            return (prompt | llm).with_retry(stop_after_attempt=3)
        """,
        # A key parameter of the module's own tool reaches its write.
        """
            import stripe
            from tenacity import retry

            def refund_payment(pi, idempotency_key):
                return stripe.Refund.create(payment_intent=pi, idempotency_key=idempotency_key)

            @retry
            def handle(pi, key):
                refund_payment(pi, key)
            """,
        # Each round creates something else: the handler changes the name it sends.
        """
            def create_branch(repo, name, sha):
                candidate = name
                for i in range(100):
                    try:
                        return repo.create_git_ref(ref=f'refs/heads/{candidate}', sha=sha)
                    except GithubException as e:
                        if e.status != 422:
                            raise
                        candidate = f'{name}_v{i + 1}'
            """,
    ]
    INVALID = [
        Invalid(
            """
            import stripe
            from tenacity import retry, stop_after_attempt

            @retry(stop=stop_after_attempt(3))
            def refund(order):
                return stripe.Refund.create(payment_intent=order.pi, amount=order.total)
            """,
            line=6,
        ),
        Invalid(
            """
            import tenacity

            @tenacity.retry
            def open_ticket(crm, body):
                return crm.tickets.create(body)
            """,
            line=5,
        ),
        Invalid(
            """
            from tenacity import Retrying, stop_after_attempt

            def book(api, slot):
                for attempt in Retrying(stop=stop_after_attempt(3)):
                    with attempt:
                        api.book_room(slot)
            """,
            line=6,
        ),
        Invalid(
            """
            import backoff, requests

            @backoff.on_exception(backoff.expo, requests.RequestException)
            def send_sms(to, text):
                requests.post('https://sms.example.com/send', json={'to': to}, timeout=5)
            """,
            line=5,
        ),
        Invalid(
            """
            import stamina, httpx

            @stamina.retry(on=httpx.HTTPError, attempts=3)
            def pay(client, invoice):
                return client.post('/payments', json=invoice)
            """,
            line=5,
        ),
        Invalid(
            """
            from retrying import retry

            @retry(stop_max_attempt_number=3)
            def cancel(api, order_id):
                api.cancel_order(order_id)
            """,
            line=5,
        ),
        Invalid(
            """
            import time

            def create(crm, payload):
                for attempt in range(3):
                    try:
                        return crm.create_ticket(payload)
                    except TimeoutError:
                        time.sleep(2 ** attempt)
            """,
            line=6,
        ),
        Invalid(
            """
            def deploy(api, build):
                done = False
                while not done:
                    try:
                        api.deploy_release(build)
                        done = True
                    except Exception:
                        pass
            """,
            line=5,
        ),
        Invalid(
            """
            import time

            def post_status(http, body):
                for attempt in range(5):
                    resp = http.post('https://api.example.com/status', json=body)
                    if resp.status_code < 500:
                        return resp
                    time.sleep(1)
            """,
            line=5,
        ),
        Invalid(
            """
            import time

            def call_with_retry(fn, attempts=3):
                for i in range(attempts):
                    try:
                        return fn()
                    except Exception:
                        time.sleep(1)

            def open_ticket(crm, payload):
                return call_with_retry(lambda: crm.create_ticket(payload))
            """,
            line=11,
        ),
        Invalid(
            """
            from langchain_core.tools import tool

            @tool
            def refund_payment(order_id: str) -> str:
                '''Refund an order.'''
                return PAYMENTS.refund(order_id)

            safe_refund = refund_payment.with_retry(stop_after_attempt=3)
            """,
            line=8,
        ),
        Invalid(
            """
            from langgraph.graph import StateGraph
            from langgraph.types import RetryPolicy

            def send_invoice(state):
                MAILER.send_email(state['to'], state['pdf'])
                return state

            builder = StateGraph(dict)
            builder.add_node('invoice', send_invoice, retry_policy=RetryPolicy(max_attempts=3))
            """,
            line=5,
        ),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        settings = self.context.settings
        self.registry = ToolRegistry.for_table(settings.tools if settings is not None else None)
        self.min_level = LEVELS.index(self.context.options.get("min-level", "low"))
        self.pre_send = set(load_pack("retry")["pre_send_exceptions"])

    def visit_Module(self, node: cst.Module) -> None:
        model = self.get_metadata(RetryProvider, node)
        reported: set[int] = set()
        for retried in model.retried:
            if id(retried.node) in reported:
                continue
            if all(scope.catches_only(self.pre_send) for scope in retried.scopes):
                continue
            if all(scope.kind == "loop" and adapts(scope.node, [retried]) for scope in retried.scopes):
                continue  # each round sends a changed request (`name = f"{base}_v{i}"`): a search
            write = self.registry.retried_write(retried, model)
            if write is None or LEVELS.index(write.level) < self.min_level:
                continue
            if self.registry.key_of_retried(retried, model) is not None:
                continue
            reported.add(id(retried.node))
            self.report(retried.node, self._message(retried, write))

    @staticmethod
    def _message(retried: Retried, write) -> str:
        scope = retried.scopes[0]
        what = f"`{write.name}(...)`" if retried.site is not None else f"`{write.name}`"
        via = f" (it calls `{write.via}`)" if write.via else ""
        return (
            f"{what} is a write{via} retried by {scope.label} without an idempotency key: "
            "an attempt that timed out after the side effect happened is repeated"
        )
