"""The OpenTelemetry sink against a real OTLP/HTTP receiver on loopback (seed 002 §3-6)."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from kanawa import Agent
from kanawa.llm.testing import ScriptedLLM
from kanawa.trace import Tracer, tracer_from_env
from kanawa.trace.otel import OtelTraceSink, traces_url
from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolCall, Usage
from tests.trace.otlp_receiver import OtlpReceiver, ReceivedSpan

SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_ERROR = 2
SECRET = "sk-proj-abcdefghijklmnopqrstuvwx"


def _calls(*calls: ToolCall) -> LLMResponse:
    return LLMResponse(
        AssistantMessage(tool_calls=calls),
        StopReason.TOOL_USE,
        usage=Usage(input_tokens=11, output_tokens=7, requests=1),
        model="m-2025-01",
        response_id="r1",
    )


def _answer(text: str) -> LLMResponse:
    return LLMResponse(
        AssistantMessage(text=text),
        StopReason.END_TURN,
        usage=Usage(input_tokens=20, output_tokens=3, requests=1),
        model="m-2025-01",
    )


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as server:
        yield server


@pytest.fixture
def sink(receiver: OtlpReceiver) -> Iterator[OtelTraceSink]:
    provider = TracerProvider()
    exporter = OTLPSpanExporter(endpoint=traces_url(receiver.endpoint), timeout=30)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=20))
    yield OtelTraceSink(tracer_provider=provider)
    provider.shutdown()


async def _flush(sink: OtelTraceSink) -> None:
    assert await asyncio.to_thread(sink.force_flush)


def _one(receiver: OtlpReceiver, name: str) -> ReceivedSpan:
    (span,) = receiver.named(name)
    return span


async def test_spans_are_named_and_attributed_per_the_genai_conventions(
    receiver: OtlpReceiver, sink: OtelTraceSink
) -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    llm = ScriptedLLM([_calls(ToolCall("c1", "add", '{"a": 2, "b": 3}')), _answer("5")], model="m")
    agent = Agent("calc", tools=[add], model=llm, tracer=Tracer(sinks=[sink], session="s-1"))
    await agent.arun("2 + 3?")
    await _flush(sink)

    run = _one(receiver, "invoke_agent calc")
    assert run.kind == SPAN_KIND_INTERNAL
    assert run.attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "calc",
        "gen_ai.conversation.id": "s-1",
        "gen_ai.provider.name": "test",
        "gen_ai.request.model": "m",
        "gen_ai.usage.input_tokens": 31,
        "gen_ai.usage.output_tokens": 10,
    }
    chats = sorted(receiver.named("chat m"), key=lambda s: s.start_ns)
    assert len(chats) == 2
    first = chats[0]
    assert first.kind == SPAN_KIND_CLIENT
    assert first.parent_span_id == run.span_id
    assert first.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "test",
        "gen_ai.request.model": "m",
        "gen_ai.request.stream": False,
        "gen_ai.response.model": "m-2025-01",
        "gen_ai.response.id": "r1",
        "gen_ai.response.finish_reasons": ["tool_use"],
        "gen_ai.usage.input_tokens": 11,
        "gen_ai.usage.output_tokens": 7,
    }
    tool = _one(receiver, "execute_tool add")
    assert tool.parent_span_id == run.span_id
    assert tool.attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "c1",
    }
    assert {s.trace_id for s in receiver.spans} == {run.trace_id}
    assert receiver.paths == ["/v1/traces"] * receiver.requests


async def test_parallel_tools_are_siblings_and_a_nested_agent_run_is_a_child_of_its_tool(
    receiver: OtlpReceiver, sink: OtelTraceSink
) -> None:
    tracer = Tracer(sinks=[sink])
    expert = Agent("expert", model=ScriptedLLM([_answer("42")], model="small"), tracer=tracer)

    async def ask_expert(question: str) -> str:
        """Ask the expert agent."""
        return (await expert.arun(question)).text

    def echo(text: str) -> str:
        """Echo."""
        return text

    llm = ScriptedLLM(
        [
            _calls(
                ToolCall("c1", "ask_expert", '{"question": "meaning?"}'),
                ToolCall("c2", "echo", '{"text": "hi"}'),
            ),
            _answer("done"),
        ],
        model="big",
    )
    coordinator = Agent("coordinator", tools=[ask_expert, echo], model=llm, tracer=tracer)
    await coordinator.arun("go")
    await _flush(sink)

    outer = _one(receiver, "invoke_agent coordinator")
    asking = _one(receiver, "execute_tool ask_expert")
    echoing = _one(receiver, "execute_tool echo")
    inner = _one(receiver, "invoke_agent expert")
    inner_chat = _one(receiver, "chat small")
    assert outer.parent_span_id == ""
    assert asking.parent_span_id == outer.span_id
    assert echoing.parent_span_id == outer.span_id
    assert inner.parent_span_id == asking.span_id
    assert inner_chat.parent_span_id == inner.span_id
    assert {s.trace_id for s in receiver.spans} == {outer.trace_id}


async def test_a_handoff_target_is_traced_under_its_transfer_tool_span_and_inherits_the_tracer(
    receiver: OtlpReceiver, sink: OtelTraceSink
) -> None:
    """The target agent has no tracer of its own: it inherits the source run's, and its
    ``invoke_agent`` span is a child of the ``execute_tool transfer_to_…`` span (seed 002 §3-6)."""
    evaluator = Agent("evaluator", model=ScriptedLLM([_answer("8/10")], model="small"))
    llm = ScriptedLLM([_calls(ToolCall("h1", "transfer_to_evaluator", "{}")), _answer("done")], model="big")
    coordinator = Agent("coordinator", model=llm, handoffs=[evaluator], tracer=Tracer(sinks=[sink]))
    await coordinator.arun("grade it")
    await _flush(sink)

    outer = _one(receiver, "invoke_agent coordinator")
    transfer = _one(receiver, "execute_tool transfer_to_evaluator")
    inner = _one(receiver, "invoke_agent evaluator")
    assert transfer.parent_span_id == outer.span_id
    assert inner.parent_span_id == transfer.span_id
    assert _one(receiver, "chat small").parent_span_id == inner.span_id
    assert {s.trace_id for s in receiver.spans} == {outer.trace_id}


async def test_a_collector_that_hangs_does_not_hold_up_runs(receiver: OtlpReceiver) -> None:
    sink = OtelTraceSink(endpoint=receiver.endpoint)  # the sink's own provider and background exporter
    agent = Agent("a", model=ScriptedLLM([_answer("one"), _answer("two")]), tracer=Tracer(sinks=[sink]))
    receiver.gate.clear()  # the collector accepts requests and then hangs
    await agent.arun("first")
    exporting = asyncio.create_task(asyncio.to_thread(sink.force_flush))
    assert await asyncio.to_thread(receiver.entered.wait, 10)  # the exporter is stuck in a request
    second = await asyncio.wait_for(agent.arun("second"), 10)  # ... and a run still completes
    assert second.text == "two"
    assert not exporting.done()
    assert receiver.requests == 0
    receiver.gate.set()
    assert await exporting
    await sink.aclose()
    assert len(receiver.named("invoke_agent a")) == 2


async def test_secrets_are_redacted_even_on_an_unredacted_tracer(
    receiver: OtlpReceiver, sink: OtelTraceSink
) -> None:
    def leak() -> str:
        """Fail with a credential in the message."""
        raise RuntimeError(f"bad key {SECRET}")

    llm = ScriptedLLM([_calls(ToolCall("c1", "leak", "{}")), _answer("sorry")])
    await Agent("a", tools=[leak], model=llm, tracer=Tracer(sinks=[sink])).arun("go")
    await _flush(sink)
    span = _one(receiver, "execute_tool leak")
    assert span.status_code == STATUS_ERROR
    assert span.attributes["error.type"] == "execution_error"
    assert "RuntimeError" in span.status_message
    assert "[REDACTED]" in span.status_message
    assert SECRET not in span.status_message


async def test_tool_results_are_exported_only_when_content_capture_is_on(receiver: OtlpReceiver) -> None:
    def reveal() -> str:
        """Return a credential."""
        return f"the key is {SECRET}"

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(receiver.endpoint))))
    for capture in (False, True):
        sink = OtelTraceSink(tracer_provider=provider, capture_content=capture)
        llm = ScriptedLLM([_calls(ToolCall("c1", "reveal", "{}")), _answer("ok")])
        await Agent(f"capture-{capture}", tools=[reveal], model=llm, tracer=Tracer(sinks=[sink])).arun("go")
        await sink.aclose()
    provider.shutdown()
    without, with_content = receiver.named("execute_tool reveal")
    if "gen_ai.tool.call.result" in without.attributes:
        without, with_content = with_content, without
    assert "gen_ai.tool.call.result" not in without.attributes
    assert with_content.attributes["gen_ai.tool.call.result"] == "the key is [REDACTED]"


async def test_trace_otlp_endpoint_turns_export_on(receiver: OtlpReceiver) -> None:
    tracer = tracer_from_env(environ={"TRACE_OTLP_ENDPOINT": receiver.endpoint, "KANAWA_TRACE": "0"})
    (sink,) = tracer.sinks
    assert isinstance(sink, OtelTraceSink)
    await Agent("env", model=ScriptedLLM([_answer("hi")]), tracer=tracer).arun("hello")
    await tracer.aclose()
    span = _one(receiver, "invoke_agent env")
    assert span.attributes["gen_ai.agent.name"] == "env"


def test_a_sink_needs_a_provider_or_an_endpoint() -> None:
    with pytest.raises(ValueError, match="TRACE_OTLP_ENDPOINT"):
        OtelTraceSink(environ={})
    assert traces_url("http://h:4318/") == "http://h:4318/v1/traces"
    assert traces_url("http://h:4318/v1/traces") == "http://h:4318/v1/traces"


async def test_a_failed_model_call_marks_the_chat_and_agent_spans_as_errors(
    receiver: OtlpReceiver, sink: OtelTraceSink
) -> None:
    from kanawa.llm.errors import LLMConnectionError
    from kanawa.loop.errors import AgentError

    llm = ScriptedLLM([LLMConnectionError(f"connection reset (key {SECRET})")], model="m")
    with pytest.raises(AgentError) as caught:
        await Agent("fragile", model=llm, tracer=Tracer(sinks=[sink])).arun("hi")
    await _flush(sink)
    chat = _one(receiver, "chat m")
    run = _one(receiver, "invoke_agent fragile")
    assert chat.status_code == STATUS_ERROR
    assert chat.attributes["error.type"] == "LLMConnectionError"
    assert SECRET not in chat.status_message
    assert run.status_code == STATUS_ERROR
    assert run.attributes["error.type"] == type(caught.value).__name__
    assert chat.parent_span_id == run.span_id


class _RetryWatch(logging.Handler):
    """Counts the exporter's "retrying in …" warnings; ``first`` is set at the first one."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.retries = 0
        self.first = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "retrying in" in record.getMessage():
            self.retries += 1
            self.first.set()


