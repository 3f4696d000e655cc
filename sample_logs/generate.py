"""Regenerate the sample logs: a fault-injecting simulated tool gateway plays the incident catalogue.

    python sample_logs/generate.py            # rewrites the logs next to this file
    python sample_logs/generate.py --seed 3 --out regenerated/

Each scenario is an agent run (or a few) driven through a simulated gateway
that logs with `nonatomic.guard`.  Faults are injected by the scenario (a
timeout after the provider already acted, a 503, a 403, a stall); the seed
only draws latencies and backoff jitter, so every seed produces the same
incidents and the same findings (`expected_findings.yaml`), and one seed
produces the same bytes on every machine.  The clock is simulated: no
wall-clock time reaches the logs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from nonatomic.guard import GuardLog, Operation, Task

DEFAULT_SEED = 7
START = datetime(2024, 5, 14, 9, 0, tzinfo=timezone.utc).timestamp()
CLIENT_TIMEOUT_S = 10.0
TIMEOUT = "timeout"
"""A fault: the provider acts, but its answer comes after the gateway stopped waiting."""


class Gateway:
    """Tool calls against simulated providers, logged as a real gateway would log them.

    `landed` counts the effects that really happened at the providers, which
    the log cannot show: a `verify` reads it, as a status lookup would.
    """

    def __init__(self, sink, start: float, seed: str) -> None:
        self.now = start
        self.rng = random.Random(seed)
        self.guard = GuardLog(sink, clock=lambda: self.now)
        self.landed: Counter = Counter()

    def wait(self, seconds: float, jitter: float = 0.1) -> None:
        self.now += seconds * (1 + self.rng.uniform(-jitter, jitter))

    def latency(self) -> float:
        return self.rng.uniform(0.08, 0.45)

    def begin(self, task: Task, tool: str, target: str, op: str = "call", **numbering) -> Operation:
        return getattr(task, op)(tool, target, **numbering).start()

    def finish(self, handle: Operation, fault=None, latency: float | None = None) -> str:
        """End a call with its outcome: ok, the injected status code, or TIMEOUT."""
        if fault == TIMEOUT:
            self.now += CLIENT_TIMEOUT_S
            self.landed[handle.tool, handle.target] += 1
            handle.end("timeout", error="ReadTimeout")
            return handle.status
        self.now += self.latency() if latency is None else latency
        if fault is not None:
            handle.end("error", code=fault, error="Forbidden" if fault == 403 else "ServiceUnavailable")
        else:
            if handle.op == "call":
                self.landed[handle.tool, handle.target] += 1
            handle.end("ok", code=200)
        return handle.status

    def call(self, task: Task, tool: str, target: str, fault=None, **numbering) -> str:
        return self.finish(self.begin(task, tool, target, **numbering), fault)

    def verify(self, task: Task, tool: str, target: str, of: str) -> bool:
        """A status lookup of the write `of` on `target`: did it land?"""
        self.call(task, tool, target, op="verify")
        return self.landed[of, target] > 0


# -- the incident catalogue ----------------------------------------------------------------------
# Each scenario plays on a gateway; the comments say what goes wrong, the golden file what replay finds.

def duplicate_refund(gw: Gateway) -> None:
    """A refund times out after the provider refunded; the agent retries without asking."""
    task = gw.guard.task("support-7f3a21", agent="support").start()
    gw.call(task, "get_order", "order:8821")
    gw.call(task, "refund_payment", "order:8821", fault=TIMEOUT)
    gw.wait(2.0)  # tenacity's fixed wait, then the same refund again, no idempotency key
    gw.call(task, "refund_payment", "order:8821")
    gw.call(task, "send_email", "customer:5512")
    task.end("completed")


def double_booking(gw: Gateway) -> None:
    """The payment step fails and the orchestrator reruns the whole flow, booking again."""
    task = gw.guard.task("travel-2c9e04", agent="travel").start()
    for fault in (503, None):
        gw.call(task, "search_flights", "route:FRA-JFK", step=1)
        gw.call(task, "create_booking", "trip:88412", step=2)
        gw.call(task, "charge_card", "trip:88412", fault=fault, step=3)
        gw.wait(1.5)
    task.end("completed")


def retry_rollback_race(gw: Gateway) -> None:
    """A charge times out; the saga compensates while the retry policy charges again."""
    task = gw.guard.task("orders-5d1b77", agent="fulfilment").start()
    gw.call(task, "reserve_inventory", "sku:KB-204")
    charge = gw.begin(task, "charge_card", "order:40917")
    gw.finish(charge, TIMEOUT)
    gw.wait(0.4)
    void = gw.begin(task, "void_charge", "order:40917", op="rollback")
    gw.wait(0.6)  # the retry policy fires while the void is in flight
    gw.call(task, "charge_card", "order:40917")
    gw.finish(void)
    gw.call(task, "release_inventory", "sku:KB-204", op="rollback")
    task.end("failed")


def zombie_after_504(gw: Gateway) -> None:
    """The web handler answers 504 at 60 s but never cancels the run, which goes on writing."""
    first = gw.guard.task("orders-9a0c13", agent="orders").start()
    gw.call(first, "get_order", "order:7730")
    update = gw.begin(first, "update_order", "order:7730")
    gw.wait(58.0, jitter=0)
    first.end("timeout", code=504)
    gw.wait(1.0)  # the user clicks again: a second run of the same request
    second = gw.guard.task("orders-b41e6f", agent="orders").start()
    gw.call(second, "get_order", "order:7730")
    gw.call(second, "update_order", "order:7730")
    gw.call(second, "send_email", "customer:2291")
    second.end("completed")
    gw.wait(2.0)  # the slow backend answers the first run, which carries on
    gw.finish(update)
    gw.call(first, "send_email", "customer:2291")


def lock_leak_after_timeout(gw: Gateway) -> None:
    """A session lock without TTL is released on the success path only; a timeout leaks it."""
    first = gw.guard.task("billing-3e77d0", agent="billing").start()
    first.acquire("lock:customer:4410", owner="worker-2:3e77d0")
    gw.call(first, "get_invoice", "invoice:INV-2291")
    gw.call(first, "update_subscription", "sub:4410", fault=TIMEOUT)
    first.end("timeout", code=504)
    gw.wait(120.0)
    second = gw.guard.task("billing-8f02aa", agent="billing").start()
    second.acquire("lock:customer:4410", owner="worker-5:8f02aa", status="error")
    second.end("failed", code=423)


def verification_email_restart(gw: Gateway) -> None:
    """The worker dies after sending the email and before its checkpoint; the resumed run sends it again."""
    task = gw.guard.task("signup-61c2e9", agent="signup", worker="worker-a").start()
    gw.call(task, "create_account", "user:ana.souza", idempotency_key="signup-61c2e9-account")
    gw.call(task, "send_verification_email", "email:ana.souza@example.com")
    gw.wait(45.0)  # crash, restart, resume from the checkpoint after step 1 with fresh counters
    resumed = gw.guard.task("signup-61c2e9", agent="signup", worker="worker-b").start()
    gw.call(resumed, "send_verification_email", "email:ana.souza@example.com", step=2)
    gw.call(resumed, "get_inbox_status", "email:ana.souza@example.com", step=3)
    resumed.end("completed")


def retry_storm(gw: Gateway) -> None:
    """A hand-written retry loop with no sleep hammers an SMS provider that answers 503."""
    task = gw.guard.task("notify-0b5f48", agent="notifications").start()
    for _ in range(5):
        handle = gw.begin(task, "send_sms", "phone:+4915550123")
        gw.finish(handle, 503, latency=gw.rng.uniform(0.004, 0.02))
    task.end("failed")


def retried_403(gw: Gateway) -> None:
    """A permission grant is refused with 403 and retried with backoff, as if it could succeed."""
    task = gw.guard.task("access-c7d912", agent="access").start()
    gw.call(task, "get_user", "user:jmartin")
    for n in range(3):
        gw.call(task, "grant_permission", "repo:payments-api", fault=403)
        gw.wait(2.0 ** n)
    task.end("failed")


def clean_runs(gw: Gateway) -> None:
    """The same flows done right: verify before retry, stable keys, backoff, locks released, no 4xx retry."""
    support = gw.guard.task("support-e81c40", agent="support").start()
    gw.call(support, "refund_payment", "order:9014", fault=TIMEOUT)
    if not gw.verify(support, "get_refund", "order:9014", of="refund_payment"):
        gw.call(support, "refund_payment", "order:9014")
    gw.call(support, "send_email", "customer:6120")
    support.end("completed")

    travel = gw.guard.task("travel-4a7d19", agent="travel").start()
    gw.call(travel, "create_booking", "trip:90233", fault=503, idempotency_key="trip-90233-booking")
    gw.wait(0.8)
    gw.call(travel, "create_booking", "trip:90233", idempotency_key="trip-90233-booking")
    gw.call(travel, "charge_card", "trip:90233", idempotency_key="trip-90233-charge")
    travel.end("completed")

    billing = gw.guard.task("billing-c0be52", agent="billing").start()
    with billing.lock("lock:customer:5120", owner="worker-1:c0be52", ttl_ms=30_000):
        gw.call(billing, "update_subscription", "sub:5120")
    billing.end("completed")

    access = gw.guard.task("access-19f3aa", agent="access").start()
    gw.call(access, "grant_permission", "repo:billing-api", fault=403)
    access.end("failed", code=403)

    notify = gw.guard.task("notify-77d2e5", agent="notifications").start()
    for n, fault in enumerate((503, 503, None)):
        gw.call(notify, "send_sms", "phone:+4915550188", fault=fault)
        gw.wait(0.2 * 2 ** n, jitter=0.25)
    notify.end("completed")


def invoice_workers(gw: Gateway) -> None:
    """A worker stalls past its lock's TTL, then deletes the lock another worker holds."""
    a = gw.guard.task("invoice-run-a", worker="worker-a").start()
    a.acquire("lock:invoice:31", owner="worker-a", ttl_ms=10_000)
    stalled = gw.begin(a, "update_invoice", "invoice:31")
    gw.wait(11.0, jitter=0.02)  # a long GC pause: the lease expires under it
    b = gw.guard.task("invoice-run-b", worker="worker-b").start()
    b.acquire("lock:invoice:31", owner="worker-b", ttl_ms=10_000)
    b_write = gw.begin(b, "update_invoice", "invoice:31")
    gw.wait(1.2)
    gw.finish(stalled)
    a.release("lock:invoice:31", owner="worker-a")  # a plain DEL in `finally`: releases B's lock
    a.end("completed")
    gw.wait(0.3)
    c = gw.guard.task("invoice-run-c", worker="worker-c").start()
    c.acquire("lock:invoice:31", owner="worker-c", ttl_ms=10_000)  # gets in while B is mid-write
    gw.finish(b_write, latency=0.5)
    b.release("lock:invoice:31", owner="worker-b")
    b.end("completed")
    gw.call(c, "update_invoice", "invoice:31")
    c.release("lock:invoice:31", owner="worker-c")
    c.end("completed")


