"""NA202 and NA203 on a module shaped like an agent gateway: tool fan-out, a
payment call in a thread pool, and chat endpoints running a LangGraph graph."""

from __future__ import annotations

import textwrap

GATEWAY = textwrap.dedent(
    '''
    import asyncio
    import logging
    from concurrent.futures import ThreadPoolExecutor, TimeoutError as FuturesTimeout

    from fastapi import FastAPI, HTTPException
    from langgraph.graph import StateGraph

    log = logging.getLogger(__name__)
    pool = ThreadPoolExecutor(max_workers=8)
    graph = StateGraph(AgentState).compile()
    app = FastAPI()


    async def run_tools(calls, timeout=20):
        tasks = {asyncio.create_task(execute(c)): c for c in calls}
        done, pending = await asyncio.wait(tasks, timeout=timeout)
        if pending:
            log.warning("%d tool calls timed out", len(pending))
        return [t.result() for t in done]


    async def stream_results(calls):
        pending = {asyncio.create_task(execute(c)) for c in calls}
        while pending:
            done, pending = await asyncio.wait(pending, timeout=5, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                yield task.result()


    async def run_tools_cancelling(calls):
        tasks = [asyncio.create_task(execute(c)) for c in calls]
        done, pending = await asyncio.wait(tasks, timeout=20)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return [t.result() for t in done]


    def refund(order):
        fut = pool.submit(payments.refund, order.id, order.amount)
        try:
            return fut.result(timeout=10)
        except FuturesTimeout:
            log.error("refund %s timed out", order.id)
            raise HTTPException(504, "refund timed out")


    def refund_recorded(order):
        fut = pool.submit(payments.refund, order.id, order.amount)
        try:
            return fut.result(timeout=10)
        except FuturesTimeout:
            ledger.mark_unknown("refund", order.id)
            raise


    @app.post("/chat")
    async def chat(body: dict):
        try:
            return await asyncio.wait_for(graph.ainvoke(body), timeout=60)
        except asyncio.TimeoutError:
            raise HTTPException(504)


    @app.post("/chat/unbounded")
    async def chat_unbounded(body: dict):
        return await graph.ainvoke(body, config={"recursion_limit": 50})
    '''
)


def lines_of(findings, code):
    return sorted(f.line for f in findings if f.code == code)


def line_with(text: str) -> int:
    return next(i for i, line in enumerate(GATEWAY.splitlines(), 1) if text in line)


def test_abandoned_tool_tasks_and_silent_refund_timeout_are_found(lint):
    findings = lint(GATEWAY, select=["NA203"]).findings
    assert lines_of(findings, "NA203") == [
        line_with("done, pending = await asyncio.wait(tasks, timeout=timeout)"),
        line_with("return fut.result(timeout=10)"),  # the first refund: only logs and raises
    ]


def test_unbounded_agent_run_is_found_only_when_selected(lint):
    assert lines_of(lint(GATEWAY).findings, "NA202") == []
    findings = lint(GATEWAY, select=["NA202"]).findings
    assert lines_of(findings, "NA202") == [line_with('config={"recursion_limit": 50}')]
    assert "recursion" in findings[0].message
