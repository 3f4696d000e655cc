"""Span files as OpenTelemetry tooling writes them, from the spans a real SDK finished.

Every shape is produced by the OTel libraries themselves: the OTLP protobuf
request comes from the OTLP exporter's own encoder, its JSON from protobuf's
`MessageToJson`/`MessageToDict`, the console shape from the SDK's
`ConsoleSpanExporter`.

- `collector`: one `ExportTraceServiceRequest` per line, ids in hex as the
  OTLP/JSON protocol (and so the Collector's file exporter) writes them;
  `.gz` and `.zst` compress the same lines;
- `pretty`: `MessageToJson`'s default output (indented, ids in base64), one
  request after the other;
- `oneline`: `MessageToJson(indent=None)`, one request per line, ids in base64;
- `console`: what `ConsoleSpanExporter` prints (indented span objects).
"""

from __future__ import annotations

import base64
import gzip
import io
import json

from google.protobuf.json_format import MessageToDict, MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor, SpanExporter, SpanExportResult

SHAPES = ("collector", "collector.gz", "collector.zst", "pretty", "oneline", "console")
_IDS = ("traceId", "spanId", "parentSpanId")


class Batches(SpanExporter):
    """Keeps each export call's spans, as an exporter pipeline hands them on."""

    def __init__(self):
        self.batches: list[list] = []

    def export(self, spans):
        self.batches.append(list(spans))
        return SpanExportResult.SUCCESS


def provider() -> tuple[TracerProvider, Batches]:
    batches = Batches()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(batches))
    return tracer_provider, batches


def _hex_ids(node):
    """OTLP/JSON writes trace and span ids as hex, where protobuf's JSON mapping writes base64."""
    if isinstance(node, dict):
        return {k: base64.b64decode(v).hex() if k in _IDS and isinstance(v, str) else _hex_ids(v)
                for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def render(batches: list[list], shape: str) -> bytes:
    if shape == "console":
        out = io.StringIO()
        exporter = ConsoleSpanExporter(out=out)
        for batch in batches:
            exporter.export(batch)
        return out.getvalue().encode()
    requests = [encode_spans(batch) for batch in batches if batch]
    if shape == "pretty":
        return "".join(MessageToJson(r) + "\n" for r in requests).encode()
    if shape == "oneline":
        return "".join(MessageToJson(r, indent=None) + "\n" for r in requests).encode()
    lines = "".join(json.dumps(_hex_ids(MessageToDict(r)), separators=(",", ":")) + "\n" for r in requests).encode()
    if shape == "collector.gz":
        return gzip.compress(lines)
    if shape == "collector.zst":
        import zstandard

        return zstandard.ZstdCompressor().compress(lines)
    return lines


def suffix(shape: str) -> str:
    return {"collector": ".jsonl", "collector.gz": ".jsonl.gz", "collector.zst": ".jsonl.zst",
            "pretty": ".json", "oneline": ".json", "console": ".txt"}[shape]