SCENARIOS = {
    "duplicate_refund.jsonl": duplicate_refund,
    "double_booking.jsonl": double_booking,
    "retry_rollback_race.jsonl": retry_rollback_race,
    "zombie_after_504.jsonl": zombie_after_504,
    "lock_leak_after_timeout.jsonl": lock_leak_after_timeout,
    "verification_email_restart.jsonl": verification_email_restart,
    "retry_storm.jsonl": retry_storm,
    "retried_403.jsonl": retried_403,
    "clean_runs.jsonl": clean_runs,
}
"""Canonical guard logs: file name -> scenario."""

# -- a gateway with its own log shape (read with foreign/mapping.yaml) ---------------------------

FOREIGN_FIELDS = {"ts": "timestamp", "task_id": "trace_id", "step": "step_no", "attempt": "try",
                  "op": "action", "phase": "edge", "status": "result", "target": "resource",
                  "owner": "holder", "ttl_ms": "lease_ms", "tool": "fn", "seq": "n"}
FOREIGN_VALUES = {"op": {"call": "invoke", "lock_acquire": "acquire", "lock_release": "release",
                         "task_start": "begin", "task_end": "finish"},
                  "phase": {"start": "enter", "end": "exit"},
                  "status": {"ok": "success", "started": "running", "completed": "done"}}
