"""NA302 on whole agent modules: shared class attributes and their look-alikes."""

from __future__ import annotations

AGENT_CLASSES = '''\
import enum
from typing import ClassVar

from crewai.tools import BaseTool
from pydantic import BaseModel


class Tier(enum.Enum):
    STANDARD = "standard"
    GOLD = "gold"


class RefundTool(BaseTool):
    name: str = "refund"
    issued: list[str] = []

    def _run(self, order_id: str) -> str:
        self.issued.append(order_id)
        return "ok"


class RunState(BaseModel):
    steps: list[str] = []
    _by_tool: dict = {}

    def record(self, step):
        self.steps.append(step)


class SupportAgent:
    messages = []
    tools = ("lookup_order", "refund")
    handlers: ClassVar[dict] = {}

    def __init__(self, llm):
        self.llm = llm
        self.pending = []

    @classmethod
    def on(cls, handler):
        cls.handlers[handler.__name__] = handler
        return handler

    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        self.pending.append(text)
        return self.llm.invoke(self.messages)


class Retrier:
    attempts = {}

    def run(self, key, fn):
        self.attempts[key] = self.attempts.get(key, 0) + 1
        return fn()
'''


def test_agent_classes_module(lint):
    findings = lint(AGENT_CLASSES, select=["NA302"]).findings
    # Only the plain classes' body containers, mutated per call; the pydantic-based
    # tool and model fields, the Enum, the handler registry and the per-instance
    # `pending` list are fine.
    assert [(f.line, f.message.split(" (defined")[0]) for f in findings] == [
        (45, "`SupportAgent.ask()` mutates class-level list `messages`"),
        (54, "`Retrier.run()` mutates class-level dict `attempts`"),
    ]
    assert "defined at line 31) through `self`" in findings[0].message
    assert "`self.messages = ...` in `__init__`" in findings[0].message


def test_instance_assignment_anywhere_in_the_class_makes_it_instance_state(lint):
    code = (
        "class Memory:\n    turns = []\n    def add(self, t):\n        self.turns.append(t)\n"
        "    def clear(self):\n        self.turns, self.summary = [], None\n"
    )
    assert lint(code, select=["NA302"]).findings == []


def test_nested_class_attributes_belong_to_the_nested_class(lint):
    code = (
        "class Outer:\n    log = []\n    class Inner:\n        def f(self):\n            self.log.append(1)\n"
        "    def g(self):\n        self.log.append(2)\n"
    )
    assert [f.line for f in lint(code, select=["NA302"]).findings] == [7]
