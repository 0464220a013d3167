"""Prompt caching through each provider's wire protocol (real HTTP, official SDKs): the request carries
the cache controls ``ModelSettings(cache=PromptCache(...))`` asks for, and the cached tokens the
server reports (read and written) reach ``Usage`` and are priced by genai-prices' cache rates."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from genai_prices import Usage as LibraryUsage
from genai_prices import calc_price

from kanawa.llm import ModelSettings, PromptCache
from kanawa.llm.anthropic.adapter import AnthropicAdapter
from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.llm.pricing import ModelPrice, PriceTable, quote_of
from kanawa.types import LLMResponse, ResponseCompleted, SystemMessage, ToolSpec, Usage, UserMessage
from tests.llm.anthropic import wire as anthropic_wire
from tests.llm.gemini import wire as gemini_wire
from tests.llm.openai_chat import wire as chat_wire
from tests.llm.openai_responses.wire import ResponseScript
from tests.wire.server import WireServer

SYSTEM = "You are a careful assistant. " * 40
TOOL = ToolSpec("lookup", "Look a word up.", {"type": "object", "properties": {"word": {"type": "string"}}})
MESSAGES = [SystemMessage(SYSTEM), UserMessage("first question"), UserMessage("the latest question")]


def library_price(model: str, provider: str, **counts: int) -> float:
    """The oracle: genai-prices' own price for these counts."""
    price: Decimal = calc_price(LibraryUsage(**counts), model, provider_id=provider).total_price
    return float(price)


@pytest.fixture(autouse=True)
def _library_prices_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KANAWA_PRICES", raising=False)


async def _streamed(adapter: Any, settings: ModelSettings, tools: list[ToolSpec]) -> LLMResponse:
    final: LLMResponse | None = None
    async for event in adapter.stream(MESSAGES, tools=tools, settings=settings):
        if isinstance(event, ResponseCompleted):
            final = event.response
    assert final is not None
    return final


# ---------------------------------------------------------------------------------------- Anthropic


async def test_anthropic_breakpoints_on_tools_system_and_last_user_turn(wire_server: WireServer) -> None:
    wire_server.enqueue(
        anthropic_wire.stream(
            anthropic_wire.message_start(
                model="claude-sonnet-4-6",
                input_tokens=40,
                cache_read_input_tokens=3000,
                cache_creation_input_tokens=500,
            ),
            anthropic_wire.text_block(0, "cached ", "answer"),
            anthropic_wire.message_end("end_turn", output_tokens=20),
        )
    )
    adapter = AnthropicAdapter(
        "claude-sonnet-4-6", api_key="sk-ant-test-key-123", base_url=wire_server.base_url, timeout=5.0
    )
    response = await _streamed(adapter, ModelSettings(cache=PromptCache(ttl="1h")), [TOOL])

    sent = wire_server.requests[0].json()
    control = {"type": "ephemeral", "ttl": "1h"}
    assert sent["tools"][-1]["cache_control"] == control
    assert sent["system"] == [{"type": "text", "text": SYSTEM, "cache_control": control}]
    last_user = sent["messages"][-1]
    assert last_user["role"] == "user"
    assert last_user["content"][-1]["cache_control"] == control
    assert all("cache_control" not in block for block in last_user["content"][:-1])

    assert response.usage == Usage(
        input_tokens=3540, output_tokens=20, cached_tokens=3000, cache_write_tokens=500, requests=1
    )
    quote = quote_of("anthropic:claude-sonnet-4-6", response.usage)
    assert quote is not None
    assert quote.source.name == "genai-prices"
    expected = library_price(
        "claude-sonnet-4-6",
        "anthropic",
        input_tokens=3540,
        cache_read_tokens=3000,
        cache_write_tokens=500,
        output_tokens=20,
    )
    assert quote.cost_usd == pytest.approx(expected)
    uncached = quote_of("anthropic:claude-sonnet-4-6", Usage(input_tokens=3540, output_tokens=20))
    assert uncached is not None
    assert quote.cost_usd < uncached.cost_usd


async def test_anthropic_breakpoints_follow_the_setting(wire_server: WireServer) -> None:
    wire_server.enqueue(anthropic_wire.message([{"type": "text", "text": "ok"}]))
    adapter = AnthropicAdapter(
        "claude-sonnet-4-6", api_key="sk-ant-test-key-123", base_url=wire_server.base_url, timeout=5.0
    )
    await adapter.chat(
        MESSAGES, tools=[TOOL], settings=ModelSettings(cache=PromptCache(breakpoints=("system",)))
    )
    sent = wire_server.requests[0].json()
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in sent["tools"][-1]
    assert all("cache_control" not in block for turn in sent["messages"] for block in turn["content"])


async def test_anthropic_sends_no_breakpoint_without_the_setting(wire_server: WireServer) -> None:
    wire_server.enqueue(anthropic_wire.message([{"type": "text", "text": "ok"}]))
    adapter = AnthropicAdapter(
        "claude-sonnet-4-6", api_key="sk-ant-test-key-123", base_url=wire_server.base_url, timeout=5.0
    )
    await adapter.chat(MESSAGES, tools=[TOOL])
    assert "cache_control" not in wire_server.requests[0].body.decode()


