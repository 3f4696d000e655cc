"""An OpenAI Agents SDK agent run by a scripted Model: it asks for a refund, and again after the tool fails.

The refund tool's provider books the refund and then answers too late; the
SDK's own tool timeout gives up and hands the model "Tool 'refund_payment'
timed out after 0.2 seconds." as the tool's output, and the model calls the
tool again with the same arguments, as models do: the refund is booked twice.  A second run refunds
two other orders cleanly.  Each run is one trace in a conversation group.
"""

from __future__ import annotations

import asyncio
import json
from itertools import count

from agents import Agent, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from .provider import Provider

CONVERSATIONS = {
    # group id: (user message, refunds the model asks for)
    "conv-incident": ("Please refund order 8821", [{"order_id": "8821", "amount": 4200}]),
    "conv-clean": ("Refund 7001 and 7002", [{"order_id": "7001", "amount": 1000}, {"order_id": "7002", "amount": 2500}]),
}
EXPECTED = 1
TOOL_TIMEOUT = 0.2  # seconds; the provider's late answer comes after PROVIDER_DELAY
_ids = count(1)


class ScriptedModel(Model):
    """Calls the refund tool for each order it is given, again for each failed call, then answers."""

    def __init__(self, refunds: list[dict]):
        self.refunds = refunds

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id=None, conversation_id=None, prompt=None, **kwargs):
        items = input if isinstance(input, list) else []
        arguments = {_get(i, "call_id"): json.loads(_get(i, "arguments")) for i in items
                     if _get(i, "type") == "function_call"}
        outputs = [i for i in items if _get(i, "type") == "function_call_output"]
        if not outputs:
            calls = self.refunds
        else:  # call again what failed and has not succeeded since
            succeeded = [arguments[_get(o, "call_id")] for o in outputs if str(_get(o, "output")).startswith("re_")]
            calls = [arguments[_get(o, "call_id")] for o in outputs
                     if not str(_get(o, "output")).startswith("re_") and arguments[_get(o, "call_id")] not in succeeded]
        if calls:
            output = [ResponseFunctionToolCall(type="function_call", name="refund_payment", call_id=f"call_{next(_ids)}",
                                               id=f"fc_{next(_ids)}", arguments=json.dumps(args), status="completed")
                      for args in calls]
        else:
            output = [ResponseOutputMessage(id=f"msg_{next(_ids)}", type="message", role="assistant", status="completed",
                                            content=[ResponseOutputText(type="output_text", text="Done.", annotations=[])])]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the scenarios do not stream")


def _get(item, key):
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def run(provider: Provider) -> None:
    @function_tool(timeout=TOOL_TIMEOUT)
    async def refund_payment(order_id: str, amount: int) -> str:
        """Refund an order through the payment provider."""
        return await provider.refund_async(order_id, amount)

    for group, (question, refunds) in CONVERSATIONS.items():
        agent = Agent(name="support", instructions="Refund what the customer asks for.",
                      model=ScriptedModel(refunds), tools=[refund_payment])
        asyncio.run(Runner.run(agent, question, run_config=RunConfig(group_id=group, workflow_name="support")))
    assert provider.doubles() == EXPECTED, provider.booked
