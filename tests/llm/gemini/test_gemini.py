"""GeminiAdapter at the wire: endpoints, credentials, timeouts and faults (seed 002 §3-3, §7).

Every test talks HTTP to the loopback ``wire_server`` through the real ``google-genai`` SDK."""

from __future__ import annotations

import pytest
from google import genai
from google.genai import types

from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMTimeoutError,
)
from kanawa.llm.gemini.adapter import GeminiAdapter, split_base_url
from kanawa.llm.models import resolve_model
from kanawa.llm.retry import RetryingLLM
from kanawa.llm.settings import ModelSettings
from kanawa.types import ResponseCompleted, StreamEvent, TextDelta, UserMessage
from tests.llm.gemini.wire import (
    API_KEY,
    PROMPT,
    body,
    chunks,
    collect,
    drain_into,
    sse_bytes,
    stream_reply,
    text,
)
from tests.wire.server import Delay, Disconnect, Reply, WireServer, json_reply

# ------------------------------------------------------------------------------------ endpoints


async def test_chat_posts_generate_content_for_the_model_with_the_key_header(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(json_reply(body([text("hi")])))
    await adapter.chat([UserMessage("hello")])
    request = wire_server.requests[0]
    assert request.method == "POST"
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert request.headers["x-goog-api-key"] == API_KEY
    assert "authorization" not in request.headers


async def test_stream_posts_stream_generate_content_with_alt_sse(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream_reply(chunks([text("hi")])))
    await collect(adapter)
    assert wire_server.requests[0].path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


async def test_base_url_ending_in_an_api_version_selects_that_version(wire_server: WireServer) -> None:
    adapter = GeminiAdapter("gemini-2.5-flash", api_key=API_KEY, base_url=f"{wire_server.base_url}/v1/")
    wire_server.enqueue(json_reply(body([text("hi")])))
    await adapter.chat([UserMessage("hello")])
    assert wire_server.requests[0].path == "/v1/models/gemini-2.5-flash:generateContent"


def test_split_base_url_keeps_roots_and_pins_v1beta() -> None:
    assert split_base_url(None) == (None, "v1beta")
    assert split_base_url("https://proxy.example/gemini/") == ("https://proxy.example/gemini", "v1beta")
    assert split_base_url("https://h/v1alpha") == ("https://h", "v1alpha")


async def test_resolve_model_builds_the_gemini_adapter_from_a_model_string(wire_server: WireServer) -> None:
    llm = resolve_model(f"gemini:gemini-2.5-pro@{wire_server.base_url}/v1beta", api_key=API_KEY)
    assert isinstance(llm, RetryingLLM)
    assert isinstance(llm.primary, GeminiAdapter)
    assert isinstance(llm.primary, LLMAdapter)
    assert (llm.provider, llm.model) == ("gemini", "gemini-2.5-pro")
    wire_server.enqueue(json_reply(body([text("ok")])))
    assert (await llm.chat([UserMessage("q")])).message.text == "ok"
    assert wire_server.requests[0].path == "/v1beta/models/gemini-2.5-pro:generateContent"


def test_normalize_model_name_lowercases_and_strips_prefixes(adapter: GeminiAdapter) -> None:
    assert adapter.normalize_model_name() == "gemini-2.5-flash"
    assert adapter.normalize_model_name("models/Gemini-2.5-Pro") == "gemini-2.5-pro"
    assert adapter.normalize_model_name("gemini:models/gemini-3-pro-preview") == "gemini-3-pro-preview"
    assert adapter.normalize_model_name(" google:Gemini-2.0-Flash ") == "gemini-2.0-flash"
    assert GeminiAdapter("gemini:gemini-2.5-pro", api_key=API_KEY).model == "gemini-2.5-pro"


async def test_a_ready_sdk_client_is_used_as_given(wire_server: WireServer) -> None:
    client = genai.Client(
        api_key="client-own-key",
        http_options=types.HttpOptions(base_url=wire_server.base_url, api_version="v1alpha"),
    )
    adapter = GeminiAdapter("gemini-2.5-flash", client=client)
    wire_server.enqueue(json_reply(body([text("ok")])))
    try:
        assert (await adapter.chat([UserMessage("q")])).message.text == "ok"
        await adapter.aclose()  # the caller's client stays open: one more request goes through
        wire_server.enqueue(json_reply(body([text("again")])))
        assert (await adapter.chat([UserMessage("q")])).message.text == "again"
    finally:
        await client.aio.aclose()
    request = wire_server.requests[0]
    assert request.path == "/v1alpha/models/gemini-2.5-flash:generateContent"
    assert request.headers["x-goog-api-key"] == "client-own-key"


def test_count_tokens_is_offline_and_grows_with_the_prompt(adapter: GeminiAdapter) -> None:
    short = adapter.count_tokens("hello")
    longer = adapter.count_tokens([UserMessage("hello " * 50)])
    assert 0 < short < longer


# ------------------------------------------------------------------------------------ credentials


def test_missing_key_raises_auth_error_naming_both_variables() -> None:
    with pytest.raises(LLMAuthError) as caught:
        GeminiAdapter("gemini-2.5-flash")
    message = str(caught.value)
    assert "GEMINI_API_KEY" in message
    assert "GOOGLE_API_KEY" in message
    assert "\n" not in message


async def test_key_comes_from_gemini_api_key_before_google_api_key(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    only_google = GeminiAdapter("gemini-2.5-flash", base_url=wire_server.base_url)
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    both = GeminiAdapter("gemini-2.5-flash", base_url=wire_server.base_url)
    explicit = GeminiAdapter("gemini-2.5-flash", api_key="explicit-key", base_url=wire_server.base_url)
    for llm in (only_google, both, explicit):
        wire_server.enqueue(json_reply(body([text("ok")])))
        await llm.chat([UserMessage("q")])
    keys = [r.headers["x-goog-api-key"] for r in wire_server.requests]
    assert keys == ["google-key", "gemini-key", "explicit-key"]


# ---------------------------------------------------------------------------------------- timeouts


async def test_timeout_reaches_the_request_and_settings_override_the_constructor(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(json_reply(body([text("a")])), json_reply(body([text("b")])))
    await adapter.chat([UserMessage("q")])
    await adapter.chat([UserMessage("q")], settings=ModelSettings(timeout=42.0))
    assert [r.headers["x-server-timeout"] for r in wire_server.requests] == ["5", "42"]


async def test_slow_server_hits_the_timeout_in_chat(wire_server: WireServer) -> None:
    adapter = GeminiAdapter("gemini-2.5-flash", api_key=API_KEY, base_url=wire_server.base_url, timeout=0.3)
    wire_server.enqueue(Reply(200, {"content-type": "application/json"}, [Delay(5), b"{}"]))
    with pytest.raises(LLMTimeoutError) as caught:
        await adapter.chat([UserMessage(PROMPT)])
    assert caught.value.retryable


async def test_stream_that_stalls_mid_way_hits_the_timeout(wire_server: WireServer) -> None:
    adapter = GeminiAdapter("gemini-2.5-flash", api_key=API_KEY, base_url=wire_server.base_url, timeout=0.3)
    first, *_ = chunks([text("Hel")], [text("lo")])
    wire_server.enqueue(stream_reply([first], Delay(5)))
    seen: list[StreamEvent] = []
    with pytest.raises(LLMTimeoutError):
        await drain_into(seen, adapter)
    assert seen == [TextDelta("Hel")]


# ------------------------------------------------------------------------------------ stream faults


@pytest.mark.parametrize("newline", [b"\r\n", b"\n"], ids=["crlf", "lf"])
async def test_sse_split_mid_line_and_mid_json_is_reassembled(
    adapter: GeminiAdapter, wire_server: WireServer, newline: bytes
) -> None:
    raw = sse_bytes(chunks([text("Hel")], [text("lo, ")], [text("world")])).replace(b"\r\n", newline)
    pieces: list[bytes | Delay] = [raw[i : i + 7] for i in range(0, len(raw), 7)]
    wire_server.enqueue(Reply(200, {"content-type": "text/event-stream"}, list(pieces)))
    events = await collect(adapter)
    assert [e for e in events if isinstance(e, TextDelta)] == [
        TextDelta("Hel"),
        TextDelta("lo, "),
        TextDelta("world"),
    ]
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.message.text == "Hello, world"


async def test_mid_stream_disconnect_raises_connection_error_after_the_delivered_deltas(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    first, second = chunks([text("Hel")], [text("lo")])
    raw_second = sse_bytes([second])
    wire_server.enqueue(stream_reply([first], raw_second[: len(raw_second) // 2], Disconnect()))
    seen: list[StreamEvent] = []
    with pytest.raises(LLMConnectionError) as caught:
        await drain_into(seen, adapter)
    assert seen == [TextDelta("Hel")]
    assert caught.value.retryable
    assert not any(isinstance(e, ResponseCompleted) for e in seen)


async def test_stream_that_ends_cleanly_without_a_finish_reason_is_a_connection_error(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream_reply([body([text("Hel")], finish=None)]))
    with pytest.raises(LLMConnectionError, match="finish reason"):
        await collect(adapter)


async def test_consumer_leaving_the_stream_early_closes_it_and_the_adapter_stays_usable(
    adapter: GeminiAdapter, wire_server: WireServer
) -> None:
    wire_server.enqueue(stream_reply(chunks([text("one")], [text("two")], [text("three")])))
    stream = adapter.stream([UserMessage(PROMPT)])
    first = await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]
    assert first == TextDelta("one")
    wire_server.enqueue(json_reply(body([text("again")])))
    assert (await adapter.chat([UserMessage("q")])).message.text == "again"
