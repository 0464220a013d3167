"""Prices (:mod:`kanawa.llm.pricing`): genai-prices' bundled data behind the user's overrides, the
source of each price, and ``None`` — never 0 — for a model without a price."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import genai_prices
import pytest

from kanawa import Agent
from kanawa.llm.pricing import (
    LIBRARY_TABLE,
    ModelPrice,
    PriceSource,
    PriceTable,
    cost_of,
    default_prices,
    library_version,
    quote_of,
    unpriced_message,
    unpriced_policy,
)
from kanawa.llm.testing import ScriptedLLM
from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolCall, Usage

AT = datetime(2026, 11, 1, tzinfo=UTC)


def library(model: str, provider: str, usage: genai_prices.Usage) -> float:
    """The package's own calculation, the oracle kanawa's must match."""
    return float(
        genai_prices.calc_price(usage, model, provider_id=provider, genai_request_timestamp=AT).total_price
    )


@pytest.mark.parametrize(
    ("model", "provider", "name"),
    [
        ("openai:gpt-5.2", "openai", "gpt-5.2"),
        ("openai:gpt-5.2-pro", "openai", "gpt-5.2-pro"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("anthropic:claude-opus-4-5", "anthropic", "claude-opus-4-5"),
        ("gemini:gemini-2.5-pro", "google", "gemini-2.5-pro"),
        ("gemini:gemini-3-pro-preview", "google", "gemini-3-pro-preview"),
    ],
)
def test_current_models_are_priced_as_genai_prices_prices_them(model: str, provider: str, name: str) -> None:
    usage = Usage(input_tokens=120_000, output_tokens=8_000, reasoning_tokens=3_000, cached_tokens=50_000)
    quote = LIBRARY_TABLE.quote(model, usage, at=AT)
    assert quote is not None
    expected = library(
        name,
        provider,
        genai_prices.Usage(
            input_tokens=120_000, cache_read_tokens=50_000, output_tokens=8_000, output_reasoning_tokens=3_000
        ),
    )
    assert quote.cost_usd == pytest.approx(expected, rel=1e-12)
    assert quote.source == PriceSource("genai-prices", genai_prices.__version__)
    assert str(quote.source) == f"genai-prices {genai_prices.__version__}"


def test_cached_input_is_billed_at_the_cache_read_price_and_reasoning_as_output() -> None:
    # gpt-5.2 per genai-prices: input 1.75, cached input 0.175, output 14 (USD per million tokens)
    plain = LIBRARY_TABLE.quote("gpt-5.2", Usage(input_tokens=1_000_000, output_tokens=0), at=AT)
    cached = LIBRARY_TABLE.quote(
        "gpt-5.2", Usage(input_tokens=1_000_000, output_tokens=0, cached_tokens=1_000_000), at=AT
    )
    out = LIBRARY_TABLE.quote("gpt-5.2", Usage(input_tokens=0, output_tokens=1_000_000), at=AT)
    reasoning = LIBRARY_TABLE.quote(
        "gpt-5.2", Usage(input_tokens=0, output_tokens=1_000_000, reasoning_tokens=1_000_000), at=AT
    )
    assert plain
    assert cached
    assert out
    assert reasoning
    assert cached.cost_usd == pytest.approx(plain.cost_usd / 10)
    assert reasoning.cost_usd == pytest.approx(out.cost_usd)
    assert plain.cost_usd == pytest.approx(
        library("gpt-5.2", "openai", genai_prices.Usage(input_tokens=1_000_000, output_tokens=0))
    )


@pytest.mark.parametrize("model", ["gemini:gemini-2.5-pro", "anthropic:claude-sonnet-4-5"])
def test_a_long_context_tier_prices_every_token_of_a_request_past_it(model: str) -> None:
    at_line = LIBRARY_TABLE.quote(model, Usage(input_tokens=200_000, output_tokens=1_000), at=AT)
    past = LIBRARY_TABLE.quote(model, Usage(input_tokens=200_001, output_tokens=1_000), at=AT)
    assert at_line
    assert past
    # past the 200k-token line the whole request, input and output, is billed at the higher rate
    assert past.cost_usd > 1.5 * at_line.cost_usd


def test_an_override_wins_over_genai_prices_and_is_reported_as_an_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "prices.json"
    body = {
        "as_of": "2030-01-01",
        "models": {"gpt-5.2": {"input": 1, "output": 2}, "house": {"input": 3, "output": 4}},
    }
    path.write_text(json.dumps(body))
    monkeypatch.setenv("KANAWA_PRICES", str(path))
    table = default_prices()
    assert cost_of("openai:gpt-5.2", Usage(input_tokens=1_000_000, output_tokens=1_000_000)) == pytest.approx(
        3.0
    )
    assert cost_of("house", Usage(input_tokens=1_000_000, output_tokens=1_000_000)) == pytest.approx(7.0)
    assert table.source_of("gpt-5.2") == PriceSource("override", "2030-01-01")
    assert str(table.source_of("gpt-5.2")) == "override, as of 2030-01-01"
    # models the file does not name are still priced by genai-prices
    assert table.source_of("claude-opus-4-5") == PriceSource("genai-prices", genai_prices.__version__)
    in_code = LIBRARY_TABLE.with_prices(
        {"claude-opus-4-5": ModelPrice(input=0, output=0)}, as_of="2031-02-03"
    )
    assert in_code.cost("anthropic:claude-opus-4-5", Usage(input_tokens=1000, output_tokens=1000)) == 0.0
    only_file = PriceTable.from_json({**body, "library": False})
    assert only_file.cost("claude-opus-4-5", Usage(input_tokens=1, output_tokens=1)) is None


def test_names_match_with_a_provider_prefix_a_base_url_or_a_dated_suffix_and_unknown_is_none() -> None:
    usage = Usage(input_tokens=10_000, output_tokens=1_000)
    gpt5 = cost_of("gpt-5", usage)
    assert gpt5 is not None
    assert gpt5 > 0
    assert cost_of("openai:gpt-5", usage) == gpt5
    assert cost_of("gpt-5-2025-08-07", usage) == gpt5
    assert cost_of("openai:gpt-5@http://127.0.0.1:8080/v1", usage) == gpt5
    assert cost_of("my-local-llama", usage) is None
    assert cost_of("openai-chat:llama3@http://127.0.0.1:11434/v1", usage) is None
    assert cost_of("test", usage) is None
    assert quote_of("test", usage) is None
    assert library_version() == genai_prices.__version__


def test_bad_price_files_are_errors() -> None:
    with pytest.raises(ValueError, match="as_of"):
        PriceTable.from_json({"models": {}})
    with pytest.raises(ValueError, match="unknown fields"):
        PriceTable.from_json({"as_of": "x", "models": {"m": {"input": 1, "output": 1, "outptu": 2}}})
    with pytest.raises(ValueError, match="library"):
        PriceTable.from_json({"as_of": "x", "models": {}, "library": "no"})
    with pytest.raises(ValueError, match="non-negative"):
        ModelPrice(input=-1, output=1)


def test_an_override_splits_cached_input_and_reasoning_output() -> None:
    price = ModelPrice(input=2.0, output=10.0, cached_input=0.5, reasoning=20.0)
    usage = Usage(
        input_tokens=1_000_000, output_tokens=500_000, reasoning_tokens=100_000, cached_tokens=400_000
    )
    # 600k uncached × 2 + 400k cached × 0.5 + 400k output × 10 + 100k reasoning × 20 (per million)
    assert price.cost(usage) == pytest.approx(1.2 + 0.2 + 4.0 + 2.0)


def test_the_unpriced_policy_is_block_unless_set_and_refuses_other_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KANAWA_UNPRICED_POLICY", raising=False)
    assert unpriced_policy(None) == "block"
    monkeypatch.setenv("KANAWA_UNPRICED_POLICY", "WARN")
    assert unpriced_policy(None) == "warn"
    assert unpriced_policy("block") == "block"
    with pytest.raises(ValueError, match="'block' or 'warn'"):
        unpriced_policy("allow")
    message = unpriced_message("my-model")
    assert "'my-model' has no price" in message
    assert "KANAWA_PRICES" in message


def test_the_price_data_is_read_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """genai-prices downloads only through ``UpdatePrices``; kanawa prices with the bundled snapshot."""
    from genai_prices import data_snapshot

    assert data_snapshot.get_snapshot().from_auto_update is False
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # any attempt to reach the network would fail
    assert cost_of("claude-haiku-4-5", Usage(input_tokens=1000, output_tokens=1000)) is not None


async def test_run_result_cost_sums_each_response_at_the_model_that_answered() -> None:
    call = AssistantMessage(tool_calls=(ToolCall("c1", "noop", "{}"),))
    first, second = (
        Usage(input_tokens=1_000_000, output_tokens=100_000, requests=1),
        Usage(input_tokens=500_000, output_tokens=0, requests=1),
    )
    model = ScriptedLLM(
        [
            LLMResponse(call, StopReason.TOOL_USE, usage=first, model="gpt-5-2025-08-07"),
            LLMResponse(AssistantMessage(text="ok"), StopReason.END_TURN, usage=second, model="gpt-5-mini"),
        ],
        model="gpt-5",
    )

    def noop() -> str:
        """Nothing."""
        return "done"

    result = await Agent("a", model=model, tools=[noop]).arun("go")
    expected = library("gpt-5", "openai", genai_prices.Usage(input_tokens=1_000_000, output_tokens=100_000))
    expected += library("gpt-5-mini", "openai", genai_prices.Usage(input_tokens=500_000, output_tokens=0))
    assert result.cost == pytest.approx(expected)
    unknown = await Agent("a", model=ScriptedLLM(["hi"], model="local")).arun("go")
    assert unknown.cost is None
