"""Which calls run a whole agent (many model and tool calls), and what bounds them in time.

An agent run is recognised from its callee as `CalleeProvider` resolves it:
a compiled LangGraph graph or `create_react_agent` result (`invoke`,
`ainvoke`, `stream`, `astream`), a LangChain `AgentExecutor`, a CrewAI `Crew`
(`kickoff*`), the OpenAI Agents SDK's `Runner.run*`, a smolagents agent's or
a pydantic-ai `Agent`'s `run*`.  When the receiver's type is unknown (a graph
compiled in another module, `self.graph`), `invoke`/`ainvoke`/`stream`/`astream`
count when the receiver is named like an agent (its words include graph,
agent, workflow, supervisor or swarm), and `kickoff*` always (only CrewAI
has it).
"""

from __future__ import annotations

import libcst as cst

from nonatomic.rules.lint.semantics import calls
from nonatomic.rules.lint.semantics.callees import dotted_name, source
from nonatomic.rules.lint.semantics.names import words

_GRAPH_RUNS = frozenset({"invoke", "ainvoke", "stream", "astream"})
_KICKOFFS = frozenset(
    {"kickoff", "kickoff_async", "akickoff", "kickoff_for_each", "kickoff_for_each_async", "akickoff_for_each"}
)
RUN_METHODS = {
    "langgraph.CompiledGraph": _GRAPH_RUNS,
    "langchain.agents.AgentExecutor": _GRAPH_RUNS | {"run", "arun"},
    "crewai.Crew": _KICKOFFS,
    "smolagents.MultiStepAgent": frozenset({"run"}),
    "pydantic_ai.Agent": frozenset({"run", "run_sync", "run_stream", "iter"}),
}
RUN_METHOD_NAMES = frozenset().union(*RUN_METHODS.values())
RUN_FUNCTIONS = frozenset(
    {f"{module}.Runner.{method}" for module in ("agents", "agents.run") for method in ("run", "run_sync", "run_streamed")}
)
_AGENT_WORDS = frozenset({"graph", "agent", "workflow", "supervisor", "swarm"})
# Deadlines: context managers and wrappers that cancel what runs inside them in time.
_DEADLINE_NAMES = frozenset({"fail_after", "fail_at", "move_on_after", "move_on_at"})
_WAIT_FOR_TIMEOUT_POSITION = 1


def agent_run(call: cst.Call, callee: str | None) -> str | None:
    """How to show `call` in a message if it runs an agent, else None."""
    if callee in RUN_FUNCTIONS:
        return source(call.func)
    if not isinstance(call.func, cst.Attribute):
        return None
    method = call.func.attr.value
    if callee is not None:
        owner = callee.rsplit(".", 1)[0]
        if method in RUN_METHODS.get(owner, ()):
            return source(call.func)
        if owner in RUN_METHODS:
            return None
    receiver = call.func.value
    if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
        return None  # the framework's own methods delegating to each other
    if method in _KICKOFFS:
        return source(call.func)
    if method in _GRAPH_RUNS:
        if isinstance(receiver, cst.Call):
            receiver = receiver.func
        name = dotted_name(receiver)
        if name is not None and words(name.rsplit(".", 1)[-1]) & _AGENT_WORDS:
            return source(call.func)
    return None


def is_deadline(call: cst.Call) -> bool:
    """Whether `call` (a context manager, a wrapper or a decorator) puts a time limit on what it wraps."""
    name = dotted_name(call.func)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1].lower()
    if last == "wait_for":
        timeout = calls.argument(call, ("timeout",), _WAIT_FOR_TIMEOUT_POSITION)
        return timeout is not None and not calls.is_none(timeout.value)
    if last in _DEADLINE_NAMES or "timeout" in last or "deadline" in last:
        first = call.args[0].value if call.args else None
        return first is None or not calls.is_none(first)
    return False
