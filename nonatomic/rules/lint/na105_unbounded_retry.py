from __future__ import annotations


import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.confidence import severity, shape_note
from nonatomic.rules.lint.semantics.pacing import NEVER, header, paced_scopes, stop_of, tenacity_setting
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.tools import ToolRegistry

DEFAULT_FIX_ATTEMPTS = 5


class UnboundedRetry(LintRule):
    """
    ## What it does
    Flags a retry with no attempt or time limit: tenacity `@retry`/`Retrying`
    without `stop=` (or with `stop_never`), `backoff.on_exception` without
    `max_tries`/`max_time`, `retrying.retry` without a `stop_max_*`, the `retry`
    package with `tries=-1` (its default), and hand-written `while True` /
    `while not done` / `itertools.count()` loops that retry a failed call and
    never give up (no `if attempt >= n: raise`, no deadline).

    Only retries of work that leaves the machine are flagged (the same scopes
    as NA104): a library retry construct, or a hand-written loop whose retried
    call is a write, an HTTP, database or SDK call, a method of an external
    client, or the callable a retry helper was given. Not retries: a loop that
    waits for a read to become visible (no `except`, only "not found yet"
    errors, or an exit on what the read returned — `if job.done: return job`),
    a tenacity/backoff construct retrying on a result around reads
    (`retry_if_result`, `on_predicate`), and a loop whose handler changes what
    the next attempt sends (`batch = batch[:half]`), and a re-ask of the model
    that goes round only on a malformed answer (a pydantic `ValidationError`,
    `json.JSONDecodeError`, an `OutputParserException`). A give-up test that calls
    a function (`if not self.recovers_from(error): raise`) may count attempts
    out of sight and is taken as a limit, and so is a tenacity `retry=`
    predicate of the code's own that reads the attempt number or the time since
    the start (tenacity hands it the retry state), or one defined in another
    module. stamina, LangChain `.with_retry()`
    and LangGraph `RetryPolicy` stop by default. Frameworks are read by their
    own settings: Celery's `max_retries=None` and a Temporal `RetryPolicy`
    with `maximum_attempts=0` (or without it, or none given to
    `execute_activity`) never stop, unless the call's
    `schedule_to_close_timeout` bounds all attempts together; a policy held in
    a module constant is read where it is built.

    ## Why is this bad?
    A failure that does not clear — the provider is down for an hour, the
    request is rejected for good, a credential expired — turns an unbounded
    retry into a loop that never returns. The agent step holds its worker,
    its locks and its task slot; every attempt that reached the server may have
    applied the write again; and no one hears of the failure, because the code
    that would report it is never reached. A ticket-sync tool retried
    `crm.create_ticket` under `@retry` with no `stop`: during a CRM outage the
    worker pool filled with steps that would never finish, and the backlog
    only drained when the pods were restarted.

    ## Severity
    A warning for a retry construct without a stop; `info` for a loop taken
    for a retry from its shape alone (a `while` loop with no attempt count) and
    for a retry in a test module, which the message says. A re-ask after a validation or parse error of the
    answer is not reported.

    ## Example
    ```python
    from tenacity import retry

    @retry
    def open_ticket(crm, payload):
        return crm.create_ticket(payload)
    ```

    ## Use instead
    ```python
    from tenacity import retry, stop_after_attempt, wait_random_exponential

    @retry(stop=stop_after_attempt(5), wait=wait_random_exponential(multiplier=1, max=30))
    def open_ticket(crm, payload):
        return crm.create_ticket(payload)
    ```
    In a hand-written loop, count attempts (`for attempt in range(5)`) or give
    up on a deadline (`if time.monotonic() > deadline: raise`).

    ## Fix (unsafe)
    Adds `stop=stop_after_attempt(<fix-attempts>)` to a tenacity `@retry`
    decorator (with the import). Unsafe: after the last attempt the function
    raises `RetryError` where it used to keep trying.

    ## Options
    `[tool.nonatomic.unbounded-retry]`: `fix-attempts` (the attempt limit the
    fix writes, default 5).
    """

    code = "NA105"
    METADATA_DEPENDENCIES = (RetryProvider,)

    VALID = [
        # A server-sent-events stream: each round takes the next event from the session's
        # queue, and its timeout sends a keepalive; it serves new events, it repeats nothing.
        """
            import asyncio
            import json

            from aiohttp import web

            async def handle_stream(request: web.Request) -> web.StreamResponse:
                session = request.app["sessions"].get(request.query["id"])
                response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
                await response.prepare(request)
                while True:
                    try:
                        event = await asyncio.wait_for(session.event_queue.get(), timeout=30)
                        await response.write(f"data: {json.dumps(event)}\\n\\n".encode())
                        if event["type"] == "done":
                            break
                    except asyncio.TimeoutError:
                        await response.write(b"event: keepalive\\n\\n")
                return response
            """,
        # A stop by attempts, by time, or both.
        """
            from tenacity import retry, stop_after_attempt, wait_random_exponential

            @retry(stop=stop_after_attempt(5), wait=wait_random_exponential(max=30))
            def open_ticket(crm, payload):
                return crm.create_ticket(payload)
            """,
        """
            import backoff, requests

            @backoff.on_exception(backoff.expo, requests.RequestException, max_time=60)
            def fetch(url):
                return requests.get(url, timeout=5)
            """,
        # stamina and LangChain stop by default.
        """
            import stamina, httpx

            @stamina.retry(on=httpx.HTTPError)
            def fetch(client):
                return client.get('/x')
            """,
        """
            def build(prompt, llm):
                return (prompt | llm).with_retry()
            """,
        # A counted loop, and a `while True` that gives up on a counter or a deadline.
        """
            import time, requests

            def post_event(body):
                attempt = 0
                while True:
                    try:
                        return requests.post(URL, json=body, timeout=5)
                    except requests.ConnectionError:
                        attempt += 1
                        if attempt >= 5:
                            raise
                        time.sleep(2 ** attempt)
            """,
        """
            import time

            def book(api, slot, deadline):
                while True:
                    try:
                        return api.book_room(slot)
                    except TimeoutError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(1)
            """,
        # Polling a read until it becomes visible is not a retry of a failure.
        """
            import time

            def wait_for_refund(payments, refund_id):
                while True:
                    refund = payments.get_refund(refund_id)
                    if refund.status == 'succeeded':
                        return refund
                    time.sleep(5)
            """,
        """
            import time

            def wait_visible(api, key):
                while True:
                    try:
                        return api.get_object(key)
                    except KeyError:
                        time.sleep(1)
            """,
        """
            from tenacity import retry, retry_if_result, wait_fixed

            @retry(retry=retry_if_result(lambda job: not job.done), wait=wait_fixed(5))
            def job_status(api, job_id):
                return api.get_job(job_id)
            """,
        # A local computation retried forever is no outage hazard (an input prompt).
        """
            def ask_number():
                while True:
                    try:
                        return int(input('n? '))
                    except ValueError:
                        print('again')
            """,
        # A worker loop stopped from outside.
        """
            import time

            def pump(queue_client, stop_event):
                while not stop_event.is_set():
                    try:
                        return queue_client.receive()
                    except OSError:
                        time.sleep(1)
            """,
        # Settings passed through **kwargs cannot be read.
        """
            from tenacity import retry

            @retry(**RETRY_SETTINGS)
            def sync(crm):
                crm.contacts.update(x=1)
            """,
        # Frameworks with a limit, their default or given.
        """

            import httpx
            from celery import shared_task

            @shared_task(autoretry_for=(IOError,), retry_backoff=True, retry_kwargs={"max_retries": 8})
            def sync_contact(crm: httpx.Client, contact):
                crm.put(f"/contacts/{contact['id']}", json=contact)
            """,
        """

            import dramatiq
            import requests

            @dramatiq.actor
            def send_welcome(user_id, key):
                requests.post(URL, json={"user": user_id}, headers={"Idempotency-Key": key}, timeout=5)
            """,
        """

            from datetime import timedelta
            from temporalio import workflow
            from temporalio.common import RetryPolicy

            def send_confirmation(order):
                MAILER.send_email(order["email"], "confirmed")

            @workflow.defn
            class OrderWorkflow:
                @workflow.run
                async def run(self, order):
                    await workflow.execute_activity(send_confirmation, order,
                                                    start_to_close_timeout=timedelta(seconds=30),
                                                    retry_policy=RetryPolicy(maximum_attempts=5))
            """,
        # A re-ask of the model when its answer does not parse: no service is failing.
        """

            from langchain_core.exceptions import OutputParserException
            from tenacity import retry, retry_if_exception_type

            @retry(retry=retry_if_exception_type(OutputParserException))
            def plan(chain, goal):
                return chain.invoke({"goal": goal})
            """,
        # Temporal: `schedule_to_close_timeout` bounds every attempt together (a time
        # limit), and `maximum_attempts=1` is a single attempt.
        """

            from datetime import timedelta
            from temporalio import workflow
            from temporalio.common import RetryPolicy

            def send_confirmation(order):
                MAILER.send_email(order["email"], "confirmed")

            @workflow.defn
            class OrderWorkflow:
                @workflow.run
                async def run(self, order):
                    await workflow.execute_activity(send_confirmation, order,
                                                    schedule_to_close_timeout=timedelta(minutes=10))
                    await workflow.execute_local_activity(send_confirmation, order,
                                                          start_to_close_timeout=timedelta(seconds=30),
                                                          retry_policy=RetryPolicy(maximum_attempts=1))
            """,
        # tenacity hands `retry=` the retry state: a predicate of the code's own that reads the
        # attempt number gives up by itself, and one defined in another module may.
        """

            from tenacity import retry, wait_exponential
            from .retries import SNAPSHOT_RETRY

            def transient(state):
                if isinstance(state.outcome.exception(), RateLimited):
                    return state.attempt_number < 10
                return state.attempt_number < 3

            @retry(retry=transient, wait=wait_exponential(max=30), reraise=True)
            def create_snapshot(api, name):
                return api.snapshots.create(name)

            @retry(retry=SNAPSHOT_RETRY, wait=wait_exponential(max=30), reraise=True)
            def delete_snapshot(api, name):
                return api.snapshots.delete(name)
            """,
    ]
    INVALID = [
        # A predicate that reads only the outcome, however it is combined, never gives up.
        Invalid(
            """

                from tenacity import retry, retry_any, retry_if_exception_type, wait_exponential

                def transient(state):
                    return isinstance(state.outcome.exception(), RateLimited)

                ON_FAILURE = retry_any(retry_if_exception_type(IOError), transient)

                @retry(retry=ON_FAILURE, wait=wait_exponential(max=30))
                def create_snapshot(api, name):
                    return api.snapshots.create(name)
                """,
            line=9,
        ),
        Invalid(
            """
                from tenacity import retry

                @retry
                def open_ticket(crm, payload):
                    return crm.create_ticket(payload)
                """,
            line=3,
            fixed="""
                from tenacity import stop_after_attempt, retry

                @retry(stop=stop_after_attempt(5))
                def open_ticket(crm, payload):
                    return crm.create_ticket(payload)
                """,
        ),
        # The qualified form needs no new import; comments and other arguments stay.
        Invalid(
            """
                import tenacity

                @tenacity.retry(  # transient CRM errors
                    retry=tenacity.retry_if_exception_type(IOError),
                )
                def sync(crm):
                    crm.contacts.update(x=1)
                """,
            line=3,
            fixed="""
                import tenacity

                @tenacity.retry(  # transient CRM errors
                    retry=tenacity.retry_if_exception_type(IOError),
                    stop=tenacity.stop_after_attempt(5),
                )
                def sync(crm):
                    crm.contacts.update(x=1)
                """,
        ),
        Invalid(
            """
                from tenacity import Retrying, stop_never

                def charge(gateway, card):
                    for attempt in Retrying(stop=stop_never):
                        with attempt:
                            gateway.charge(card)
                """,
            line=4,
        ),
        Invalid(
            """
                import backoff, requests

                @backoff.on_exception(backoff.expo, requests.RequestException)
                def send_sms(to, text):
                    requests.post('https://sms.example.com/send', json={'to': to}, timeout=5)
                """,
            line=3,
        ),
        Invalid(
            """
                from retrying import retry

                @retry(wait_exponential_multiplier=1000)
                def cancel(api, order_id):
                    api.cancel_order(order_id)
                """,
            line=3,
        ),
        # `while True` around an HTTP call with a sleep but no way out on failure.
        Invalid(
            """
                import time, requests

                def report(body):
                    while True:
                        try:
                            return requests.post('https://hooks.example.com/x', json=body, timeout=5)
                        except requests.RequestException:
                            time.sleep(5)
                """,
            line=4, severity="info"),
        # A success flag is no limit, and a predicate that re-raises some errors is none either.
        Invalid(
            """
                def deploy(api, build):
                    done = False
                    while not done:
                        try:
                            api.deploy_release(build)
                            done = True
                        except Exception as exc:
                            if isinstance(exc, PermissionError):
                                raise
                """,
            line=3, severity="info"),
        # A retry helper retries whatever it is handed.
        Invalid(
            """
                import itertools, time

                def call_with_retry(fn):
                    for attempt in itertools.count():
                        try:
                            return fn()
                        except ConnectionError:
                            time.sleep(2 ** attempt)
                """,
            line=4,
        ),
        # Celery's `max_retries=None` retries for ever.
        Invalid("""

                import httpx
                from celery import shared_task

                @shared_task(autoretry_for=(IOError,), retry_backoff=True, max_retries=None)
                def sync_contact(crm: httpx.Client, contact):
                    crm.put(f"/contacts/{contact['id']}", json=contact)
                """, line=5),
        # Temporal's `maximum_attempts=0` is unlimited, and so is a policy that does not set it.
        Invalid("""

                from datetime import timedelta
                from temporalio import workflow
                from temporalio.common import RetryPolicy

                def send_confirmation(order):
                    MAILER.send_email(order["email"], "confirmed")

                @workflow.defn
                class OrderWorkflow:
                    @workflow.run
                    async def run(self, order):
                        await workflow.execute_activity(
                            send_confirmation, order, start_to_close_timeout=timedelta(seconds=30),
                            retry_policy=RetryPolicy(maximum_attempts=0, initial_interval=timedelta(seconds=2)),
                        )
                """, line=13),
        # A policy built once, in a module constant, read where the workflow gives it.
        Invalid("""

                from datetime import timedelta
                from temporalio import workflow
                from temporalio.common import RetryPolicy

                FOREVER = RetryPolicy(initial_interval=timedelta(seconds=2), maximum_attempts=0)

                def send_confirmation(order):
                    MAILER.send_email(order["email"], "confirmed")

                @workflow.defn
                class OrderWorkflow:
                    @workflow.run
                    async def run(self, order):
                        await workflow.execute_activity(send_confirmation, order, retry_policy=FOREVER,
                                                        start_to_close_timeout=timedelta(seconds=30))
                """, line=15),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        settings = self.context.settings
        self.registry = ToolRegistry.for_table(settings.tools if settings is not None else None)
        self.fix_attempts = int(self.context.options.get("fix-attempts", DEFAULT_FIX_ATTEMPTS))

    def visit_Module(self, node: cst.Module) -> None:
        model = self.get_metadata(RetryProvider, node)
        for scope in paced_scopes(model, self.registry):
            if stop_of(scope, model) != NEVER:
                continue
            fix = tenacity_setting(scope, "stop", "stop_after_attempt", str(self.fix_attempts))
            self.report(
                header(scope),
                f"{scope.label}{shape_note(scope)} has no attempt or time limit: a failure that does not clear "
                "retries forever, holding the worker and repeating any side effect",
                severity=severity(None, [scope]),
                replacement=fix[0] if fix else None,
                fix_title=f"Add `stop=stop_after_attempt({self.fix_attempts})`" if fix else None,
                imports=fix[1] if fix else (),
            )
