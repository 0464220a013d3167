"""Faults from an OpenAI-compatible server → kanawa's LLMError hierarchy (seed 002 §3-3, §7)."""

from __future__ import annotations

import pytest

from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
)
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.types import ResponseCompleted, StreamEvent, TextDelta, UserMessage
from tests.llm.openai_chat.conftest import API_KEY
from tests.llm.openai_chat.wire import chunk, completion, error_body, stream, usage_chunk
from tests.wire.server import Delay, Disconnect, Reply, WireServer, json_reply

SECRET_PROMPT = "the launch code is 0000"


async def drain(adapter: OpenAIChatAdapter, **kwargs: object) -> list[StreamEvent]:
    return [e async for e in adapter.stream([UserMessage(SECRET_PROMPT)], **kwargs)]  # type: ignore[arg-type]


def assert_clean(error: LLMError) -> None:
    text = str(error)
    assert SECRET_PROMPT not in text
    assert API_KEY not in text
    assert "\n" not in text


async def test_chunks_split_mid_line_are_reassembled(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    reply = stream(chunk({"content": "Bonjour, "}), chunk({"content": "monde"}, finish="stop"), usage_chunk())
    whole = b"".join(p for p in reply.body if isinstance(p, bytes))
    pieces: list[bytes | Delay] = []
    for start in range(0, len(whole), 5):
        pieces += [whole[start : start + 5], Delay(0.0)]
    wire_server.enqueue(Reply(200, {"content-type": "text/event-stream"}, list(pieces)))
    events = await drain(adapter)
    assert events[:-1] == [TextDelta("Bonjour, "), TextDelta("monde")]
    last = events[-1]
    assert isinstance(last, ResponseCompleted)
    assert last.response.usage.input_tokens == 31


async def test_mid_stream_disconnect_is_a_connection_error(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(chunk({"content": "par"}), Disconnect()))
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in adapter.stream([UserMessage(SECRET_PROMPT)]):
            seen.append(event)

    with pytest.raises(LLMConnectionError) as info:
        await consume()
    assert seen == [TextDelta("par")]
    assert info.value.retryable
    assert_clean(info.value)


async def test_malformed_chunk_is_a_connection_error(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream(chunk({"content": "ok"}), b'data: {"id": "chatcmpl-1", "choices": [\n\n'))
    with pytest.raises(LLMConnectionError, match="malformed") as info:
        await drain(adapter)
    assert info.value.retryable


async def test_error_payload_inside_the_stream(adapter: OpenAIChatAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(
        stream(chunk({"content": "x"}), (None, error_body("The server is overloaded", code="server_error")))
    )
    with pytest.raises(LLMConnectionError) as info:
        await drain(adapter)
    assert info.value.code == "server_error"
    assert info.value.retryable


@pytest.mark.parametrize(
    ("headers", "expected"), [({"retry-after": "3"}, 3.0), ({"retry-after-ms": "250"}, 0.25)]
)
async def test_429_carries_retry_after(
    adapter: OpenAIChatAdapter, wire_server: WireServer, headers: dict[str, str], expected: float
) -> None:
    body = error_body("Rate limit reached", code="rate_limit_exceeded", kind="requests")
    wire_server.enqueue(json_reply(body, status=429, headers={"x-request-id": "req_429", **headers}))
    with pytest.raises(LLMRateLimitError) as info:
        await adapter.chat([UserMessage(SECRET_PROMPT)])
    assert (info.value.retry_after, info.value.status_code, info.value.request_id) == (
        expected,
        429,
        "req_429",
    )
    assert_clean(info.value)
    assert len(wire_server.requests) == 1  # no SDK retries


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_are_retryable(
    adapter: OpenAIChatAdapter, wire_server: WireServer, status: int
) -> None:
    wire_server.enqueue(json_reply(error_body("upstream failed", kind="server_error"), status=status))
    with pytest.raises(LLMConnectionError) as info:
        await drain(adapter)
    assert (info.value.status_code, info.value.retryable) == (status, True)
    assert len(wire_server.requests) == 1


async def test_401_is_an_auth_error_and_an_echoed_key_is_scrubbed(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    body = error_body(f"Incorrect API key provided: {API_KEY}.", code="invalid_api_key")
    wire_server.enqueue(json_reply(body, status=401))
    with pytest.raises(LLMAuthError) as info:
        await adapter.chat([UserMessage(SECRET_PROMPT)])
    assert info.value.status_code == 401
    assert_clean(info.value)
    assert "[REDACTED]" in str(info.value)


async def test_400_is_a_bad_request(adapter: OpenAIChatAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(json_reply(error_body("'tools' is not supported by this model"), status=400))
    with pytest.raises(LLMBadRequestError) as info:
        await adapter.chat([UserMessage(SECRET_PROMPT)])
    assert "not supported" in str(info.value)
    assert not info.value.retryable


async def test_slow_stream_times_out(adapter: OpenAIChatAdapter, wire_server: WireServer) -> None:
    wire_server.enqueue(stream(chunk({"content": "a"}), Delay(3.0), chunk({"content": "b"}, finish="stop")))
    with pytest.raises(LLMTimeoutError):
        await drain(adapter, settings=ModelSettings(timeout=0.3))


async def test_slow_chat_times_out(wire_server: WireServer) -> None:
    adapter = OpenAIChatAdapter("llama3", base_url=f"{wire_server.base_url}/v1", timeout=0.3)
    slow = completion({"content": "late"})
    wire_server.enqueue(Reply(slow.status, slow.headers, [Delay(3.0), *slow.body]))
    with pytest.raises(LLMTimeoutError):
        await adapter.chat([UserMessage("?")])


async def test_connection_refused_is_a_connection_error() -> None:
    adapter = OpenAIChatAdapter("llama3", base_url="http://127.0.0.1:9/v1", timeout=2.0)
    with pytest.raises(LLMConnectionError):
        await adapter.chat([UserMessage("?")])
