"""What AnthropicAdapter RETURNS: whole messages and SSE streams → kanawa types (seed 002 §3-3, seed 003
stop-reason table), and the thinking round trip onto the next request."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from kanawa.llm.anthropic.adapter import AnthropicAdapter
from kanawa.types import (
    LLMResponse,
    Message,
    ReasoningDelta,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStarted,
    ToolMessage,
    Usage,
    UserMessage,
)
from tests.llm.anthropic.wire import (
    block_start,
    message,
    message_end,
    message_start,
    ping,
    stream,
    text_block,
    thinking_block,
    tool_block,
)
from tests.wire.server import WireServer

SIGNATURE = "EqQBCkgIARABGAIiQL2+zQ/sig=="


def two_tool_stream() -> list[Any]:
    """A realistic turn: ping, thinking with signature, text, two parallel tool_use blocks."""
    return [
        message_start(input_tokens=50, cache_read_input_tokens=1000, cache_creation_input_tokens=200),
        ping(),
        *thinking_block(0, ["The user wants ", "weather and time."], SIGNATURE),
        *text_block(1, "I'll check ", "both."),
        ping(),
        *tool_block(2, "toolu_01A", "get_weather", "", '{"ci', 'ty": "Pa', 'ris"}'),
        *tool_block(3, "toolu_01B", "get_time", '{"tz": "Europe/Paris"}'),
        *message_end("tool_use", output_tokens=120, output_tokens_details={"thinking_tokens": 30}),
    ]


async def collect(adapter: AnthropicAdapter, *args: Any, **kwargs: Any) -> list[StreamEvent]:
    return [event async for event in adapter.stream(*args, **kwargs)]


async def test_stream_yields_deltas_in_order_and_one_final_response(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(*two_tool_stream()))
    events = await collect(adapter, [UserMessage("Weather and time in Paris?")])
    assert events[:-1] == [
        ReasoningDelta("The user wants "),
        ReasoningDelta("weather and time."),
        TextDelta("I'll check "),
        TextDelta("both."),
        ToolCallStarted(0, "toolu_01A", "get_weather"),
        ToolCallArgsDelta(0, "toolu_01A", '{"ci'),
        ToolCallArgsDelta(0, "toolu_01A", 'ty": "Pa'),
        ToolCallArgsDelta(0, "toolu_01A", 'ris"}'),
        ToolCallStarted(1, "toolu_01B", "get_time"),
        ToolCallArgsDelta(1, "toolu_01B", '{"tz": "Europe/Paris"}'),
    ]
    assert sum(isinstance(e, ResponseCompleted) for e in events) == 1
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    response = final.response
    assert response.stop_reason is StopReason.TOOL_USE
    assert response.message.text == "I'll check both."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in response.message.tool_calls] == [
        ("toolu_01A", "get_weather", {"city": "Paris"}),
        ("toolu_01B", "get_time", {"tz": "Europe/Paris"}),
    ]
    (thought,) = response.message.reasoning
    assert thought.text == "The user wants weather and time."
    assert thought.provider == "anthropic"
    assert thought.payload == {
        "type": "thinking",
        "thinking": "The user wants weather and time.",
        "signature": SIGNATURE,
    }
    assert response.usage == Usage(
        input_tokens=1250,
        output_tokens=120,
        reasoning_tokens=30,
        cached_tokens=1000,
        cache_write_tokens=200,
        requests=1,
    )
    assert response.message.provider_details == {
        "stop_reason": "tool_use",
        "cache_creation_input_tokens": 200,
    }
    assert (response.response_id, response.model) == ("msg_01", "claude-sonnet-5")
    assert wire_server.requests[0].json()["stream"] is True


async def test_chat_returns_what_the_stream_assembles(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(*two_tool_stream()))
    streamed = (await collect(adapter, [UserMessage("?")]))[-1]
    assert isinstance(streamed, ResponseCompleted)
    wire_server.enqueue(
        message(
            [
                {"type": "thinking", "thinking": "The user wants weather and time.", "signature": SIGNATURE},
                {"type": "text", "text": "I'll check both."},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {"tz": "Europe/Paris"}},
            ],
            stop_reason="tool_use",
            usage={
                "input_tokens": 50,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 200,
                "output_tokens": 120,
                "output_tokens_details": {"thinking_tokens": 30},
            },
        )
    )
    whole = await adapter.chat([UserMessage("?")])
    # Streamed arguments are kept as the server's partial_json text (so the deltas add up to them);
    # the whole message's ``input`` objects are dumped compactly: the same JSON, maybe other spacing.
    assert [json.loads(c.arguments) for c in whole.message.tool_calls] == [
        json.loads(c.arguments) for c in streamed.response.message.tool_calls
    ]
    plain = tuple(replace(c, arguments="") for c in whole.message.tool_calls)
    assert replace(whole, message=replace(whole.message, tool_calls=plain)) == replace(
        streamed.response,
        message=replace(
            streamed.response.message,
            tool_calls=tuple(replace(c, arguments="") for c in streamed.response.message.tool_calls),
        ),
    )
    assert wire_server.requests[1].json()["stream"] is False


async def test_thinking_round_trips_verbatim_onto_the_next_request(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}
    wire_server.enqueue(
        stream(
            message_start(),
            block_start(0, redacted),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            *thinking_block(1, ["Plan."], SIGNATURE),
            *tool_block(2, "toolu_9", "get_time", "{}"),
            *message_end("tool_use"),
        )
    )
    first = (await collect(adapter, [UserMessage("Time?")]))[-1]
    assert isinstance(first, ResponseCompleted)
    wire_server.enqueue(message([{"type": "text", "text": "It is noon."}]))
    history: list[Message] = [UserMessage("Time?"), first.response.message, ToolMessage("toolu_9", "12:00")]
    second = await adapter.chat(history)
    assert second.message.text == "It is noon."
    replayed = wire_server.requests[1].json()["messages"][1]["content"]
    assert replayed == [
        redacted,
        {"type": "thinking", "thinking": "Plan.", "signature": SIGNATURE},
        {"type": "tool_use", "id": "toolu_9", "name": "get_time", "input": {}},
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("end_turn", StopReason.END_TURN),
        ("tool_use", StopReason.TOOL_USE),
        ("max_tokens", StopReason.MAX_TOKENS),
        ("stop_sequence", StopReason.STOP_SEQUENCE),
        ("model_context_window_exceeded", StopReason.MAX_TOKENS),
        ("refusal", StopReason.END_TURN),
        ("pause_turn", None),
        ("something_new", None),
    ],
)
async def test_stop_reason_mapping_per_seed_003(
    adapter: AnthropicAdapter, wire_server: WireServer, raw: str, expected: StopReason | None
) -> None:
    wire_server.enqueue(message([{"type": "text", "text": "x"}], stop_reason=raw))
    response = await adapter.chat([UserMessage("?")])
    assert response.stop_reason == expected
    assert response.message.provider_details is not None
    assert response.message.provider_details["stop_reason"] == raw


async def test_stop_sequence_is_reported(adapter: AnthropicAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(
        message([{"type": "text", "text": "1 2 3"}], stop_reason="stop_sequence", stop_sequence="4")
    )
    response = await adapter.chat([UserMessage("count")])
    assert response.stop_reason is StopReason.STOP_SEQUENCE
    assert response.message.provider_details == {"stop_reason": "stop_sequence", "stop_sequence": "4"}


async def test_streamed_tool_without_arguments_gets_an_empty_object(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        stream(message_start(), *tool_block(0, "toolu_1", "get_time", ""), *message_end("tool_use"))
    )
    events = await collect(adapter, [UserMessage("?")])
    assert events[0] == ToolCallStarted(0, "toolu_1", "get_time")
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.message.tool_calls[0].arguments == "{}"


async def test_unknown_events_and_blocks_are_ignored(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        stream(
            message_start(),
            ("future_event", {"type": "future_event", "x": 1}),
            block_start(
                0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            *text_block(1, "Done."),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 1, "delta": {"type": "citations_delta"}},
            ),
            *message_end("end_turn"),
        )
    )
    events = await collect(adapter, [UserMessage("?")])
    assert events[:-1] == [TextDelta("Done.")]
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.message.text == "Done."
    assert final.response.message.tool_calls == ()


async def test_usage_without_cache_fields(adapter: AnthropicAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(
        message([{"type": "text", "text": "hi"}], usage={"input_tokens": 7, "output_tokens": 3})
    )
    response: LLMResponse = await adapter.chat([UserMessage("hi")])
    assert response.usage == Usage(input_tokens=7, output_tokens=3, requests=1)
