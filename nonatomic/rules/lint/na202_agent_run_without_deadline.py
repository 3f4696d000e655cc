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
        "import asyncio\nasync def f(graph, s):\n    return await asyncio.wait_for(graph.ainvoke(s), timeout=120)\n",
        "import asyncio\nasync def f(graph, s):\n    async with asyncio.timeout(120):\n        return await graph.ainvoke(s)\n",
        "import anyio\nasync def f(graph, s):\n    with anyio.fail_after(120):\n        return await graph.ainvoke(s)\n",
        "import anyio\nasync def f(graph, s):\n    with anyio.move_on_after(120):\n        async for c in graph.astream(s):\n            yield c\n",
        (
            "import asyncio\nfrom agents import Runner\nasync def f(agent, q):\n"
            "    return await asyncio.wait_for(Runner.run(agent, q, max_turns=8), 90)\n"
        ),
        # A deadline on the whole function.
        "from timeout_decorator import timeout\n@timeout(300)\ndef f(crew):\n    return crew.kickoff()\n",
        # A spawned run that the function bounds later.
        (
            "import asyncio\nasync def f(graph, s):\n    task = asyncio.create_task(graph.ainvoke(s))\n"
            "    return await asyncio.wait_for(task, 60)\n"
        ),
        # Not agent runs: a chain, a model, a tool, a retriever.
        (
            "from langgraph.graph import StateGraph\nasync def f(chain, llm, tool, retriever, q):\n"
            "    await chain.ainvoke(q)\n    llm.invoke(q)\n    tool.invoke(q)\n    retriever.invoke(q)\n"
        ),
        # LangGraph's own implementation calling itself.
        "from langgraph.graph import StateGraph\nclass Pregel:\n    def invoke(self, x):\n        return list(self.stream(x))\n",
        # A run method delegating to the object it wraps or restores.
        "class Agent:\n    def kickoff(self, q):\n        restored = load(self)\n        return restored.kickoff(q)\n",
        # A known graph type's other methods.
        "from langgraph.graph import StateGraph\ng = StateGraph(S).compile()\ng.get_graph().draw_mermaid()\n",
    ]
    INVALID = [
        Invalid(
            "async def answer(graph, q):\n    return await graph.ainvoke({'messages': [q]}, config={'recursion_limit': 25})\n",
            line=2,
        ),
        Invalid(
            "from langgraph.graph import StateGraph\nbuilder = StateGraph(State)\napp = builder.compile()\n"
            "def handle(q):\n    return app.invoke({'q': q})\n",
            line=5,
        ),
        Invalid(
            "from langgraph.prebuilt import create_react_agent\nbot = create_react_agent(model, tools)\n"
            "async def chat(q):\n    async for chunk in bot.astream({'messages': [q]}):\n        yield chunk\n",
            line=4,
        ),
        Invalid("from agents import Runner\nasync def f(agent, q):\n    return await Runner.run(agent, q, max_turns=8)\n", line=3),
        Invalid("from agents import Runner\nresult = Runner.run_sync(agent, 'hi')\n", line=2),
        Invalid("from crewai import Crew\ncrew = Crew(agents=[a], tasks=[t])\nresult = crew.kickoff(inputs={'topic': 'x'})\n", line=3),
        Invalid("class Flow:\n    async def go(self):\n        return await self.crew().kickoff_async()\n", line=3),
        # wait_for with timeout=None sets no deadline.
        Invalid("import asyncio\nasync def f(graph, s):\n    return await asyncio.wait_for(graph.ainvoke(s), timeout=None)\n", line=3),
        Invalid(
            "import asyncio\nasync def f(self, s):\n    task = asyncio.create_task(self.agent_graph.ainvoke(s))\n    return await task\n",
            line=3,
        ),
        Invalid("from smolagents import CodeAgent\nagent = CodeAgent(tools=[], model=m, max_steps=10)\nagent.run('q')\n", line=3),
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
