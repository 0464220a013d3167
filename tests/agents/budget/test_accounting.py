"""Token accounting (seed 002 §3-1 "トークン計算": system + messages + tool I/O) and money: what each
response adds to a session, through the public API on both stores."""

from __future__ import annotations

import pytest

from kanawa import Agent, FunctionLLM
from kanawa.llm.pricing import ModelPrice, PriceTable
from kanawa.llm.testing import ModelRequest
from kanawa.llm.tokens import count_message_tokens, message_tokens, text_counter
from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolMessage, Usage
from tests.agents.budget._support import COST_NANO, Counted, run_blocked, warnings_of
from tests.agents.budget.conftest import GuardFactory


async def test_provider_usage_is_counted_as_reported(make_guard: GuardFactory) -> None:
    guard = make_guard()
    usage = Usage(input_tokens=1234, output_tokens=56, reasoning_tokens=20, cached_tokens=1000, requests=1)
    counted = Counted(tool_turns=0, usage=usage)
    result = await counted.agent(guard).arun("add")
    totals = await guard.totals()
    assert (totals.input_tokens, totals.output_tokens, totals.requests) == (1234, 56, 1)
    # 234 uncached × 1.25 + 1000 cached × 0.125 + 56 output × 10, per million
    assert totals.cost_nano_usd == round((234 * 1.25 + 1000 * 0.125 + 56 * 10) * 1000)
    assert result.cost == pytest.approx(totals.cost_usd)


async def test_a_response_without_usage_is_estimated_from_system_messages_and_tool_io(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard()
    counted = Counted(tool_turns=1, usage=Usage())
    result = await counted.agent(guard).arun("add")
    model = result.messages  # the prompts were system + user, then + the tool call and its result
    counter = text_counter("gpt-5")
    expected_in = count_message_tokens(model[:2], model="gpt-5") + count_message_tokens(
        model[:4], model="gpt-5"
    )
    expected_out = message_tokens(model[2], counter) + message_tokens(model[4], counter)
    totals = await guard.totals()
    assert totals.input_tokens == expected_in
    assert totals.output_tokens == expected_out
    assert isinstance(model[3], ToolMessage)  # tool I/O is in the second prompt
    assert totals.input_tokens > 2 * count_message_tokens(model[:2], model="gpt-5")


async def test_an_unpriced_model_is_blocked_while_a_money_budget_is_set(make_guard: GuardFactory) -> None:
    guard = make_guard(max_cost_usd=1.0)
    counted = Counted(tool_turns=0, model="my-local-model")
    blocked = await run_blocked(counted.agent(guard))
    assert counted.requests == 0
    (reason,) = blocked.reasons
    assert reason.startswith("model 'my-local-model' has no price, so the money budget cannot be kept; ")
    assert "KANAWA_PRICES" in reason
    assert "KANAWA_UNPRICED_POLICY=warn" in reason


async def test_the_warn_unpriced_policy_runs_an_unpriced_model_with_a_warning_and_an_unknown_cost(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard(max_cost_usd=1.0, unpriced="warn")
    for _ in range(2):  # the second run is not refused by the first run's unpriced response either
        counted = Counted(tool_turns=1, model="my-local-model")
        result = await counted.agent(guard).arun("add")
        assert result.completed
        assert counted.tool_runs == 1
        reasons = [r for w in warnings_of(result.steps) for r in w.reasons]
        assert any(r.startswith("model 'my-local-model' has no price, so the money budget") for r in reasons)
    totals = await guard.totals()
    assert (totals.unpriced_responses, totals.cost_known) == (4, False)


async def test_the_unpriced_policy_comes_from_the_environment(
    make_guard: GuardFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KANAWA_UNPRICED_POLICY", "warn")
    guard = make_guard(max_cost_usd=1.0)
    assert guard.unpriced == "warn"
    assert (await Counted(tool_turns=0, model="my-local-model").agent(guard).arun("add")).completed
    monkeypatch.setenv("KANAWA_UNPRICED_POLICY", "block")
    assert make_guard(max_cost_usd=1.0).unpriced == "block"


@pytest.mark.parametrize("model", ["gpt-5.2", "gpt-5.2-pro", "claude-sonnet-4-5", "gemini-3-pro-preview"])
async def test_a_money_budget_runs_current_models_priced_by_genai_prices(
    make_guard: GuardFactory, model: str
) -> None:
    guard = make_guard(max_cost_usd=1.0)
    result = await Counted(tool_turns=1, model=model).agent(guard).arun("add")
    assert result.completed
    totals = await guard.totals()
    assert totals.cost_known
    assert totals.cost_nano_usd > 0
    assert result.cost == pytest.approx(totals.cost_usd, abs=1e-9)


async def test_prices_can_be_overridden_per_guard(make_guard: GuardFactory) -> None:
    table = PriceTable("2026-01-01", prices={"my-local-model": ModelPrice(input=1.0, output=2.0)})
    guard = make_guard(max_cost_usd=1.0, prices=table)
    result = await Counted(tool_turns=0, model="my-local-model").agent(guard).arun("add")
    assert result.completed
    assert (await guard.totals()).cost_nano_usd == 100 * 1000 + 10 * 2000


async def test_a_response_from_an_unpriced_model_makes_the_cost_unknown_and_blocks(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard(max_cost_usd=1.0)

    def answer(request: ModelRequest) -> LLMResponse:
        message = AssistantMessage(text="hi")
        return LLMResponse(
            message,
            StopReason.END_TURN,
            usage=Usage(input_tokens=10, output_tokens=1, requests=1),
            model="mystery-model",
        )

    result = await Agent("a", "", model=FunctionLLM(answer, model="gpt-5"), guardrails=[guard]).arun("hi")
    assert warnings_of(result.steps)[0].reasons == (
        "model 'mystery-model' has no price: the session's cost is unknown",
    )
    totals = await guard.totals()
    assert (totals.unpriced_responses, totals.cost_known) == (1, False)
    blocked = await run_blocked(Agent("a", "", model=FunctionLLM(answer, model="gpt-5"), guardrails=[guard]))
    assert "cost is unknown" in str(blocked)


async def test_without_limits_the_guard_only_counts(make_guard: GuardFactory) -> None:
    guard = make_guard()
    result = await Counted(tool_turns=4).agent(guard).arun("add")
    assert result.completed
    assert not warnings_of(result.steps)
    totals = await guard.totals()
    assert (totals.requests, totals.tokens) == (5, 550)
    assert totals.cost_nano_usd == 5 * COST_NANO
