from __future__ import annotations


import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.callees import dotted_name
from nonatomic.rules.lint.semantics.confidence import severity, shape_note, write_note
from nonatomic.rules.lint.semantics.model import RetryScope
from nonatomic.rules.lint.semantics.pacing import one_attempt
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.retryable import (
    handlers_in,
    is_catch_all,
    loop_statuses,
    module_constants,
    non_retryable,
    predicate_tests,
    retried_statuses,
    retries_on,
    status_set,
)
from nonatomic.rules.lint.semantics.tools import ToolRegistry
from nonatomic.rules.lint.tree import walk

_ADVICE = "retry only transient failures (timeouts, connection errors, 408/425/429, 5xx)"


class RetryOnNonRetryable(LintRule):
    """
    ## What it does
    Flags a retry scope around a write that retries every exception — a bare
    `except:` or `except Exception:` in a hand-written retry loop, tenacity
    `@retry` or `retrying.retry` with no predicate, `backoff.on_exception(...,
    Exception)`, LangChain `.with_retry()` with its default — or that decides by
    HTTP status and sends a non-retryable client error (400, 401, 403, 404, 422)
    round again.

    ## Why is this bad?
    A client error is the server's answer about the request itself: a bad
    payload, an expired credential, a missing permission, an unknown object, a
    failed validation. The same request gets the same answer every time, so the
    retry only burns the budget, hammers the provider and delays the real error.
    Worse, a catch-all also retries the failures that happened after the side
    effect: a ticket tool whose response parser raised `KeyError` on a new field
    created one ticket per attempt, five in all, because its retry loop caught
    `Exception`.

    Retrying a read on anything is harmless and is not flagged; catching
    `ConnectionError`, timeouts, 429 or 5xx is what a retry is for.

    ## Severity
    A warning when the write and the retry are seen at the site; `info` when
    the write is reached through a module function, the retry is in a test
    module (the message says so), or the loop was taken for a retry from its
    shape alone (a `while` loop with no attempt count), and for
    a raw HTTP PUT or DELETE, which is idempotent (RFC 9110): the repeat leaves
    the state the first attempt left.

    ## Example
    ```python
    import requests
    from tenacity import retry, stop_after_attempt

    RETRYABLE = {400, 429, 500, 502, 503}

    @retry(stop=stop_after_attempt(3))
    def create_ticket(payload, key):
        return requests.post(URL, json=payload, headers={"Idempotency-Key": key}, timeout=10)
    ```

    ## Use instead
    ```python
    import requests
    from tenacity import retry, retry_if_exception_type, stop_after_attempt

    @retry(
        stop=stop_after_attempt(3),
        retry=retry_if_exception_type((requests.ConnectionError, requests.Timeout)),
    )
    def create_ticket(payload, key):
        return requests.post(URL, json=payload, headers={"Idempotency-Key": key}, timeout=10)
    ```
    Statuses that are worth another attempt: 408, 425, 429 and 5xx
    (`nonatomic/rules/non_retryable.yaml`).
    """

    code = "NA103"
    METADATA_DEPENDENCIES = (RetryProvider,)

    VALID = [
        # A handler that hands every failure to a classifier that re-raises the ones it
        # cannot retry: the predicate lives in the classifier.
        """
            import time

            class Handler:
                def _do_retryable_operation(self, operation, **kwargs):
                    retried_times = 0
                    while retried_times <= 3:
                        try:
                            return operation(**kwargs)
                        except Exception as exception:
                            last_exception = self._handle_exception(exception)
                            retried_times += 1
                            time.sleep(2 ** retried_times)
                    raise last_exception

                def _send_batch_with_retry(self, batch):
                    return self._do_retryable_operation(self._send_batch, batch=batch)

                def _send_batch(self, batch):
                    return self._client.send_message_batch(batch)
            """,
        # Only transient errors are retried.
        """
            import httpx
            from tenacity import retry, retry_if_exception_type

            @retry(retry=retry_if_exception_type((httpx.ConnectError, httpx.ReadTimeout)))
            def create_ticket(client, body, key):
                return client.post('https://crm.example.com/tickets', json=body, headers={'Idempotency-Key': key})
            """,
        # A read may be retried on anything.
        """
            from tenacity import retry

            @retry
            def load(api, order_id):
                return api.get_order(order_id)
            """,
        """
            def fetch(api, job_id):
                for attempt in range(3):
                    try:
                        return api.get_job(job_id)
                    except Exception:
                        pass
            """,
        # A catch-all that re-raises client errors discriminates.
        """
            import time

            def create(crm, payload, key):
                for attempt in range(3):
                    try:
                        return crm.create_ticket(payload, idempotency_key=key)
                    except Exception as exc:
                        if getattr(exc, 'status_code', 500) < 500:
                            raise
                        time.sleep(2 ** attempt)
            """,
        # A status set of transient codes only; client errors leave the loop.
        """
            import time

            RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})

            def send(http, body, key):
                for attempt in range(5):
                    resp = http.post('https://api.example.com/messages', json=body, headers={'Idempotency-Key': key})
                    if resp.status_code not in RETRYABLE:
                        return resp
                    time.sleep(1)
            """,
        # LangGraph's default retry_on skips client errors.
        """
            from langgraph.types import RetryPolicy

            def send_invoice(state):
                MAILER.send_email(state['to'], state['pdf'])
                return state

            builder.add_node('invoice', send_invoice, retry_policy=RetryPolicy(max_attempts=3))
            """,
        # A status set that is not used to retry (a lookup table of messages).
        """
            import time

            MESSAGES = {400: 'bad', 404: 'missing'}

            def post(api, body):
                for attempt in range(3):
                    try:
                        return api.create_post(body)
                    except TimeoutError:
                        time.sleep(1)
            """,
        # A framework told which failures are transient, or which are not.
        """

            from celery import shared_task
            import requests

            @shared_task(autoretry_for=(requests.ConnectionError, requests.Timeout), retry_backoff=True)
            def send_invoice(invoice_id, key):
                requests.post(URL, json={"id": invoice_id}, headers={"Idempotency-Key": key}, timeout=10)
            """,
        """

            from datetime import timedelta
            from temporalio import workflow
            from temporalio.common import RetryPolicy

            def charge(order):
                return PAYMENTS.charge(order["card"], idempotency_key=order["id"])

            @workflow.defn
            class Checkout:
                @workflow.run
                async def run(self, order):
                    await workflow.execute_activity(charge, order, start_to_close_timeout=timedelta(seconds=30),
                                                    retry_policy=RetryPolicy(maximum_attempts=5,
                                                                             non_retryable_error_types=["CardDeclined"]))
            """,
        # The predicate comes from a helper through `**kwargs`: unknown, not missing.
        """

            from tenacity import Retrying

            def create_charge(client, body, retry_kwargs):
                for attempt in Retrying(**retry_kwargs):
                    with attempt:
                        return client.charges.create(body)
            """,
    ]
    INVALID = [
        Invalid(
            """
                import tenacity

                @tenacity.retry(stop=tenacity.stop_after_attempt(3))
                def open_ticket(crm, body):
                    return crm.create_ticket(body)
                """,
            line=3,
        ),
        Invalid(
            """
                import backoff, requests

                @backoff.on_exception(backoff.expo, Exception, max_tries=4)
                def send_sms(to, text):
                    requests.post('https://sms.example.com/send', json={'to': to}, timeout=5)
                """,
            line=3,
        ),
        Invalid(
            """
                import time

                def refund(payments, order):
                    for attempt in range(3):
                        try:
                            return payments.refund(order.charge_id, idempotency_key=order.id)
                        except:
                            time.sleep(2 ** attempt)
                """,
            line=7,
        ),
        Invalid(
            """
                import time

                def deploy(api, build):
                    while True:
                        try:
                            api.deploy_release(build)
                            break
                        except Exception as exc:
                            print(exc)
                            time.sleep(5)
                """,
            line=8, severity="info"),
        Invalid(
            """
                import time

                import httpx

                RETRY_ON = (400, 429, 500, 503)

                def book(http: httpx.Client, slot, key):
                    for attempt in range(4):
                        resp = http.post('https://api.example.com/bookings', json=slot, headers={'Idempotency-Key': key})
                        if resp.status_code in RETRY_ON:
                            time.sleep(2 ** attempt)
                            continue
                        return resp
                """,
            line=10,
        ),
        Invalid(
            """
                from tenacity import retry, retry_if_result, stop_after_attempt

                @retry(stop=stop_after_attempt(3), retry=retry_if_result(lambda r: r.status_code in {404, 503}))
                def create_order(api, cart, key):
                    return api.place_order(cart, idempotency_key=key)
                """,
            line=3,
        ),
        Invalid("""

                from celery import shared_task

                @shared_task(autoretry_for=(Exception,), retry_backoff=True, max_retries=5)
                def open_ticket(crm, body, key):
                    return crm.create_ticket(body, idempotency_key=key)
                """, line=4),
        # A transport that retries a POST on 400 and 404.
        Invalid("""

                import requests
                from requests.adapters import HTTPAdapter
                from urllib3.util.retry import Retry

                session = requests.Session()
                retry = Retry(total=3, backoff_factor=1, allowed_methods=["GET", "POST"], status_forcelist=[400, 404, 503])
                session.mount("https://", HTTPAdapter(max_retries=retry))

                def create_order(cart, key):
                    return session.post(f"{API}/orders", json=cart, headers={"Idempotency-Key": key}, timeout=10)
                """, line=7),
        # An idempotent DELETE retried on everything: the repeat changes nothing more.
        Invalid("""

                import backoff
                import requests

                @backoff.on_exception(backoff.expo, Exception, max_tries=4)
                def remove_member(team_url, user_id):
                    requests.delete(f"{team_url}/members/{user_id}", timeout=10).raise_for_status()
                """, line=5, severity="info"),
        # No `retry_policy`: the server's default retries every failure, a declined card too.
        Invalid("""

                from datetime import timedelta
                from temporalio import workflow

                def charge(order):
                    return PAYMENTS.charge(order["card"], order["total"])

                @workflow.defn
                class Checkout:
                    @workflow.run
                    async def run(self, order):
                        await workflow.execute_activity(charge, order, start_to_close_timeout=timedelta(seconds=30))
                """, line=12),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        settings = self.context.settings
        self.registry = ToolRegistry.for_table(settings.tools if settings is not None else None)

    def visit_Module(self, node: cst.Module) -> None:
        model = self.get_metadata(RetryProvider, node)
        self.constants = module_constants(node)
        self.functions = {
            name: group[-1].node
            for name, group in model.functions.items()
            if isinstance(group[-1].node, cst.FunctionDef)
        }
        checked: set[int] = set()
        for retried in model.retried:
            scopes = [scope for scope in retried.scopes if id(scope) not in checked and not one_attempt(scope)]
            if not scopes:
                continue
            write = self.registry.retried_write(retried, model)
            if write is None:
                continue
            for scope in scopes:
                checked.add(id(scope))
                self._check(scope, f"`{write.name}`{write_note(write)}", severity(write, [scope], handed=retried.site is None))

    def _check(self, scope: RetryScope, write: str, level: str | None) -> None:
        label = scope.label + shape_note(scope)
        what = retries_on(scope)
        if what is not None and what.everything and not _hands_over(scope):
            handler = _catch_all_handler(scope) if scope.kind == "loop" else scope.node
            if handler is not None:
                caught = _catch_all_spelling(scope, what.names)
                self.report(handler, f"{label} retries the write {write} on {caught}: "
                            f"client errors and bugs after the side effect are retried too; {_ADVICE}",
                            severity=level)
                return
        found = self._statuses(scope)
        if found is not None:
            comparison, codes = found
            shown = ", ".join(map(str, codes))
            self.report(comparison, f"{label} retries the write {write} on non-retryable "
                        f"status {shown}: the same request gets the same answer; {_ADVICE}", severity=level)

    def _statuses(self, scope: RetryScope) -> tuple[cst.CSTNode, list[int]] | None:
        """The test that sends a non-retryable status round again, and those statuses."""
        if scope.kind == "loop":
            retried = loop_statuses(scope.node, self.constants)
        elif "statuses" in scope.config:  # `Retry(status_forcelist=[...])`
            setting = scope.config["statuses"].value
            codes = non_retryable(status_set(setting, self.constants) or set())
            return (setting, codes) if codes else None
        else:
            predicate = scope.config.get("predicate")
            tests = predicate_tests(predicate.value, self.functions) if predicate is not None else []
            branches = [(test, True, False) for test in tests]  # a predicate's truth is "retry"
            retried = retried_statuses(branches, self.constants)
        codes = non_retryable(set(retried))
        return (retried[codes[0]], codes) if codes else None


# Calls a handler hands the exception to only to tell someone (logs, prints, error trackers).
_REPORTERS = frozenset({"print", "str", "repr", "format", "debug", "info", "warning", "warn", "error",
                        "exception", "critical", "log", "capture_exception", "append", "isinstance"})


def _catch_all_spelling(scope: RetryScope, names: tuple[str, ...]) -> str:
    if scope.caught == ():
        return "every exception (a bare `except:`)"
    broad = next((name for name in names if is_catch_all(name)), None)
    return f"every exception (`{broad}`)" if broad else "every exception (no predicate is given)"


def _catch_all_handler(scope: RetryScope) -> cst.ExceptHandler | None:
    """The loop's handler that catches everything and goes round again without telling
    errors apart (a handler with a `raise` inside an `if` re-raises some of them)."""
    for handler in handlers_in(scope.node.body):
        names = [] if handler.type is None else [dotted_name(e) or "?" for e in _types(handler.type)]
        if names and not any(is_catch_all(n) for n in names):
            continue
        if not _raises(handler.body):
            return handler
    return None


def _hands_over(scope: RetryScope) -> bool:
    """A handler of the loop (the helper's own loop) passes what it caught to a function
    that may re-raise it (`self._handle_exception(exc)`): the predicate is in there,
    unknown here, not missing."""
    loop = scope.node if scope.kind == "loop" else scope.inner.node if scope.inner is not None else None
    if not isinstance(loop, (cst.For, cst.While)):
        return False
    for handler in handlers_in(loop.body):
        if handler.name is None or not isinstance(handler.name.name, cst.Name):
            continue
        caught = handler.name.name.value
        for call in walk.subtree(handler.body):
            if not isinstance(call, cst.Call) or _last(dotted_name(call.func)) in _REPORTERS:
                continue
            if any(isinstance(arg.value, cst.Name) and arg.value.value == caught for arg in call.args):
                return True
    return False


def _last(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


def _types(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    return [el.value for el in expr.elements] if isinstance(expr, cst.Tuple) else [expr]


def _raises(node: cst.CSTNode) -> list[cst.Raise]:
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return []
    found = [node] if isinstance(node, cst.Raise) else []
    for child in walk.children(node):
        found += _raises(child)
    return found
