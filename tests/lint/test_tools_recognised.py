"""Which functions are tools: the decorators, wrappers and agent tool lists of the
frameworks, as their users write them, and their MCP annotations."""

from __future__ import annotations

from textwrap import dedent

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from nonatomic.rules.lint.semantics.retry import RetryProvider


def _model(source: str):
    wrapper = MetadataWrapper(cst.parse_module(dedent(source)))
    return wrapper.resolve(RetryProvider)[wrapper.module]


def _tools(source: str) -> dict[str, str | None]:
    return {name: group[-1].tool_name for name, group in _model(source).functions.items()}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # FastMCP, its server built here or imported; the low-level server's dispatcher.
        ("from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n@mcp.tool()\ndef refund(o): ...\n", "refund"),
        ("from app import mcp\n@mcp.tool\ndef refund(o): ...\n", "refund"),
        ("from app import mcp\n@mcp.tool(name='issue_refund')\ndef refund(o): ...\n", "issue_refund"),
        ("from mcp.server import Server\nserver = Server('x')\n@server.call_tool()\nasync def handle(name, args): ...\n",
         "handle"),
        # pydantic-ai, Semantic Kernel, Strands / smolagents / CrewAI `@tool`.
        ("from pydantic_ai import Agent\nagent = Agent('m')\n@agent.tool_plain\ndef send_email(to): ...\n", "send_email"),
        ("from semantic_kernel.functions import kernel_function\n@kernel_function(name='book')\ndef book(s): ...\n",
         "book"),
        ("from strands import tool\n@tool\ndef post_message(text): ...\n", "post_message"),
        ("from crewai.tools import tool\n@tool('Refund payment')\ndef refund(o): ...\n", "Refund payment"),
        # Wrappers: ADK and AutoGen FunctionTool, LlamaIndex from_defaults, LangChain from_function.
        ("from google.adk.tools import FunctionTool\ndef refund(o): ...\nt = FunctionTool(refund)\n", "refund"),
        ("from autogen_core.tools import FunctionTool\ndef refund(o): ...\nt = FunctionTool(refund, description='r')\n",
         "refund"),
        ("from llama_index.core.tools import FunctionTool\ndef refund(o): ...\n"
         "t = FunctionTool.from_defaults(fn=refund, name='issue_refund')\n", "issue_refund"),
        ("from langchain_core.tools import StructuredTool\ndef refund(o): ...\nt = StructuredTool.from_function(func=refund)\n",
         "refund"),
        # A plain function in an agent's tools.
        ("from agents import Agent\ndef refund(o): ...\nagent = Agent(name='a', tools=[refund])\n", "refund"),
    ],
)
def test_framework_tools_are_recognised(source, expected):
    assert expected in _tools(source).values()


@pytest.mark.parametrize(
    "source",
    [
        "import pytest\n@pytest.mark.tool\ndef test_refund(): ...\n",  # a module the registry knows is no framework
        "@app.route('/refund')\ndef refund(o): ...\n",
        "def refund(o): ...\nrefund(1)\n",
    ],
)
def test_look_alikes_are_not_tools(source):
    assert set(_tools(source).values()) == {None}


def test_mcp_annotations_are_read_from_the_decorator():
    source = """
        from mcp.server.fastmcp import FastMCP
        from mcp.types import ToolAnnotations
        mcp = FastMCP("x")

        @mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False))
        def find(q): ...

        @mcp.tool(annotations={"idempotentHint": True})
        def upsert(q): ...
    """
    model = _model(source)
    hints = {name: {k: cst.Module([]).code_for_node(v) for k, v in group[-1].hints.items()}
             for name, group in model.functions.items()}
    assert hints == {"find": {"readOnlyHint": "True", "destructiveHint": "False"}, "upsert": {"idempotentHint": "True"}}
