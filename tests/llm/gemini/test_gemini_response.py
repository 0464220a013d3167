"""What GeminiAdapter returns: text, tool calls, reasoning, stop reasons, usage (seed 002 §3-3, seed 003).

Replies are shaped exactly like Gemini's; ``chat()`` (``generateContent``) and ``stream()``
(``streamGenerateContent?alt=sse``) must assemble the same :class:`LLMResponse`."""

from __future__ import annotations

from typing import Any

import pytest

from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.types import (
    LLMResponse,
    ReasoningDelta,
    ReasoningPart,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStarted,
    Usage,
    UserMessage,
)
from tests.llm.gemini.wire import (
    MODEL_VERSION,
    RESPONSE_ID,
    SIGNATURE,
    SIGNATURE_2,
    body,
    call,
    chunks,
    stream_reply,
    text,
    thought,
    usage,
)
from tests.wire.server import WireServer, json_reply


async def stream_events(
    adapter: GeminiAdapter, wire_server: WireServer, items: list[dict[str, Any]]
) -> list[StreamEvent]:
    wire_server.enqueue(stream_reply(items))
    return [event async for event in adapter.stream([UserMessage("q")])]


def completed(events: list[StreamEvent]) -> LLMResponse:
    finals = [e for e in events if isinstance(e, ResponseCompleted)]
    assert len(finals) == 1
    assert events[-1] is finals[0]
    return finals[0].response


async def test_text_response_with_usage_model_version_and_response_id(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        json_reply(body([text("Hello, "), text("world")], meta=usage(prompt=20, candidates=4)))
    )
    response = await adapter.chat([UserMessage("hi")])
    assert response.message.text == "Hello, world"
    assert response.stop_reason is StopReason.END_TURN
    assert response.usage == Usage(input_tokens=20, output_tokens=4, requests=1)
    assert (response.model, response.response_id) == (MODEL_VERSION, RESPONSE_ID)
    assert response.message.tool_calls == ()
    assert response.message.provider_details is None


async def test_stop_with_parallel_function_calls_stays_end_turn_with_the_calls(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    """Seed 003: Gemini answers STOP even when it calls functions; the loop, not the adapter, treats
    end_turn with tool calls as tool use."""
    parts = [call("add", {"a": 2, "b": 3}, signature=SIGNATURE), call("now", {})]
    wire_server.enqueue(json_reply(body(parts)))
    response = await adapter.chat([UserMessage("go")])
    assert response.stop_reason is StopReason.END_TURN
    assert response.message.tool_calls == (
        ToolCall(
            f"call_{RESPONSE_ID}_0",
            "add",
            '{"a": 2, "b": 3}',
            provider_details={"thought_signature": SIGNATURE},
        ),
        ToolCall(f"call_{RESPONSE_ID}_1", "now", "{}"),
    )


async def test_function_call_ids_from_gemini_are_kept(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(json_reply(body([call("add", {"a": 1}, call_id="fc-9")])))
    (tool_call,) = (await adapter.chat([UserMessage("go")])).message.tool_calls
    assert (tool_call.id, tool_call.provider_details) == ("fc-9", {"function_call_id": "fc-9"})


async def test_stream_yields_deltas_in_order_then_exactly_one_completion(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    items = chunks(
        [thought("Thinking about "), thought("tools.")],
        [text("I'll add.")],
        [call("add", {"a": 2, "b": 3}, signature=SIGNATURE), call("now", {})],
        meta=usage(prompt=30, candidates=9, thoughts=21, cached=10),
    )
    events = await stream_events(adapter, wire_server, items)
    first_id, second_id = f"call_{RESPONSE_ID}_0", f"call_{RESPONSE_ID}_1"
    assert events[:-1] == [
        ReasoningDelta("Thinking about "),
        ReasoningDelta("tools."),
        TextDelta("I'll add."),
        ToolCallStarted(0, first_id, "add"),
        ToolCallArgsDelta(0, first_id, '{"a": 2, "b": 3}'),
        ToolCallStarted(1, second_id, "now"),
        ToolCallArgsDelta(1, second_id, "{}"),
    ]
    response = completed(events)
    assert response.stop_reason is StopReason.END_TURN
    assert response.message.reasoning == (ReasoningPart(text="Thinking about tools.", provider="gemini"),)
    assert response.usage == Usage(
        input_tokens=30, output_tokens=30, reasoning_tokens=21, cached_tokens=10, requests=1
    )


async def test_chat_returns_the_response_the_stream_assembles(
    wire_server: WireServer, adapter: GeminiAdapter
) -> None:
    parts = [
        thought("hmm"),
        text("Answer: ", signature=SIGNATURE_2),
        text("42"),
        call("add", {"a": 1}, signature=SIGNATURE),
    ]
    meta = usage(prompt=5, candidates=6, thoughts=7)
    wire_server.enqueue(json_reply(body(parts, meta=meta)))
    whole = await adapter.chat([UserMessage("q")])
    streamed = completed(await stream_events(adapter, wire_server, chunks(parts[:2], parts[2:], meta=meta)))
    assert streamed == whole
    assert whole.message.text == "Answer: 42"
    assert whole.message.reasoning == (
        ReasoningPart(text="hmm", provider="gemini"),
        ReasoningPart(provider="gemini", payload={"thought_signature": SIGNATURE_2, "part": "text"}),
    )


async def test_max_tokens_maps_to_max_tokens(adapter: GeminiAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(json_reply(body([text("cut sh")], finish="MAX_TOKENS")))
    response = await adapter.chat([UserMessage("q")])
    assert response.stop_reason is StopReason.MAX_TOKENS
    assert response.message.provider_details is None


@pytest.mark.parametrize("reason", ["SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL", "OTHER"])
async def test_abnormal_finish_reasons_give_no_stop_reason_and_keep_the_raw_value(
    adapter: GeminiAdapter, wire_server: WireServer, reason: str
) -> None:
    events = await stream_events(adapter, wire_server, [body([], finish=reason)])
    response = completed(events)
    assert response.stop_reason is None
    assert response.message.provider_details == {"finish_reason": reason}


async def test_blocked_prompt_completes_with_no_stop_reason_and_the_block_reason(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage(prompt=9, candidates=0)}
    response = completed(await stream_events(adapter, wire_server, [blocked]))
    assert response.stop_reason is None
    assert response.message.text == ""
    assert response.message.provider_details == {"block_reason": "SAFETY"}
    assert response.usage.input_tokens == 9


async def test_stream_usage_is_the_last_running_total(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    items = chunks([text("a")], [text("b")], [text("c")], meta=usage(prompt=11, candidates=3))
    response = completed(await stream_events(adapter, wire_server, items))
    assert response.usage == Usage(input_tokens=11, output_tokens=3, requests=1)


async def test_text_signature_from_a_signature_only_chunk_is_kept_for_replay(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    """Gemini may close a stream with an empty text part that only carries the signature."""
    items = chunks([text("Done.")], [text("", signature=SIGNATURE)])
    events = await stream_events(adapter, wire_server, items)
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("Done.")]
    assert completed(events).message.reasoning == (
        ReasoningPart(provider="gemini", payload={"thought_signature": SIGNATURE, "part": "text"}),
    )
