"""Pricing a trace's model calls from their ``llm_end`` records (what the timeline page shows)."""

from __future__ import annotations

import json
from pathlib import Path

import genai_prices
import pytest

from kanawa.llm.pricing import cost_of
from kanawa.trace.costs import trace_cost, with_cost
from kanawa.trace.records import TraceRecord
from kanawa.types import JsonValue, Usage


def _end(model: str, **data: JsonValue) -> dict[str, JsonValue]:
    return {"event": "llm_end", "model": model, "tok_prompt": 1000, "tok_completion": 400, "data": data}


def test_a_model_call_is_priced_with_its_cached_and_reasoning_tokens() -> None:
    record = with_cost(_end("gpt-5", reasoning_tokens=300, cached_tokens=800))
    expected = cost_of(
        "gpt-5",
        Usage(input_tokens=1000, output_tokens=400, reasoning_tokens=300, cached_tokens=800, requests=1),
    )
    assert record["cost_usd"] == pytest.approx(expected)
    # cached input is cheaper than fresh input, and both count
    assert expected == pytest.approx((200 * 1.25 + 800 * 0.125 + 400 * 10.0) / 1_000_000)


def test_cache_writes_in_a_record_are_priced_at_the_cache_write_rate() -> None:
    record = with_cost(_end("claude-sonnet-4-6", cached_tokens=500, cache_write_tokens=400))
    plain = with_cost(_end("claude-sonnet-4-6", cached_tokens=500))
    # Anthropic bills a cache write above the input price (1.25x for 5 minutes)
    assert isinstance(record["cost_usd"], float)
    assert isinstance(plain["cost_usd"], float)
    assert record["cost_usd"] > plain["cost_usd"]
    assert record["cost_usd"] == pytest.approx(
        cost_of(
            "claude-sonnet-4-6",
            Usage(
                input_tokens=1000, output_tokens=400, cached_tokens=500, cache_write_tokens=400, requests=1
            ),
        )
    )


def test_a_model_calls_record_names_where_its_price_came_from(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert with_cost(_end("claude-opus-4-5"))["price_source"] == f"genai-prices {genai_prices.__version__}"
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"as_of": "2030-01-01", "models": {"claude-opus-4-5": {"input": 1, "output": 1}}})
    )
    monkeypatch.setenv("KANAWA_PRICES", str(prices))
    record = with_cost(_end("anthropic:claude-opus-4-5"))
    assert record["price_source"] == "override, as of 2030-01-01"
    assert record["cost_usd"] == pytest.approx(1400 / 1_000_000)


def test_an_unknown_model_has_no_cost_never_zero() -> None:
    assert with_cost(_end("function"))["cost_usd"] is None
    assert with_cost(_end("function"))["price_source"] is None
    assert with_cost({"event": "llm_end", "tok_prompt": 5, "tok_completion": 5})["cost_usd"] is None


def test_other_records_are_left_alone() -> None:
    for event in ("llm_start", "tool_end", "agent_end"):
        record: dict[str, JsonValue] = {
            "event": event,
            "model": "gpt-5",
            "tok_prompt": 10,
            "tok_completion": 3,
        }
        assert "cost_usd" not in with_cost(dict(record))


def test_a_failed_call_costs_nothing_on_a_priced_model_and_is_unknown_on_an_unpriced_one() -> None:
    assert with_cost({"event": "llm_error", "model": "gpt-5"})["cost_usd"] == 0.0
    assert with_cost({"event": "llm_error", "model": "my-local-model"})["cost_usd"] is None


def _call(event: str, model: str) -> TraceRecord:
    if event == "llm_error":  # a failed call reports no usage
        return TraceRecord(event, 0.0, model=model, error="connection error")
    return TraceRecord(event, 0.0, model=model, tok_prompt=1000, tok_completion=400)


def test_a_traces_cost_is_the_sum_of_its_calls() -> None:
    records = [TraceRecord("agent_start", 0.0), _call("llm_end", "gpt-5"), _call("llm_end", "gpt-5-mini")]
    gpt5, mini = (
        cost_of(
            model,
            Usage(input_tokens=1000, output_tokens=400, reasoning_tokens=0, cached_tokens=0, requests=1),
        )
        for model in ("gpt-5", "gpt-5-mini")
    )
    assert gpt5 is not None
    assert mini is not None
    expected = gpt5 + mini
    assert trace_cost(records) == pytest.approx(expected)
    assert trace_cost([*records, _call("llm_error", "gpt-5")]) == pytest.approx(expected)


def test_a_traces_cost_is_unknown_when_any_call_was_unpriced_never_zero() -> None:
    priced = _call("llm_end", "gpt-5")
    assert trace_cost([priced, _call("llm_end", "my-local-model")]) is None
    assert trace_cost([priced, _call("llm_error", "my-local-model")]) is None  # a failed run's call
    assert trace_cost([_call("llm_error", "my-local-model")]) is None
    assert trace_cost([TraceRecord("agent_start", 0.0)]) is None  # no model call: nothing was priced
