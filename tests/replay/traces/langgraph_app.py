"""A LangGraph support agent: a fake chat model asks for refunds, a ToolNode with a RetryPolicy runs them.

The refund's first answer is lost (the provider times out after booking), the
ToolNode lets the `httpx.ReadTimeout` out, and LangGraph's RetryPolicy runs
the node again: the same refund, with the same arguments, under a new parent
span, is booked a second time.  A second conversation refunds two other
orders cleanly and looks one up.
"""

from __future__ import annotations

import httpx
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import RetryPolicy

from .provider import Provider

CONVERSATIONS = {
    # thread id: (user message, tool calls the model asks for)
    "thread-incident": ("Please refund order 8821", [("refund_payment", {"order_id": "8821", "amount": 4200})]),
    "thread-clean": ("Refund 7001 and 7002, and tell me about 7003", [
        ("refund_payment", {"order_id": "7001", "amount": 1000}),
        ("refund_payment", {"order_id": "7002", "amount": 2500}),
        ("lookup_order", {"order_id": "7003"}),
    ]),
}
EXPECTED = 1  # refunds booked twice


def build(provider: Provider, model: GenericFakeChatModel):
    @tool
    def refund_payment(order_id: str, amount: int) -> str:
        """Refund an order through the payment provider."""
        return provider.refund(order_id, amount)

    @tool
    def lookup_order(order_id: str) -> str:
        """Read an order's state."""
        return f"order {order_id}: delivered"

    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([refund_payment, lookup_order], handle_tool_errors=False),
                   retry_policy=RetryPolicy(initial_interval=0.01, jitter=False, max_attempts=3,
                                            retry_on=httpx.TimeoutException))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def run(provider: Provider) -> None:
    for thread, (question, calls) in CONVERSATIONS.items():
        replies = [AIMessage(content="", tool_calls=[
            {"name": name, "args": args, "id": f"call_{thread}_{n}", "type": "tool_call"}
            for n, (name, args) in enumerate(calls)]), AIMessage(content="Done.")]
        app = build(provider, GenericFakeChatModel(messages=iter(replies)))
        app.invoke({"messages": [HumanMessage(question)]}, config={"configurable": {"thread_id": thread}})
    assert provider.doubles() == EXPECTED, provider.booked