"""Canonical -> theirs; foreign/mapping.yaml is the inverse."""


def foreign_shape(line: str) -> str:
    """A canonical event in the other gateway's shape: its names, its values, epoch-millisecond times."""
    event = json.loads(line)
    moment = datetime.fromisoformat(event["ts"].replace("Z", "+00:00"))
    event["ts"] = round(moment.timestamp() * 1000)
    shaped = {FOREIGN_FIELDS.get(k, k): FOREIGN_VALUES.get(k, {}).get(v, v) for k, v in event.items()}
    return json.dumps(shaped, separators=(",", ":"))


# -- OpenTelemetry: GenAI tool-execution spans (read with --input-format otlp) ------------------

def otlp_traces(rng: random.Random, start: float) -> list[dict]:
    """TracesData batches of an agent instrumented with OpenTelemetry instead of nonatomic.guard.

    A support conversation whose refund span times out and is re-run with the
    same arguments, and a trace with no conversation id whose email the HTTP
    client resends after a 503.
    """
    clock = [start]

    def span(trace, parent, name, seconds, attributes, error=None):
        begin = clock[0]
        clock[0] += seconds
        record = {"traceId": trace, "spanId": rng.randbytes(8).hex(), "name": name, "kind": 1,
                  "startTimeUnixNano": str(round(begin * 1e9)), "endTimeUnixNano": str(round(clock[0] * 1e9)),
                  "attributes": [{"key": k, "value": _any_value(v)} for k, v in attributes.items()],
                  "status": {"code": 2, "message": error} if error else {}}
        if parent:
            record["parentSpanId"] = parent["spanId"]
        clock[0] += rng.uniform(0.15, 0.4)  # think time: more than the minimum backoff
        return record

    def tool(trace, parent, name, seconds, arguments, error=None, **attributes):
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                      "gen_ai.tool.call.id": "call_" + rng.randbytes(6).hex(),
                      "gen_ai.tool.call.arguments": json.dumps(arguments, sort_keys=True), **attributes}
        if error:
            attributes["error.type"] = error
        return span(trace, parent, f"execute_tool {name}", seconds, attributes, error)

    # Trace ids name a task in the golden findings, so they do not depend on the seed.
    support, mailer = (hashlib.md5(name.encode()).hexdigest() for name in ("support", "mailer"))
    root = span(support, None, "invoke_agent support", 0.0,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-support-0415"})
    order = {"order_id": "8821"}
    support_spans = [  # only the agent span carries the conversation id: tool spans inherit it
        root,
        span(support, root, "chat gpt-4o", 1.4, {"gen_ai.operation.name": "chat"}),
        tool(support, root, "lookup_order", 0.2, order),
        tool(support, root, "refund_payment", CLIENT_TIMEOUT_S, {**order, "amount_cents": 4999}, error="TimeoutError"),
        tool(support, root, "refund_payment", 0.4, {**order, "amount_cents": 4999}),
    ]
    mail_root = span(mailer, None, "invoke_agent notifications", 0.0, {"gen_ai.operation.name": "invoke_agent"})
    receipt = {"to": "customer:5512", "template": "refund_receipt"}
    mailer_spans = [
        mail_root,
        tool(mailer, mail_root, "send_email", 0.3, receipt, error="503",
             **{"http.request.resend_count": 0, "http.response.status_code": 503}),
        tool(mailer, mail_root, "send_email", 0.3, receipt,
             **{"http.request.resend_count": 1, "http.response.status_code": 202}),
    ]
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "agent-gateway"}}]}
    scope = {"name": "opentelemetry.instrumentation.openai_agents", "version": "0.1.0"}
    return [{"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}]}
            for spans in (support_spans[:3], support_spans[3:], mailer_spans)]


def _any_value(value) -> dict:
    # OTLP/JSON: 64-bit integers are strings; the rest keep their JSON type.
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


# -- writing --------------------------------------------------------------------------------------

def generate(out: Path, seed: int = DEFAULT_SEED) -> list[Path]:
    """Write every sample log under `out`; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for n, (name, scenario) in enumerate(SCENARIOS.items()):
        path = out / name
        path.unlink(missing_ok=True)
        gateway = Gateway(path, START + n * 900, f"{seed}:{name}")
        scenario(gateway)
        gateway.guard.close()
        if gateway.guard.dropped:  # the emitter never raises; a sample log must not miss a line
            raise RuntimeError(f"{path}: {gateway.guard.dropped} event(s) not written: {gateway.guard.last_error}")
        written.append(path)

    lines: list[str] = []
    gateway = Gateway(lines.append, START + len(SCENARIOS) * 900, f"{seed}:foreign")
    invoice_workers(gateway)
    written.append(_write(out / "foreign" / "invoice_workers.jsonl", map(foreign_shape, lines)))

    batches = otlp_traces(random.Random(f"{seed}:otlp"), START + (len(SCENARIOS) + 1) * 900)
    written.append(_write(out / "otlp" / "agent_traces.jsonl",
                          (json.dumps(batch, separators=(",", ":")) for batch in batches)))
    return written


def _write(path: Path, lines) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    for path in generate(args.out, args.seed):
        print(path)


if __name__ == "__main__":
    main()