# ------------------------------------------------------------------------------------------- OpenAI


async def test_openai_responses_sends_cache_key_and_retention_and_prices_cache_reads(
    wire_server: WireServer,
) -> None:
    usage = {
        "input_tokens": 5000,
        "input_tokens_details": {"cached_tokens": 4096, "cache_write_tokens": 0},
        "output_tokens": 60,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 5060,
    }
    wire_server.enqueue(ResponseScript(model="gpt-5.2").message("hello").completed(usage).sse())
    adapter = OpenAIResponsesAdapter("gpt-5.2", api_key="sk-test-cache-1", base_url=wire_server.base_url)
    settings = ModelSettings(cache=PromptCache(key="tenant-42:agent", retention="24h"))
    response = await _streamed(adapter, settings, [])

    sent = wire_server.requests[0].json()
    assert sent["prompt_cache_key"] == "tenant-42:agent"
    assert sent["prompt_cache_retention"] == "24h"
    assert response.usage.cached_tokens == 4096
    assert response.usage.input_tokens == 5000
    quote = quote_of("openai:gpt-5.2", response.usage)
    expected = library_price("gpt-5.2", "openai", input_tokens=5000, cache_read_tokens=4096, output_tokens=60)
    assert quote is not None
    assert quote.cost_usd == pytest.approx(expected)


async def test_openai_chat_sends_cache_key_and_reads_cache_writes(wire_server: WireServer) -> None:
    details = {"cached_tokens": 1024, "cache_write_tokens": 2048}
    wire_server.enqueue(
        chat_wire.completion(
            {"content": "hi"},
            usage={
                "prompt_tokens": 4000,
                "completion_tokens": 10,
                "total_tokens": 4010,
                "prompt_tokens_details": details,
            },
        )
    )
    adapter = OpenAIChatAdapter("gpt-5.2", api_key="sk-test-cache-2", base_url=f"{wire_server.base_url}/v1")
    response = await adapter.chat(MESSAGES, settings=ModelSettings(cache=PromptCache(key="k1")))

    sent = wire_server.requests[0].json()
    assert sent["prompt_cache_key"] == "k1"
    assert "prompt_cache_retention" not in sent
    assert response.usage.cached_tokens == 1024
    assert response.usage.cache_write_tokens == 2048


async def test_openai_sends_no_cache_fields_without_the_setting(wire_server: WireServer) -> None:
    wire_server.enqueue(chat_wire.completion({"content": "hi"}))
    adapter = OpenAIChatAdapter("gpt-5.2", api_key="sk-test-cache-3", base_url=f"{wire_server.base_url}/v1")
    await adapter.chat(MESSAGES)
    assert "prompt_cache" not in wire_server.requests[0].body.decode()


# ------------------------------------------------------------------------------------------- Gemini


async def test_gemini_cached_content_reference_and_implicit_cached_tokens(wire_server: WireServer) -> None:
    meta = gemini_wire.usage(prompt=8000, candidates=30, cached=6000)
    wire_server.enqueue(gemini_wire.stream_reply(gemini_wire.chunks([gemini_wire.text("ok")], meta=meta)))
    adapter = GeminiAdapter("gemini-2.5-flash", api_key=gemini_wire.API_KEY, base_url=wire_server.base_url)
    try:
        settings = ModelSettings(cache=PromptCache(cached_content="cachedContents/abc123"))
        response = await _streamed(adapter, settings, [TOOL])
    finally:
        await adapter.aclose()

    sent = wire_server.requests[0].json()
    assert gemini_wire.field(sent, "cachedContent") == "cachedContents/abc123"
    # the cache holds the system instruction and tools; the API refuses them beside it
    assert "systemInstruction" not in sent
    assert "system_instruction" not in sent
    assert "tools" not in sent
    assert response.usage.cached_tokens == 6000
    quote = quote_of("gemini:gemini-2.5-flash", response.usage)
    expected = library_price(
        "gemini-2.5-flash", "google", input_tokens=8000, cache_read_tokens=6000, output_tokens=30
    )
    assert quote is not None
    assert quote.cost_usd == pytest.approx(expected)


# ------------------------------------------------------------------------------------------ pricing


def test_override_prices_cache_reads_and_writes_at_their_own_rates() -> None:
    table = PriceTable("2026-11-01").with_prices(
        {"my-model": ModelPrice(2.0, 10.0, cached_input=0.2, cache_write=2.5)}
    )
    usage = Usage(input_tokens=1_000_000, cached_tokens=500_000, cache_write_tokens=300_000, output_tokens=0)
    assert table.cost("my-model", usage) == pytest.approx(0.2 * 2.0 + 0.5 * 0.2 + 0.3 * 2.5)


def test_prompt_cache_rejects_unknown_values() -> None:
    with pytest.raises(ValueError, match="breakpoints"):
        PromptCache(breakpoints=("everything",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ttl"):
        PromptCache(ttl="2h")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="key"):
        PromptCache(key=" ")
