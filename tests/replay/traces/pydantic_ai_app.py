"""A pydantic-ai agent driven by a FunctionModel: the refund tool turns the provider's timeout into ModelRetry.

`ModelRetry` is pydantic-ai's way for a tool to ask the model to try again;
the model calls the tool again with the same arguments, and the refund that
was booked before the timeout is booked a second time.  A second
conversation refunds two other orders cleanly.  Runs carry their
conversation id; the agent's own OpenTelemetry instrumentation writes the
spans, in the instrumentation version given.
"""

from __future__ import annotations

import json

import httpx
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from .provider import Provider

CONVERSATIONS = {
    "conv-incident": ("Please refund order 8821", [{"order_id": "8821", "amount": 4200}]),
    "conv-clean": ("Refund 7001 and 7002", [{"order_id": "7001", "amount": 1000}, {"order_id": "7002", "amount": 2500}]),
}
EXPECTED = 1


def scripted(refunds: list[dict]):
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts
        if not any(isinstance(p, (ToolReturnPart, RetryPromptPart)) for p in last):
            return ModelResponse(parts=[ToolCallPart("refund_payment", json.dumps(args)) for args in refunds])
        calls = {p.tool_call_id: p.args for m in messages for p in m.parts if isinstance(p, ToolCallPart)}
        again = [calls[p.tool_call_id] for p in last if _retried(p)]
        if again:
            return ModelResponse(parts=[ToolCallPart("refund_payment", args) for args in again])
        return ModelResponse(parts=[TextPart("Done.")])
    return FunctionModel(respond)


def _retried(part) -> bool:
    # older releases answer ModelRetry with a RetryPromptPart, newer ones with a ToolReturnPart marked retried
    return isinstance(part, RetryPromptPart) or getattr(part, "outcome", None) == "retried"


def run(provider: Provider, tracer_provider, version: int) -> None:
    for conversation, (question, refunds) in CONVERSATIONS.items():
        settings = InstrumentationSettings(tracer_provider=tracer_provider, version=version)
        agent = Agent(scripted(refunds), retries=2, capabilities=[Instrumentation(settings=settings)])

        @agent.tool_plain
        def refund_payment(order_id: str, amount: int) -> str:
            """Refund an order through the payment provider."""
            try:
                return provider.refund(order_id, amount)
            except httpx.TimeoutException as exc:
                raise ModelRetry(f"the payment provider timed out ({exc}); try again") from exc

        agent.run_sync(question, conversation_id=conversation)
    assert provider.doubles() == EXPECTED, provider.booked
