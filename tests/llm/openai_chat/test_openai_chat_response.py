"""What OpenAIChatAdapter RETURNS from vLLM-, Ollama-, llama.cpp- and OpenAI-shaped answers (seed 002
§3-3; finish reasons per the seed 003 stop-reason table)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.types import (
    ReasoningDelta,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStarted,
    Usage,
    UserMessage,
)
from tests.llm.openai_chat.wire import chunk, completion, stream, tool_delta, usage_chunk
from tests.wire.server import WireServer


async def collect(adapter: OpenAIChatAdapter) -> list[StreamEvent]:
    return [event async for event in adapter.stream([UserMessage("Weather in Paris and Rome?")])]


def final(events: list[StreamEvent]) -> ResponseCompleted:
    assert sum(isinstance(e, ResponseCompleted) for e in events) == 1
    last = events[-1]
    assert isinstance(last, ResponseCompleted)
    return last


def vllm_stream() -> list[Any]:
    """Reasoning, text, two tool calls with fragmented arguments, a usage-only chunk, [DONE]."""
    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "Two cities, "}),
        chunk({"reasoning_content": "two calls."}),
        chunk({"content": "Checking "}),
        chunk({"content": "both."}),
        chunk(tool_delta(0, call_id="chatcmpl-tool-1", name="get_weather", arguments="")),
        chunk(tool_delta(0, arguments='{"city": ')),
        chunk(tool_delta(0, arguments='"Paris"}')),
        chunk(tool_delta(1, call_id="chatcmpl-tool-2", name="get_weather", arguments="")),
        chunk(tool_delta(1, arguments='{"city": "Rome"}')),
        chunk(finish="tool_calls"),
        usage_chunk(
            60,
            25,
            prompt_tokens_details={"cached_tokens": 32},
            completion_tokens_details={"reasoning_tokens": 9},
        ),
    ]


async def test_vllm_style_stream_assembles_fragmented_tool_calls(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(*vllm_stream()))
    events = await collect(adapter)
    assert events[:-1] == [
        ReasoningDelta("Two cities, "),
        ReasoningDelta("two calls."),
        TextDelta("Checking "),
        TextDelta("both."),
        ToolCallStarted(0, "chatcmpl-tool-1", "get_weather"),
        ToolCallArgsDelta(0, "chatcmpl-tool-1", '{"city": '),
        ToolCallArgsDelta(0, "chatcmpl-tool-1", '"Paris"}'),
        ToolCallStarted(1, "chatcmpl-tool-2", "get_weather"),
        ToolCallArgsDelta(1, "chatcmpl-tool-2", '{"city": "Rome"}'),
    ]
    response = final(events).response
    assert response.stop_reason is StopReason.TOOL_USE
    assert response.message.text == "Checking both."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in response.message.tool_calls] == [
        ("chatcmpl-tool-1", "get_weather", {"city": "Paris"}),
        ("chatcmpl-tool-2", "get_weather", {"city": "Rome"}),
    ]
    (thought,) = response.message.reasoning
    assert (thought.text, thought.provider, thought.payload) == (
        "Two cities, two calls.",
        "openai-chat",
        None,
    )
    assert response.usage == Usage(
        input_tokens=60, output_tokens=25, reasoning_tokens=9, cached_tokens=32, requests=1
    )
    assert (response.response_id, response.model) == ("chatcmpl-abc123", "qwen2.5-7b-instruct")


async def test_chat_returns_what_the_stream_assembles(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(*vllm_stream()))
    streamed = final(await collect(adapter)).response
    wire_server.enqueue(
        completion(
            {
                "content": "Checking both.",
                "reasoning_content": "Two cities, two calls.",
                "tool_calls": [
                    {
                        "id": "chatcmpl-tool-1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "chatcmpl-tool-2",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                    },
                ],
            },
            finish="tool_calls",
            usage={
                "prompt_tokens": 60,
                "completion_tokens": 25,
                "total_tokens": 85,
                "prompt_tokens_details": {"cached_tokens": 32},
                "completion_tokens_details": {"reasoning_tokens": 9},
            },
        )
    )
    whole = await adapter.chat([UserMessage("Weather in Paris and Rome?")])
    assert whole == streamed


async def test_ollama_style_whole_arguments_and_no_usage(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        stream(
            chunk({"role": "assistant", "content": "", "reasoning": "Quick."}),
            chunk(tool_delta(0, call_id="call_k1", name="get_weather", arguments='{"city":"Paris"}')),
            chunk(tool_delta(1, call_id="call_k2", name="get_time", arguments="{}")),
            chunk({"content": ""}, finish="tool_calls"),
        )
    )
    events = await collect(adapter)
    assert events[:-1] == [
        ReasoningDelta("Quick."),
        ToolCallStarted(0, "call_k1", "get_weather"),
        ToolCallArgsDelta(0, "call_k1", '{"city":"Paris"}'),
        ToolCallStarted(1, "call_k2", "get_time"),
        ToolCallArgsDelta(1, "call_k2", "{}"),
    ]
    response = final(events).response
    assert [c.arguments for c in response.message.tool_calls] == ['{"city":"Paris"}', "{}"]
    assert response.usage == Usage(requests=1)
    assert response.message.provider_details == {"finish_reason": "tool_calls", "usage_reported": False}


async def test_fragments_without_index_and_with_repeated_ids(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        stream(
            chunk(tool_delta(None, call_id="call_a", name="get_weather", arguments='{"city":')),
            chunk(tool_delta(None, arguments=' "Oslo"}')),
            chunk(tool_delta(None, call_id="call_b", name="get_time", arguments="")),
            chunk(tool_delta(None, call_id="call_b", arguments="{}")),
            chunk(finish="tool_calls"),
        )
    )
    response = final(await collect(adapter)).response
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("call_a", "get_weather", '{"city": "Oslo"}'),
        ("call_b", "get_time", "{}"),
    ]


async def test_servers_that_number_every_call_zero(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        stream(
            chunk(tool_delta(0, call_id="call_1", name="get_weather", arguments='{"city": "Lima"}')),
            chunk(tool_delta(0, call_id="call_2", name="get_weather", arguments='{"city": "Quito"}')),
            chunk(finish="tool_calls"),
        )
    )
    events = await collect(adapter)
    starts = [e for e in events if isinstance(e, ToolCallStarted)]
    assert starts == [
        ToolCallStarted(0, "call_1", "get_weather"),
        ToolCallStarted(1, "call_2", "get_weather"),
    ]
    response = final(events).response
    assert [json.loads(c.arguments)["city"] for c in response.message.tool_calls] == ["Lima", "Quito"]


async def test_tool_call_without_id_gets_a_stable_one(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        stream(
            chunk(tool_delta(0, name="get_time", arguments="{}")), chunk(finish="tool_calls"), usage_chunk()
        )
    )
    events = await collect(adapter)
    assert events[0] == ToolCallStarted(0, "call_0", "get_time")
    assert final(events).response.message.tool_calls[0].id == "call_0"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stop", StopReason.END_TURN),
        ("tool_calls", StopReason.TOOL_USE),
        ("function_call", StopReason.TOOL_USE),
        ("length", StopReason.MAX_TOKENS),
        ("content_filter", None),
        ("eos", StopReason.END_TURN),
        (None, None),
    ],
)
async def test_finish_reason_mapping_per_seed_003(
    adapter: OpenAIChatAdapter, wire_server: WireServer, raw: str | None, expected: StopReason | None
) -> None:
    wire_server.enqueue(completion({"content": "text"}, finish=raw))
    response = await adapter.chat([UserMessage("?")])
    assert response.stop_reason == expected
    assert response.message.provider_details is not None
    assert response.message.provider_details["finish_reason"] == raw


async def test_stream_without_finish_reason_or_done_still_completes(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(chunk({"content": "partial answer"}), done=False))
    response = final(await collect(adapter)).response
    assert response.message.text == "partial answer"
    assert response.stop_reason is None


async def test_refusal_is_surfaced_as_text(adapter: OpenAIChatAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(completion({"content": None, "refusal": "I can't help with that."}))
    response = await adapter.chat([UserMessage("?")])
    assert response.message.text == "I can't help with that."
    assert response.message.provider_details is not None
    assert response.message.provider_details["refusal"] == "I can't help with that."


async def test_usage_missing_in_chat_is_zero_with_one_request(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(completion({"content": "hi"}, with_usage=False))
    response = await adapter.chat([UserMessage("?")])
    assert response.usage == Usage(requests=1)
    assert response.message.provider_details == {"finish_reason": "stop", "usage_reported": False}
