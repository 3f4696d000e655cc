from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from nonatomic.rules.lint.base import Invalid, LintRule
from nonatomic.rules.lint.semantics.agents import (
    RUN_METHOD_NAMES,
    agent_run,
    is_deadline,
)
from nonatomic.rules.lint.semantics.callees import CalleeProvider, dotted_name

_SPAWNS = frozenset({"create_task", "ensure_future"})


@dataclass
class _Frame:
    bounded: bool  # the function as a whole has a deadline (a decorator)
    has_deadline: bool = False  # a deadline appears somewhere in it
    spawned_runs: list[tuple[cst.Call, str]] = field(default_factory=list)


class AgentRunWithoutDeadline(LintRule):
    """
    ## What it does
    Flags an agent run with no overall deadline: `ainvoke`/`invoke`/`astream`
    of a compiled LangGraph graph or `create_react_agent`, a LangChain
    `AgentExecutor`, the OpenAI Agents SDK's `Runner.run`/`run_sync`/
    `run_streamed`, CrewAI's `crew.kickoff`/`kickoff_async`, a smolagents or
    pydantic-ai agent's `run`, when it is not inside `asyncio.wait_for(...,
    timeout)`, `async with asyncio.timeout(...)`, `anyio.fail_after` /
    `move_on_after` (or any wrapper, context manager or decorator named like a
    timeout or deadline). A run handed to `asyncio.create_task` is accepted
    when its function applies a deadline somewhere, and a run method that
    delegates to another run (`def ainvoke(self, ...): return await
    self._graph.ainvoke(...)`) leaves the deadline to its own caller.

    A `recursion_limit`, `max_turns` or `max_steps` is not a deadline: it
    bounds the number of steps, not the time one slow step or a slow model may
    take.

    Off by default: the deadline is often applied by a caller in another
    module, which a linter of one file cannot see.

    ## Why is this bad?
    Each step of a run has its own timeouts, but nothing bounds the run: a
    model that keeps calling tools, a queue in front of the model, a tool
    retried ten times each add up. The HTTP layer gives up first and returns
    504 while the run goes on holding its session lock and writing state. One
    real incident: a support agent looped for 20 minutes between two tools;
    the gateway had timed out after 60 s, the user retried, and two runs
    edited the same ticket.

    ## Example
    ```python
    async def answer(graph, question):
        return await graph.ainvoke({"messages": [question]}, config={"recursion_limit": 25})
    ```

    ## Use instead
    ```python
    async def answer(graph, question):
        async with asyncio.timeout(120):
            return await graph.ainvoke({"messages": [question]}, config={"recursion_limit": 25})
    ```
    """

    code = "NA202"
    METADATA_DEPENDENCIES = (CalleeProvider,)

    VALID = [
        """
        import asyncio
        async def f(graph, s):
            return await asyncio.wait_for(graph.ainvoke(s), timeout=120)
        """,
        """
        import asyncio
        async def f(graph, s):
            async with asyncio.timeout(120):
                return await graph.ainvoke(s)
        """,
        """
        import anyio
        async def f(graph, s):
            with anyio.fail_after(120):
                return await graph.ainvoke(s)
        """,
        """
        import anyio
        async def f(graph, s):
            with anyio.move_on_after(120):
                async for c in graph.astream(s):
                    yield c
        """,
        """
            import asyncio
            from agents import Runner
            async def f(agent, q):
                return await asyncio.wait_for(Runner.run(agent, q, max_turns=8), 90)
            """,
        # A deadline on the whole function.
        """
        from timeout_decorator import timeout
        @timeout(300)
        def f(crew):
            return crew.kickoff()
        """,
        # A spawned run that the function bounds later.
        """
            import asyncio
            async def f(graph, s):
                task = asyncio.create_task(graph.ainvoke(s))
                return await asyncio.wait_for(task, 60)
            """,
        # Not agent runs: a chain, a model, a tool, a retriever.
        """
            from langgraph.graph import StateGraph
            async def f(chain, llm, tool, retriever, q):
                await chain.ainvoke(q)
                llm.invoke(q)
                tool.invoke(q)
                retriever.invoke(q)
            """,
        # LangGraph's own implementation calling itself.
        """
        from langgraph.graph import StateGraph
        class Pregel:
            def invoke(self, x):
                return list(self.stream(x))
        """,
        # A run method delegating to the object it wraps or restores.
        """
        class Agent:
            def kickoff(self, q):
                restored = load(self)
                return restored.kickoff(q)
        """,
        # A known graph type's other methods.
        """
        from langgraph.graph import StateGraph
        g = StateGraph(S).compile()
        g.get_graph().draw_mermaid()
        """,
    ]
    INVALID = [
        Invalid(
            """
            async def answer(graph, q):
                return await graph.ainvoke({'messages': [q]}, config={'recursion_limit': 25})
            """,
            line=2,
        ),
        Invalid(
            """
            from langgraph.graph import StateGraph
            builder = StateGraph(State)
            app = builder.compile()
            def handle(q):
                return app.invoke({'q': q})
            """,
            line=5,
        ),
        Invalid(
            """
            from langgraph.prebuilt import create_react_agent
            bot = create_react_agent(model, tools)
            async def chat(q):
                async for chunk in bot.astream({'messages': [q]}):
                    yield chunk
            """,
            line=4,
        ),
        Invalid("""
            from agents import Runner
            async def f(agent, q):
                return await Runner.run(agent, q, max_turns=8)
            """, line=3),
        Invalid("""
            from agents import Runner
            result = Runner.run_sync(agent, 'hi')
            """, line=2),
        Invalid("""
            from crewai import Crew
            crew = Crew(agents=[a], tasks=[t])
            result = crew.kickoff(inputs={'topic': 'x'})
            """, line=3),
        Invalid("""
            class Flow:
                async def go(self):
                    return await self.crew().kickoff_async()
            """, line=3),
        # wait_for with timeout=None sets no deadline.
        Invalid("""
            import asyncio
            async def f(graph, s):
                return await asyncio.wait_for(graph.ainvoke(s), timeout=None)
            """, line=3),
        Invalid(
            """
            import asyncio
            async def f(self, s):
                task = asyncio.create_task(self.agent_graph.ainvoke(s))
                return await task
            """,
            line=3,
        ),
        Invalid("""
            from smolagents import CodeAgent
            agent = CodeAgent(tools=[], model=m, max_steps=10)
            agent.run('q')
            """, line=3),
    ]

    def __init__(self, context=None) -> None:
        super().__init__(context)
        self.frames: list[_Frame] = [_Frame(bounded=False)]
        self.deadlines: list[cst.CSTNode] = []  # enclosing deadline calls and with-blocks
        self.spawned: set[cst.Call] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # A run method that hands over to another run (`def ainvoke(...): return await
        # self._graph.ainvoke(...)`) leaves the deadline to its own caller.
        bounded = node.name.value in RUN_METHOD_NAMES or any(
            isinstance(d.decorator, cst.Call) and is_deadline(d.decorator) for d in node.decorators
        )
        self.frames.append(_Frame(bounded=bounded or self.frames[-1].bounded))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        frame = self.frames.pop()
        if not frame.has_deadline:
            for call, shown in frame.spawned_runs:
                self._report(call, shown)

    def visit_With(self, node: cst.With) -> None:
        if any(isinstance(item.item, cst.Call) and is_deadline(item.item) for item in node.items):
            self._enter_deadline(node)

    def leave_With(self, original_node: cst.With) -> None:
        self._leave_deadline(original_node)

    def visit_Call(self, node: cst.Call) -> None:
        if is_deadline(node):
            self._enter_deadline(node)
            return
        name = dotted_name(node.func)
        if name is not None and name.rsplit(".", 1)[-1] in _SPAWNS and node.args:
            inner = node.args[0].value
            if isinstance(inner, cst.Call):
                self.spawned.add(inner)
        shown = agent_run(node, self.get_metadata(CalleeProvider, node, None))
        if shown is None or self.deadlines or self.frames[-1].bounded:
            return
        if node in self.spawned:
            self.frames[-1].spawned_runs.append((node, shown))
        else:
            self._report(node, shown)

    def leave_Call(self, original_node: cst.Call) -> None:
        self._leave_deadline(original_node)

    def _enter_deadline(self, node: cst.CSTNode) -> None:
        self.deadlines.append(node)
        self.frames[-1].has_deadline = True

    def _leave_deadline(self, node: cst.CSTNode) -> None:
        if self.deadlines and self.deadlines[-1] is node:
            self.deadlines.pop()

    def _report(self, node: cst.Call, shown: str) -> None:
        self.report(
            node,
            f"`{shown}(...)` runs an agent with no overall deadline: a looping or stuck run keeps "
            "calling tools and holding its session after the caller gave up; wrap it in "
            "`asyncio.timeout(...)` / `asyncio.wait_for` (a recursion or turn limit bounds steps, not time)",
        )
