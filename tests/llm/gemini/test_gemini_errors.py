"""Gemini faults → the LLMError hierarchy (seed 002 §3-3, §7; :mod:`kanawa.llm.gemini.errors`):
HTTP statuses, ``Retry-After`` and ``RetryInfo``, malformed bodies, in-stream errors, refused
connections — and no key or prompt text in any message.

Every test talks HTTP to the loopback ``wire_server`` through the real ``google-genai`` SDK."""

from __future__ import annotations

import socket

import pytest

from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
)
from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.types import UserMessage
from tests.llm.gemini.wire import (
    API_KEY,
    PROMPT,
    chunks,
    collect,
    error_reply,
    stream_reply,
    text,
)
from tests.wire.server import Reply, WireServer

# ------------------------------------------------------------------------------------ HTTP errors


async def test_429_with_retry_after_is_a_rate_limit_error_and_the_sdk_does_not_retry(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        error_reply(429, "Resource has been exhausted", "RESOURCE_EXHAUSTED", headers={"retry-after": "3"})
    )
    with pytest.raises(LLMRateLimitError) as caught:
        await adapter.chat([UserMessage(PROMPT)])
    error = caught.value
    assert (error.status_code, error.retry_after, error.code) == (429, 3.0, "RESOURCE_EXHAUSTED")
    assert error.retryable
    assert len(wire_server.requests) == 1


async def test_429_retry_info_retry_delay_gives_retry_after_on_a_stream(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7.5s"}
    quota = {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []}
    wire_server.enqueue(error_reply(429, "Quota exceeded", "RESOURCE_EXHAUSTED", details=[quota, retry_info]))
    with pytest.raises(LLMRateLimitError) as caught:
        await collect(adapter)
    assert caught.value.retry_after == 7.5


@pytest.mark.parametrize(
    ("status", "state", "expected"),
    [
        (400, "INVALID_ARGUMENT", LLMBadRequestError),
        (401, "UNAUTHENTICATED", LLMAuthError),
        (403, "PERMISSION_DENIED", LLMAuthError),
        (404, "NOT_FOUND", LLMBadRequestError),
        (500, "INTERNAL", LLMConnectionError),
        (503, "UNAVAILABLE", LLMConnectionError),
    ],
)
async def test_status_errors_map_to_the_llm_error_hierarchy(
    adapter: GeminiAdapter, wire_server: WireServer, status: int, state: str, expected: type[LLMError]
) -> None:
    wire_server.enqueue(error_reply(status, f"server says {state}", state))
    with pytest.raises(expected) as caught:
        await adapter.chat([UserMessage(PROMPT)])
    assert caught.value.status_code == status
    assert f"server says {state}" in str(caught.value)
    assert len(wire_server.requests) == 1


async def test_stream_status_errors_are_mapped_before_any_event(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(error_reply(503, "The model is overloaded.", "UNAVAILABLE"))
    with pytest.raises(LLMConnectionError) as caught:
        await collect(adapter)
    assert caught.value.status_code == 503
    assert caught.value.retryable


async def test_non_json_error_page_still_maps_by_status(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(Reply(502, {"content-type": "text/html"}, [b"<html>bad gateway</html>"]))
    with pytest.raises(LLMConnectionError) as caught:
        await adapter.chat([UserMessage(PROMPT)])
    assert caught.value.status_code == 502


async def test_error_messages_never_contain_the_key_or_the_prompt(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(error_reply(400, "Request contains an invalid argument.", "INVALID_ARGUMENT"))
    with pytest.raises(LLMBadRequestError) as caught:
        await adapter.chat([UserMessage(PROMPT)])
    rendered = f"{caught.value} {caught.value.message!r}"
    assert API_KEY not in rendered
    assert PROMPT not in rendered


# ------------------------------------------------------------------------------- malformed and refused


async def test_malformed_sse_event_is_a_connection_error(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    first, _ = chunks([text("Hel")], [text("lo")])
    wire_server.enqueue(stream_reply([first], b'data: {"candidates": [{"content": \r\n\r\n'))
    with pytest.raises(LLMConnectionError, match="malformed stream event"):
        await collect(adapter)


async def test_event_with_the_wrong_shape_is_a_connection_error(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream_reply([{"candidates": 5}]))
    with pytest.raises(LLMConnectionError, match="malformed"):
        await collect(adapter)


async def test_error_event_inside_the_stream_is_mapped_by_its_code(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    first, _ = chunks([text("Hel")], [text("lo")])
    error = {"error": {"code": 500, "message": "An internal error has occurred.", "status": "INTERNAL"}}
    wire_server.enqueue(stream_reply([first, error]))
    with pytest.raises(LLMConnectionError) as caught:
        await collect(adapter)
    assert caught.value.status_code == 500


async def test_refused_connection_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    adapter = GeminiAdapter(
        "gemini-2.5-flash", api_key=API_KEY, base_url=f"http://127.0.0.1:{port}", timeout=5
    )
    with pytest.raises(LLMConnectionError) as caught:
        await adapter.chat([UserMessage(PROMPT)])
    assert caught.value.message == "connection error"
