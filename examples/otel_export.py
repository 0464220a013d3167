"""OpenTelemetry export: an agent whose tool runs another agent, traced as GenAI spans.

With a collector, set `TRACE_OTLP_ENDPOINT=http://127.0.0.1:4318` and use `tracer_from_env()`; here
the spans go to an in-memory exporter so the script runs anywhere. Needs `pip install 'kanawa[otel]'`.
"""

from __future__ import annotations

import asyncio

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kanawa import Agent
from kanawa.llm.testing import ScriptedLLM
from kanawa.trace import OtelTraceSink, Tracer
from kanawa.types import AssistantMessage, ToolCall


async def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # use BatchSpanProcessor in production
    tracer = Tracer(sinks=[OtelTraceSink(tracer_provider=provider)])

    expert = Agent("expert", model=ScriptedLLM(["42"], model="small-model"), tracer=tracer)

    async def ask_expert(question: str) -> str:
        """Ask the expert agent a question."""
        return (await expert.arun(question)).text

    script: list[AssistantMessage | str] = [
        AssistantMessage(tool_calls=(ToolCall("c1", "ask_expert", '{"question": "meaning?"}'),)),
        "42",
    ]
    coordinator = Agent(
        "coordinator", tools=[ask_expert], model=ScriptedLLM(script, model="big-model"), tracer=tracer
    )
    await coordinator.arun("What is the meaning of life?")
    await tracer.aclose()

    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)

    def show(parent_id: int | None, depth: int) -> None:
        for span in spans:
            if (span.parent.span_id if span.parent else None) == parent_id:
                print("  " * depth + span.name)
                show(span.context.span_id, depth + 1)

    show(None, 0)


if __name__ == "__main__":
    asyncio.run(main())