@pytest.fixture
def retry_watch() -> Iterator[_RetryWatch]:
    logger = logging.getLogger("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    watch = _RetryWatch()
    logger.addHandler(watch)
    yield watch
    logger.removeHandler(watch)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there now: connections are refused


async def _export_under_way(tracer: Tracer) -> asyncio.Task[bool]:
    """Run an agent, then start exporting its spans in a thread (the export the close must cut short)."""
    await Agent("a", model=ScriptedLLM([_answer("one")]), tracer=tracer).arun("go")
    (sink,) = tracer.sinks
    assert isinstance(sink, OtelTraceSink)
    return asyncio.create_task(asyncio.to_thread(sink.force_flush))


async def test_closing_does_not_wait_out_the_retry_schedule_of_a_refused_collector(
    retry_watch: _RetryWatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against a closed loopback port the SDK retries after 1, 2, 4, 8 and 16 s within the export's
    deadline (600 s here, also the SDK's own setting, so nothing else ends the schedule). Closing the
    tracer cancels it: the retry under way when it closes is the last one."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "600")
    env = {
        "KANAWA_TRACE": "0",
        "TRACE_OTLP_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",
        "KANAWA_TRACE_OTLP_TIMEOUT": "600",
        "KANAWA_TRACE_OTLP_CLOSE_TIMEOUT": "0.1",
    }
    tracer = tracer_from_env(environ=env)
    exporting = await _export_under_way(tracer)
    assert await asyncio.to_thread(retry_watch.first.wait, 30)  # refused once, now backing off
    await asyncio.wait_for(tracer.aclose(), 25)  # far below the 31 s schedule; typically 0.1 s
    await asyncio.wait_for(exporting, 25)  # the cancelled export returned instead of retrying
    assert retry_watch.retries <= 2  # not the five of the whole schedule (one, unless the machine stalls)


async def test_closing_does_not_wait_for_a_collector_that_never_answers(
    receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collector accepts the export and hangs (30 s; the export's deadline is 600 s): the SDK's
    shutdown would wait for it, closing gives up after ``KANAWA_TRACE_OTLP_CLOSE_TIMEOUT``."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "600")
    env = {
        "KANAWA_TRACE": "0",
        "TRACE_OTLP_ENDPOINT": receiver.endpoint,
        "KANAWA_TRACE_OTLP_TIMEOUT": "600",
        "KANAWA_TRACE_OTLP_CLOSE_TIMEOUT": "0.1",
    }
    tracer = tracer_from_env(environ=env)
    receiver.gate.clear()
    exporting = await _export_under_way(tracer)
    assert await asyncio.to_thread(receiver.entered.wait, 30)  # the export is stuck in its request
    await asyncio.wait_for(tracer.aclose(), 20)  # the hang lasts 30 s
    assert receiver.requests == 0  # closed while the collector still had not answered
    receiver.gate.set()
    await asyncio.wait_for(exporting, 30)


async def test_a_chat_span_carries_the_prompt_cache_reads_and_writes(
    receiver: OtlpReceiver, sink: OtelTraceSink
) -> None:
    cached = LLMResponse(
        AssistantMessage(text="ok"),
        StopReason.END_TURN,
        usage=Usage(
            input_tokens=4000, output_tokens=3, cached_tokens=3000, cache_write_tokens=600, requests=1
        ),
        model="m-2025-01",
    )
    agent = Agent("cache", model=ScriptedLLM([cached], model="m"), tracer=Tracer(sinks=[sink]))
    await agent.arun("hi")
    await _flush(sink)
    chat = _one(receiver, "chat m")
    assert chat.attributes["gen_ai.usage.input_tokens"] == 4000
    assert chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 3000
    assert chat.attributes["gen_ai.usage.cache_creation.input_tokens"] == 600
