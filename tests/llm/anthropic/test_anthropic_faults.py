"""Provider faults at the wire → kanawa's LLMError hierarchy (seed 002 §3-3, §7): statuses, Retry-After,
in-stream error events, disconnects, malformed events, split chunks and timeouts."""

from __future__ import annotations

import pytest

from kanawa.llm.anthropic.adapter import AnthropicAdapter
from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
)
from kanawa.llm.settings import ModelSettings
from kanawa.types import ResponseCompleted, StreamEvent, TextDelta, UserMessage
from tests.llm.anthropic.conftest import API_KEY
from tests.llm.anthropic.wire import error_body, message, message_end, message_start, stream, text_block
from tests.wire.server import Delay, Disconnect, Reply, WireServer, json_reply

SECRET_PROMPT = "my private diary entry 4711"


async def drain(adapter: AnthropicAdapter, **kwargs: object) -> list[StreamEvent]:
    return [e async for e in adapter.stream([UserMessage(SECRET_PROMPT)], **kwargs)]  # type: ignore[arg-type]


def assert_clean(error: LLMError) -> None:
    text = str(error)
    assert SECRET_PROMPT not in text
    assert API_KEY not in text
    assert "\n" not in text


async def test_chunks_split_mid_line_are_reassembled(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    whole = b"".join(
        piece
        for piece in stream(
            message_start(), *text_block(0, "Hello, ", "world"), *message_end("end_turn")
        ).body
        if isinstance(piece, bytes)
    )
    pieces: list[bytes | Delay] = []
    for start in range(0, len(whole), 7):
        pieces += [whole[start : start + 7], Delay(0.0)]
    wire_server.enqueue(Reply(200, {"content-type": "text/event-stream"}, list(pieces)))
    events = await drain(adapter)
    assert events[:-1] == [TextDelta("Hello, "), TextDelta("world")]
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.message.text == "Hello, world"


async def test_mid_stream_disconnect_is_a_connection_error(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(message_start(), *text_block(0, "partial")[:2], Disconnect()))
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in adapter.stream([UserMessage(SECRET_PROMPT)]):
            seen.append(event)

    with pytest.raises(LLMConnectionError) as info:
        await consume()
    assert seen == [TextDelta("partial")]
    assert info.value.retryable
    assert_clean(info.value)


async def test_stream_that_ends_without_message_stop_is_a_connection_error(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(message_start(), *text_block(0, "cut")))
    with pytest.raises(LLMConnectionError, match="message_stop"):
        await drain(adapter)


async def test_malformed_event_is_a_connection_error(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        stream(message_start(), b'event: content_block_start\ndata: {"type": "content_block_st\n\n')
    )
    with pytest.raises(LLMConnectionError, match="malformed") as info:
        await drain(adapter)
    assert info.value.retryable


async def test_delta_for_unknown_block_is_a_connection_error(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    delta = {"type": "content_block_delta", "index": 5, "delta": {"type": "text_delta", "text": "x"}}
    wire_server.enqueue(stream(message_start(), ("content_block_delta", delta)))
    with pytest.raises(LLMConnectionError, match="malformed"):
        await drain(adapter)


async def test_overloaded_error_event_is_retryable(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        stream(
            message_start(), *text_block(0, "Hi")[:2], ("error", error_body("overloaded_error", "Overloaded"))
        )
    )
    with pytest.raises(LLMConnectionError) as info:
        await drain(adapter)
    error = info.value
    assert error.retryable
    assert (error.code, error.status_code, error.provider) == ("overloaded_error", 529, "anthropic")
    assert "Overloaded" in str(error)


async def test_invalid_request_error_event_is_a_bad_request(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(("error", error_body("invalid_request_error", "prompt is too long"))))
    with pytest.raises(LLMBadRequestError) as info:
        await drain(adapter)
    assert not info.value.retryable


@pytest.mark.parametrize(
    ("headers", "expected"),
    [({"retry-after": "7"}, 7.0), ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5), ({}, None)],
)
async def test_429_carries_retry_after(
    adapter: AnthropicAdapter, wire_server: WireServer, headers: dict[str, str], expected: float | None
) -> None:
    reply = json_reply(
        error_body("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
        status=429,
        headers={"request-id": "req_429", **headers},
    )
    wire_server.enqueue(reply)
    with pytest.raises(LLMRateLimitError) as info:
        await adapter.chat([UserMessage(SECRET_PROMPT)])
    error = info.value
    assert error.retry_after == expected
    assert (error.status_code, error.request_id, error.code) == (429, "req_429", "rate_limit_error")
    assert_clean(error)
    assert len(wire_server.requests) == 1  # the SDK never retries on its own


@pytest.mark.parametrize("status", [500, 502, 503, 529])
async def test_server_errors_are_retryable_connection_errors(
    adapter: AnthropicAdapter, wire_server: WireServer, status: int
) -> None:
    wire_server.enqueue(json_reply(error_body("api_error", "Internal server error"), status=status))
    with pytest.raises(LLMConnectionError) as info:
        await drain(adapter)
    assert info.value.status_code == status
    assert info.value.retryable
    assert len(wire_server.requests) == 1


async def test_401_is_an_auth_error_without_the_key(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        json_reply(error_body("authentication_error", f"invalid x-api-key {API_KEY}"), status=401)
    )
    with pytest.raises(LLMAuthError) as info:
        await adapter.chat([UserMessage(SECRET_PROMPT)])
    assert info.value.status_code == 401
    assert str(info.value).endswith("authentication_error: invalid x-api-key [REDACTED] (HTTP 401)")
    assert_clean(info.value)


async def test_400_is_a_bad_request_with_request_id(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    reply = json_reply(
        error_body("invalid_request_error", "messages.1.content: tool_use ids must be unique"),
        status=400,
        headers={"request-id": "req_400"},
    )
    wire_server.enqueue(reply)
    with pytest.raises(LLMBadRequestError) as info:
        await adapter.chat([UserMessage(SECRET_PROMPT)])
    assert (info.value.status_code, info.value.request_id) == (400, "req_400")
    assert "tool_use ids must be unique" in str(info.value)
    assert not info.value.retryable


async def test_non_json_error_body_still_maps(adapter: AnthropicAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(Reply(502, {"content-type": "text/html"}, [b"<html>Bad Gateway</html>"]))
    with pytest.raises(LLMConnectionError) as info:
        await adapter.chat([UserMessage("?")])
    assert info.value.status_code == 502


async def test_slow_stream_times_out(adapter: AnthropicAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(stream(message_start(), Delay(3.0), *text_block(0, "late"), *message_end("end_turn")))
    with pytest.raises(LLMTimeoutError) as info:
        await drain(adapter, settings=ModelSettings(timeout=0.3))
    assert info.value.retryable


async def test_slow_chat_times_out(wire_server: WireServer) -> None:
    adapter = AnthropicAdapter("claude-sonnet-5", api_key=API_KEY, base_url=wire_server.base_url, timeout=0.3)
    slow = message([{"type": "text", "text": "late"}])
    wire_server.enqueue(Reply(slow.status, slow.headers, [Delay(3.0), *slow.body]))
    with pytest.raises(LLMTimeoutError):
        await adapter.chat([UserMessage("?")])


async def test_response_without_json_is_a_connection_error(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(Reply(200, {"content-type": "application/json"}, [b"{not json"]))
    with pytest.raises(LLMConnectionError, match="malformed") as info:
        await adapter.chat([UserMessage(SECRET_PROMPT)])
    assert info.value.model == "claude-sonnet-5"
    assert_clean(info.value)
