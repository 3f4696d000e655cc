"""Guard logs written from the tracing hooks agent stacks already have, for teams without a gateway.

- `openai_agents.GuardLogProcessor`: an OpenAI Agents SDK tracing processor
  (`agents.add_trace_processor(GuardLogProcessor("guard.jsonl"))`);
- `otel.GuardLogSpanProcessor`: an OpenTelemetry span processor for any
  instrumentation the trace reader knows (OpenInference, OpenLLMetry, OTel
  GenAI, pydantic-ai): `provider.add_span_processor(GuardLogSpanProcessor("guard.jsonl"))`.

Each imports its framework only when used, so neither `nonatomic lint` nor
the base install needs those packages.  Tool calls are numbered as the trace
reader numbers them (calls of one tool with the same arguments in a task are
attempts of one step) and written with `nonatomic.guard`.
"""
