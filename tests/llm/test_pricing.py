"""The dated price table (:mod:`kanawa.llm.pricing`) and ``RunResult.cost``: exact arithmetic, name
matching, overrides, and ``None`` — never 0 — for a model without a price."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kanawa import Agent
from kanawa.llm.pricing import ModelPrice, PriceTable, cost_of, default_prices
from kanawa.llm.testing import ScriptedLLM
from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolCall, Usage


def test_cost_splits_cached_input_and_reasoning_output() -> None:
    price = ModelPrice(input=2.0, output=10.0, cached_input=0.5, reasoning=20.0)
    usage = Usage(
        input_tokens=1_000_000, output_tokens=500_000, reasoning_tokens=100_000, cached_tokens=400_000
    )
    # 600k uncached × 2 + 400k cached × 0.5 + 400k output × 10 + 100k reasoning × 20 (per million)
    assert price.cost(usage) == pytest.approx(1.2 + 0.2 + 4.0 + 2.0)
    assert ModelPrice(input=1.0, output=3.0).cost(
        Usage(
            input_tokens=1_000_000, output_tokens=1_000_000, reasoning_tokens=500_000, cached_tokens=500_000
        )
    ) == pytest.approx(4.0)


def test_names_match_with_a_provider_prefix_a_base_url_or_a_dated_suffix_and_unknown_is_none() -> None:
    table = default_prices()
    gpt5 = table.price_of("gpt-5")
    assert gpt5 is not None
    assert table.price_of("openai:gpt-5") == gpt5
    assert table.price_of("gpt-5-2025-08-07") == gpt5
    assert table.price_of("openai:gpt-5@http://127.0.0.1:8080/v1") == gpt5
    assert table.price_of("gpt-5-mini-2025-08-07") == table.price_of("gpt-5-mini") != gpt5
    assert table.price_of("my-local-llama") is None
    assert cost_of("my-local-llama", Usage(input_tokens=10, output_tokens=10)) is None
    assert table.as_of


def test_a_price_file_replaces_the_table_and_bad_files_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"as_of": "2030-01-01", "models": {"house-model": {"input": 1, "output": 2}}}))
    monkeypatch.setenv("KANAWA_PRICES", str(path))
    assert default_prices().as_of == "2030-01-01"
    assert cost_of("house-model", Usage(input_tokens=1_000_000, output_tokens=1_000_000)) == pytest.approx(
        3.0
    )
    assert cost_of("gpt-5", Usage(input_tokens=1, output_tokens=1)) is None, (
        "the file replaces the shipped table"
    )
    with pytest.raises(ValueError, match="as_of"):
        PriceTable.from_json({"models": {}})
    with pytest.raises(ValueError, match="unknown fields"):
        PriceTable.from_json({"as_of": "x", "models": {"m": {"input": 1, "output": 1, "outptu": 2}}})
    with pytest.raises(ValueError, match="non-negative"):
        ModelPrice(input=-1, output=1)


async def test_run_result_cost_sums_each_response_at_the_model_that_answered() -> None:
    call = AssistantMessage(tool_calls=(ToolCall("c1", "noop", "{}"),))
    model = ScriptedLLM(
        [
            LLMResponse(
                call,
                StopReason.TOOL_USE,
                usage=Usage(input_tokens=1_000_000, output_tokens=100_000, requests=1),
                model="gpt-5-2025-08-07",
            ),
            LLMResponse(
                AssistantMessage(text="ok"),
                StopReason.END_TURN,
                usage=Usage(input_tokens=500_000, output_tokens=0, requests=1),
                model="gpt-5-mini",
            ),
        ],
        model="gpt-5",
    )

    def noop() -> str:
        """Nothing."""
        return "done"

    result = await Agent("a", model=model, tools=[noop]).run("go")
    # gpt-5: 1M × 1.25 + 0.1M × 10 = 2.25; gpt-5-mini: 0.5M × 0.25 = 0.125
    assert result.cost == pytest.approx(2.25 + 0.125)
    unknown = await Agent("a", model=ScriptedLLM(["hi"], model="local")).run("go")
    assert unknown.cost is None
