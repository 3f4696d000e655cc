"""Each pipeline: a real agent framework with the instrumentation users install, its spans written as a file.

`PIPELINES` names every pipeline; `record(name)` runs it once per process
(the packages it needs are imported there, so a test skips cleanly without
them; an instrumentation patches its framework for the whole process, and
some cannot patch it again once removed) and keeps the finished spans, which
`Recording.write` writes in any shape of export.py.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import export
from .provider import Provider

INCIDENT_ORDER = "8821"


@dataclass(frozen=True)
class Recording:
    name: str
    batches: list  # the spans of each export call
    doubles: int   # refunds the provider booked twice: the incidents the replay must find

    @property
    def spans(self) -> list:
        return [span for batch in self.batches for span in batch]

    @property
    def tool_spans(self) -> list:
        """Ground truth from the SDK's own span objects, each convention's marker as its instrumentation sets it."""
        return [span for span in self.spans if _is_tool(span)]

    def write(self, directory: Path, shape: str = "collector") -> Path:
        path = directory / f"{self.name}{export.suffix(shape)}"
        path.write_bytes(export.render(self.batches, shape))
        return path


def _langgraph(instrumentor_module: str, instrumentor: str, tracer_provider) -> Provider:
    pytest.importorskip("langgraph")
    module = pytest.importorskip(instrumentor_module)
    from . import langgraph_app

    instrumentation = getattr(module, instrumentor)()
    instrumentation.instrument(tracer_provider=tracer_provider)
    try:
        provider = Provider({INCIDENT_ORDER})
        langgraph_app.run(provider)
    finally:
        instrumentation.uninstrument()
    return provider


def _langgraph_openinference(tracer_provider) -> Provider:
    return _langgraph("openinference.instrumentation.langchain", "LangChainInstrumentor", tracer_provider)


def _langgraph_openllmetry(tracer_provider) -> Provider:
    return _langgraph("opentelemetry.instrumentation.langchain", "LangchainInstrumentor", tracer_provider)


def _agents_openinference(tracer_provider) -> Provider:
    pytest.importorskip("agents")
    module = pytest.importorskip("openinference.instrumentation.openai_agents")
    from agents.tracing import set_trace_processors

    from . import agents_app

    set_trace_processors([])  # no export to the vendor's backend: only the OTel spans
    instrumentation = module.OpenAIAgentsInstrumentor()
    instrumentation.instrument(tracer_provider=tracer_provider)
    try:
        provider = Provider({INCIDENT_ORDER})
        agents_app.run(provider)
    finally:
        instrumentation.uninstrument()
    return provider


def _pydantic_ai(version: int):
    def pipeline(tracer_provider) -> Provider:
        pytest.importorskip("pydantic_ai")
        from . import pydantic_ai_app

        provider = Provider({INCIDENT_ORDER})
        with warnings.catch_warnings():  # version 2 is deprecated, and still what older deployments write
            warnings.filterwarnings("ignore", message="Instrumentation format versions")
            pydantic_ai_app.run(provider, tracer_provider, version)
        return provider
    return pipeline


PIPELINES = {
    "langgraph-openinference": _langgraph_openinference,
    "langgraph-openllmetry": _langgraph_openllmetry,
    "openai-agents-openinference": _agents_openinference,
    "pydantic-ai-v2": _pydantic_ai(2),
    "pydantic-ai-v5": _pydantic_ai(5),
}


@functools.cache
def _recorded(name: str) -> Recording:
    tracer_provider, sink = export.provider()
    provider = PIPELINES[name](tracer_provider)
    return Recording(name=name, batches=sink.batches, doubles=provider.doubles())


def record(name: str) -> Recording:
    pytest.importorskip("opentelemetry.sdk")
    pytest.importorskip("opentelemetry.exporter.otlp.proto.common")
    return _recorded(name)


def _is_tool(span) -> bool:
    attributes = span.attributes or {}
    return (attributes.get("openinference.span.kind") == "TOOL" or attributes.get("traceloop.span.kind") == "tool"
            or attributes.get("gen_ai.operation.name") == "execute_tool")
