"""``OpenAIResponsesAdapter.stream`` over the wire: Responses API SSE sequences in, kanawa stream events
out (seed 001 §3.6–3.7, seed 002 §3-3), including broken, malformed, failed and slow streams."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kanawa.llm.errors import (
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
)
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.types import (
    LLMResponse,
    ReasoningDelta,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStarted,
    ToolSpec,
    UserMessage,
)
from tests.llm.openai_responses.conftest import MakeAdapter
from tests.llm.openai_responses.wire import ResponseScript, text_response
from tests.wire.server import Delay, Disconnect, Reply, WireServer, json_reply, sse_reply

ADD = ToolSpec("add", "Add.", {"type": "object", "properties": {"a": {"type": "integer"}}})
MUL = ToolSpec("mul", "Multiply.", {"type": "object", "properties": {}})


async def collect(adapter: OpenAIResponsesAdapter, **kwargs: object) -> list[StreamEvent]:
    return [event async for event in adapter.stream([UserMessage("question")], **kwargs)]  # type: ignore[arg-type]


def final(events: Sequence[StreamEvent]) -> LLMResponse:
    assert [type(e) for e in events].count(ResponseCompleted) == 1
    last = events[-1]
    assert isinstance(last, ResponseCompleted)
    return last.response


def text_of(events: Sequence[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def reasoning_script() -> ResponseScript:
    return (
        ResponseScript()
        .reasoning("Think about sums.", "Then products.", encrypted="gAAAA-enc-stream")
        .message("Calling tools.")
        .function_call("add", '{"a": 40, "b": 2}', call_id="call_add")
        .function_call("mul", '{"x": 6, "y": 7}', call_id="call_mul")
        .completed()
    )


async def test_stream_request_sets_stream_true(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(text_response("hi").sse())
    await collect(adapter)
    assert wire_server.requests[0].json()["stream"] is True
    assert wire_server.requests[0].headers["accept"] == "application/json"


async def test_reasoning_text_and_parallel_tool_calls_stream_in_order(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    script = reasoning_script()
    wire_server.enqueue(script.sse())
    events = await collect(adapter, tools=[ADD, MUL])
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == "Think about sums.\n\nThen products."
    assert text_of(events) == "Calling tools."
    starts = [e for e in events if isinstance(e, ToolCallStarted)]
    assert starts == [ToolCallStarted(0, "call_add", "add"), ToolCallStarted(1, "call_mul", "mul")]
    args = {
        i: "".join(e.delta for e in events if isinstance(e, ToolCallArgsDelta) and e.index == i)
        for i in (0, 1)
    }
    assert args == {0: '{"a": 40, "b": 2}', 1: '{"x": 6, "y": 7}'}
    assert len([e for e in events if isinstance(e, ToolCallArgsDelta)]) > 2
    kinds = [e.kind for e in events]
    assert kinds.index("reasoning_delta") < kinds.index("text_delta") < kinds.index("tool_call_started")
    response = final(events)
    assert response.stop_reason is StopReason.TOOL_USE
    assert response.message.text == "Calling tools."
    assert [c.arguments for c in response.message.tool_calls] == ['{"a": 40, "b": 2}', '{"x": 6, "y": 7}']
    assert response.message.reasoning[0].payload == script.output[0]
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens, usage.cached_tokens) == (
        120,
        90,
        48,
        64,
    )


async def test_stream_reasoning_round_trips_to_next_request(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    from kanawa.types import ToolMessage

    script = reasoning_script()
    wire_server.enqueue(script.sse(), text_response("42").sse())
    events = await collect(adapter, tools=[ADD, MUL])
    message = final(events).message
    history = [UserMessage("question"), message, ToolMessage("call_add", "42"), ToolMessage("call_mul", "")]
    [e async for e in adapter.stream(history, tools=[ADD, MUL])]
    sent = wire_server.requests[1].json()["input"]
    assert sent[1] == script.output[0]
    assert sent[1]["encrypted_content"] == "gAAAA-enc-stream"
    assert sent[-1] == {"type": "function_call_output", "call_id": "call_mul", "output": ""}


async def test_events_split_mid_line_across_tcp_chunks(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    script = reasoning_script()
    wire_server.enqueue(script.chunked_sse(7))
    events = await collect(adapter, tools=[ADD, MUL])
    assert text_of(events) == "Calling tools."
    assert len(final(events).message.tool_calls) == 2


async def test_incomplete_stream_is_max_tokens(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(ResponseScript().message("Partial answ").incomplete("max_output_tokens").sse())
    events = await collect(adapter)
    assert text_of(events) == "Partial answ"
    assert final(events).stop_reason is StopReason.MAX_TOKENS


async def test_stop_sequence_cuts_streamed_text(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    script = ResponseScript().message("The answer is 4.\nEND\nignored tail", chunk=3).completed()
    wire_server.enqueue(script.sse())
    events = await collect(adapter, settings=ModelSettings(stop=("\nEND",)))
    assert text_of(events) == "The answer is 4."
    response = final(events)
    assert (response.message.text, response.stop_reason) == ("The answer is 4.", StopReason.STOP_SEQUENCE)
    assert wire_server.requests[0].json()["truncation"] == "disabled"


async def test_unknown_events_are_ignored(wire_server: WireServer, adapter: OpenAIResponsesAdapter) -> None:
    script = ResponseScript()
    script._emit("response.some_future_event", payload={"x": 1})
    script.message("fine").completed()
    wire_server.enqueue(script.sse())
    assert text_of(await collect(adapter)) == "fine"


async def test_enable_stream_false_makes_one_plain_request_and_replays(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(ResponseScript().reasoning("r").message("whole").json())
    events = await collect(adapter, settings=ModelSettings(stream=False))
    assert wire_server.requests[0].json()["stream"] is False
    assert [type(e) for e in events] == [ReasoningDelta, TextDelta, ResponseCompleted]
    assert final(events).message.text == "whole"


async def test_mid_stream_disconnect_is_connection_error(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    events = ResponseScript().message("Hello there, this is long").events
    wire_server.enqueue(sse_reply([*events[:6], Disconnect()]))
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in adapter.stream([UserMessage("x")]):
            seen.append(event)

    with pytest.raises(LLMConnectionError) as info:
        await consume()
    assert text_of(seen)  # some text arrived before the cut
    assert info.value.retryable


async def test_stream_ending_without_completed_is_connection_error(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    events = ResponseScript().message("half").events
    wire_server.enqueue(sse_reply(events))
    with pytest.raises(LLMConnectionError, match=r"stream ended before response\.completed"):
        await collect(adapter)


async def test_malformed_event_is_connection_error(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    events = ResponseScript().events
    wire_server.enqueue(
        sse_reply([*events, b'event: response.output_text.delta\ndata: {"type": "response.outp\n\n'])
    )
    with pytest.raises(LLMConnectionError, match="malformed stream event"):
        await collect(adapter)


async def test_response_failed_raises_with_code_and_message(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(
        ResponseScript().failed("server_error", "The model failed to generate a response.").sse()
    )
    with pytest.raises(LLMConnectionError) as info:
        await collect(adapter)
    assert (info.value.code, info.value.message) == (
        "server_error",
        "The model failed to generate a response.",
    )


async def test_response_failed_with_a_refusal_code_is_bad_request(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(ResponseScript().failed("invalid_prompt", "Invalid prompt.").sse())
    with pytest.raises(LLMBadRequestError, match="Invalid prompt"):
        await collect(adapter)


@pytest.mark.parametrize(
    "event",
    [
        {
            "type": "error",
            "sequence_number": 2,
            "code": "rate_limit_exceeded",
            "message": "Slow down.",
            "param": None,
        },
        {
            "type": "error",
            "sequence_number": 2,
            "error": {"type": "x", "code": "rate_limit_exceeded", "message": "Slow down."},
        },
    ],
    ids=["flat", "nested"],
)
async def test_error_event_maps_by_code(
    event: dict[str, object], wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(sse_reply([*ResponseScript().events, ("error", event)]))
    with pytest.raises(LLMRateLimitError, match="Slow down"):
        await collect(adapter)


async def test_error_event_with_unknown_code_is_llm_error(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(ResponseScript().error("weird_code", "Something odd.").sse())
    with pytest.raises(LLMError, match="Something odd"):
        await collect(adapter)


async def test_status_error_before_stream_starts(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    body = {
        "error": {"message": "Too many", "type": "requests", "code": "rate_limit_exceeded", "param": None}
    }
    wire_server.enqueue(json_reply(body, 429, {"retry-after": "3"}))
    with pytest.raises(LLMRateLimitError) as info:
        await collect(adapter)
    assert info.value.retry_after == 3.0


async def test_stalled_stream_hits_the_timeout(wire_server: WireServer, make_adapter: MakeAdapter) -> None:
    events = ResponseScript().message("slow").events
    wire_server.enqueue(sse_reply([*events[:4], Delay(2.0), *events[4:]]))
    adapter = make_adapter(timeout=0.3)
    with pytest.raises(LLMTimeoutError):
        await collect(adapter)


async def test_trickling_stream_hits_the_whole_call_deadline(
    wire_server: WireServer, make_adapter: MakeAdapter
) -> None:
    trickle: list[object] = []
    for event in ResponseScript().message("x" * 40, chunk=1).events:
        trickle.extend([event, Delay(0.05)])
    wire_server.enqueue(sse_reply(trickle))  # type: ignore[arg-type]
    adapter = make_adapter(timeout=0.4)
    with pytest.raises(LLMTimeoutError):
        await collect(adapter)


async def test_consumer_stopping_early_closes_the_stream(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(text_response("a long answer", chunk=1).sse(), text_response("next").sse())
    stream = adapter.stream([UserMessage("x")])
    first = await anext(stream)
    assert isinstance(first, TextDelta)
    await stream.aclose()  # type: ignore[attr-defined]
    assert text_of(await collect(adapter)) == "next"


def test_reply_helper_is_a_real_sse_body() -> None:
    reply = text_response("x").sse()
    assert isinstance(reply, Reply)
    assert reply.headers["content-type"] == "text/event-stream"
