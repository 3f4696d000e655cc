from __future__ import annotations

from functools import lru_cache

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.callees import dotted_name, source
from nonatomic.rules.lint.semantics.loops import calls_in
from nonatomic.rules.lint.semantics.model import CallSite, ModuleModel, Retried, RetryScope
from nonatomic.rules.lint.semantics.names import word_list
from nonatomic.rules.lint.semantics.packs import load_pack
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.retryable import handlers_in, is_timeout, retries_on
from nonatomic.rules.lint.semantics.tools import ToolRegistry


@lru_cache(maxsize=1)
def _verify_verbs() -> frozenset[str]:
    """Verbs of a call that finds out what the timed-out write did (retry.yaml `by_design`)."""
    design = load_pack("retry")["by_design"]
    return frozenset(design["verify_verbs"]) | frozenset(design["verify_after_timeout"])


class RetryAfterTimeoutWithoutVerify(LintRule):
    """
    ## What it does
    Flags a write that is sent again after a timeout with no status or verify
    call first: an `except TimeoutError:` handler that calls the same write
    again, a retry loop whose timeout handler goes round to the write, or a
    retry construct that retries the write on timeouts. A write that passes an
    idempotency key is not flagged: the provider answers the repeat with the
    first outcome.

    ## Why is this bad?
    A timeout is an unknown outcome, not a failure: the request may have been
    applied and only the answer lost. Sending it again blindly turns one
    operation into two. A ticketing agent caught `ReadTimeout` from
    `create_ticket` and called it again; the first ticket had been created,
    the customer got two, and the two support agents who picked them up
    answered differently. Looking the operation up first (by a client
    reference, or the provider's status endpoint) tells a lost answer from a
    lost request.

    ## Example
    ```python
    def open_ticket(crm, payload):
        try:
            return crm.create_ticket(payload)
        except TimeoutError:
            return crm.create_ticket(payload)
    ```

    ## Use instead
    ```python
    def open_ticket(crm, payload):
        try:
            return crm.create_ticket(payload)
        except TimeoutError:
            existing = crm.find_ticket(reference=payload["reference"])
            return existing or crm.create_ticket(payload)
    ```
    Better still: pass an idempotency key, and the retry is safe by itself.
    """

    code = "NA106"
    METADATA_DEPENDENCIES = (RetryProvider,)

    VALID = [
        # Verified before the second attempt.
        """
            def open_ticket(crm, payload):
                try:
                    return crm.create_ticket(payload)
                except TimeoutError:
                    existing = crm.find_ticket(payload['ref'])
                    return existing or crm.create_ticket(payload)
            """,
        # The key makes the repeat safe.
        """
            def refund(payments, order):
                try:
                    return payments.refund(order.charge, idempotency_key=order.id)
                except TimeoutError:
                    return payments.refund(order.charge, idempotency_key=order.id)
            """,
        # A read retried after a timeout.
        """
            def load(api, job_id):
                try:
                    return api.get_job(job_id)
                except TimeoutError:
                    return api.get_job(job_id)
            """,
        # Another call in the handler, not the same write.
        """
            def notify(mailer, queue, msg):
                try:
                    mailer.send_email(msg)
                except TimeoutError:
                    queue.enqueue_review(msg)
            """,
        # The loop checks the status at the start of every round.
        """
            import time

            def deploy(api, build):
                for attempt in range(3):
                    if api.get_release_status(build) == 'live':
                        return
                    try:
                        api.deploy_release(build)
                        return
                    except TimeoutError:
                        time.sleep(5)
            """,
    ]
    INVALID = [
        Invalid(
            """
            def open_ticket(crm, payload):
                try:
                    return crm.create_ticket(payload)
                except TimeoutError:
                    return crm.create_ticket(payload)
            """,
            line=5,
        ),
        Invalid(
            """
            import time, requests

            def send(payload):
                for attempt in range(3):
                    try:
                        return requests.post('https://api.example.com/orders', json=payload, timeout=5)
                    except requests.ReadTimeout:
                        time.sleep(2 ** attempt)
            """,
            line=6,
        ),
        Invalid(
            """
            import httpx
            from tenacity import retry, retry_if_exception_type

            @retry(retry=retry_if_exception_type(httpx.ReadTimeout))
            def book(client: httpx.Client, slot):
                return client.post('https://api.example.com/bookings', json=slot)
            """,
            line=6,
        ),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        settings = self.context.settings
        self.registry = ToolRegistry.for_table(settings.tools if settings is not None else None)

    def visit_Module(self, node: cst.Module) -> None:
        self.model: ModuleModel = self.get_metadata(RetryProvider, node)
        self.site_of = {id(site.node): site for site in self.model.sites}
        self.reported: set[int] = set()
        for retried in self.model.retried:
            if retried.site is None:
                continue
            scope = next((s for s in retried.scopes if _on_timeout(s)), None)
            if scope is not None and not self._verified(retried, scope) and self._unkeyed_write(retried.site):
                self._report(retried.node, scope.label)

    def visit_Try(self, node: cst.Try) -> None:
        """`except Timeout: return create_ticket(...)`: the handler repeats a call of the `try`."""
        attempted = {source(call.func): call for call in calls_in(node.body)}
        for handler in node.handlers:
            if not _catches_timeout(handler):
                continue
            for call in calls_in(handler.body):
                if _verifies(call):
                    break  # what follows knows what the first call did
                site = self.site_of.get(id(call))
                if source(call.func) in attempted and site is not None and self._unkeyed_write(site):
                    self._report(call, "the timeout handler")

    def _unkeyed_write(self, site: CallSite) -> bool:
        write = self.registry.write_of(site.node.func, callee=site.callee, carrier=site.node,
                                       where=site.function, model=self.model)
        return write is not None and self.registry.idempotency_key_of(site.node, site.function) is None

    def _verified(self, retried: Retried, scope: RetryScope) -> bool:
        """A status/verify call runs before the write in each attempt, or in the timeout handler."""
        if scope.kind == "loop":
            body = scope.node.body
            handlers = [h for h in handlers_in(body) if _catches_timeout(h)]
            if any(_verifies(call) for handler in handlers for call in calls_in(handler.body)):
                return True
            region = calls_in(body)
        else:
            region = [site.node for site in retried.function.sites] if retried.function else []
        before = region[: next((i for i, call in enumerate(region) if call is retried.node), 0)]
        return any(_verifies(call) for call in before)

    def _report(self, node: cst.CSTNode, by: str) -> None:
        if id(node) in self.reported:
            return
        self.reported.add(id(node))
        self.report(
            node,
            f"this write is sent again after a timeout by {by} without checking whether the first "
            "attempt went through: a timed-out write may have been applied; look it up (status/verify "
            "call) first, or pass an idempotency key",
        )


def _on_timeout(scope: RetryScope) -> bool:
    """The scope retries timeouts by name (a catch-all is NA103's business)."""
    found = retries_on(scope)
    return found is not None and not found.everything and any(is_timeout(name) for name in found.names)


def _catches_timeout(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return False
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else None
    exprs = [el.value for el in types] if types else [handler.type]
    return any(is_timeout(dotted_name(expr) or "") for expr in exprs)


def _verifies(call: cst.Call) -> bool:
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return bool(set(word_list(name)[:2]) & _verify_verbs())
