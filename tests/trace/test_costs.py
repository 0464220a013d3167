"""Pricing a trace's model calls from their ``llm_end`` records (what the timeline page shows)."""

from __future__ import annotations

import pytest

from kanawa.llm.pricing import cost_of
from kanawa.trace.costs import with_cost
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


def test_an_unknown_model_has_no_cost_never_zero() -> None:
    assert with_cost(_end("function"))["cost_usd"] is None
    assert with_cost({"event": "llm_end", "tok_prompt": 5, "tok_completion": 5})["cost_usd"] is None


def test_other_records_are_left_alone() -> None:
    for event in ("llm_start", "llm_error", "tool_end", "agent_end"):
        record: dict[str, JsonValue] = {
            "event": event,
            "model": "gpt-5",
            "tok_prompt": 10,
            "tok_completion": 3,
        }
        assert "cost_usd" not in with_cost(dict(record))
