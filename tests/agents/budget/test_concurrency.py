"""Concurrent runs sharing one budget (issue: "no overshoot beyond one in-flight request, tested with
concurrent runs"; the Hypothesis property "for any interleaving of concurrent runs sharing a budget,
the recorded total equals the sum of the runs' usage"), on the in-memory and the Redis store."""

from __future__ import annotations

import asyncio
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kanawa import Agent, AgentConfiguration, FunctionLLM, tool
from kanawa.agents.budget.limits import usd_to_nano
from kanawa.llm.pricing import cost_of
from kanawa.llm.testing import ModelRequest
from kanawa.types import LLMResponse, Usage
from tests.agents.budget._support import Counted, run_to_end, text_response, tool_call_response
from tests.agents.budget.conftest import GuardFactory

RUNS = 30


def yielding(times: int) -> Counted:
    async def pause() -> None:
        for _ in range(times):
            await asyncio.sleep(0)

    return Counted(tool_turns=10, pause=pause)


async def test_concurrent_runs_never_overshoot_a_request_budget(make_guard: GuardFactory) -> None:
    guard = make_guard(max_requests=50)
    runs = [yielding(i % 4) for i in range(RUNS)]
    outcomes = await asyncio.gather(*(run_to_end(counted.agent(guard)) for counted in runs))
    assert sum(counted.requests for counted in runs) == 50
    assert sum(usage.requests for usage, _ in outcomes) == 50
    assert (await guard.totals()).requests == 50
    assert all(blocked for _, blocked in outcomes)


async def test_concurrent_runs_overshoot_a_token_budget_by_at_most_one_request_each(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard(max_tokens=1500)
    runs = [yielding(i % 4) for i in range(RUNS)]
    outcomes = await asyncio.gather(*(run_to_end(counted.agent(guard)) for counted in runs))
    totals = await guard.totals()
    assert totals.tokens == sum(usage.total_tokens for usage, _ in outcomes)
    assert totals.requests == sum(counted.requests for counted in runs)
    # every request was admitted below the limit; each run had at most one in flight when it ran out
    assert 1500 <= totals.tokens <= 1500 - 1 + RUNS * 110
    assert all(blocked for _, blocked in outcomes)
    # after the limit was reached, no run sent another request: one late request per run at most
    assert totals.requests <= 1500 // 110 + 1 + RUNS


async def test_concurrent_runs_overshoot_a_money_budget_by_at_most_one_request_each(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard(max_cost_usd=0.002)
    runs = [yielding(i % 3) for i in range(RUNS)]
    await asyncio.gather(*(run_to_end(counted.agent(guard)) for counted in runs))
    totals = await guard.totals()
    assert totals.cost_nano_usd == totals.requests * 225_000
    assert 2_000_000 <= totals.cost_nano_usd <= 2_000_000 - 1 + RUNS * 225_000


# --------------------------------------------------------------------------------- the property

Step = tuple[int, int, int]  # input tokens, output tokens, event-loop yields before answering
usages = st.tuples(st.integers(1, 500), st.integers(1, 200), st.integers(0, 3))
conversations = st.lists(usages, min_size=1, max_size=4)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def scripted(steps: list[Step]) -> FunctionLLM:
    """Answers request i with steps[i]'s usage: tool calls until the last step, then text."""

    async def answer(request: ModelRequest) -> LLMResponse:
        turn = len(request.tool_results)
        input_tokens, output_tokens, yields = steps[turn]
        for _ in range(yields):
            await asyncio.sleep(0)
        usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, requests=1)
        if turn + 1 < len(steps):
            return tool_call_response(turn, usage=usage)
        return text_response(usage=usage)

    return FunctionLLM(answer, model="gpt-5")


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    runs=st.lists(conversations, min_size=1, max_size=6),
    kind=st.sampled_from(["none", "tokens", "requests", "money"]),
    limit=st.integers(1, 2500),
    action=st.sampled_from(["block", "warn"]),
)
async def test_for_any_interleaving_the_recorded_total_equals_the_sum_of_the_runs_usage(
    make_guard: GuardFactory, runs: list[list[Step]], kind: str, limit: int, action: str
) -> None:
    limits = {
        "none": {},
        "tokens": {"max_tokens": limit},
        "requests": {"max_requests": 1 + limit % 12},
        "money": {"max_cost_usd": limit * 1e-6},
    }[kind]
    guard = make_guard(session=uuid.uuid4().hex, action=action, **limits)
    models = [scripted(steps) for steps in runs]
    config = AgentConfiguration(max_steps=10)
    agents = [
        Agent(f"run{i}", "Add.", tools=[add], model=model, config=config, guardrails=[guard])
        for i, model in enumerate(models)
    ]
    outcomes = await asyncio.gather(*(run_to_end(agent) for agent in agents))

    totals = await guard.totals()
    assert totals.input_tokens == sum(usage.input_tokens for usage, _ in outcomes)
    assert totals.output_tokens == sum(usage.output_tokens for usage, _ in outcomes)
    assert totals.requests == sum(usage.requests for usage, _ in outcomes)
    sent = [step for steps, model in zip(runs, models, strict=True) for step in steps[: len(model.requests)]]
    assert totals.requests == len(sent)
    assert totals.cost_nano_usd == sum(
        usd_to_nano(cost_of("gpt-5", Usage(input_tokens=i, output_tokens=o)) or 0.0) for i, o, _ in sent
    )
    if action == "warn":
        assert not any(blocked for _, blocked in outcomes)
        assert len(sent) == sum(len(steps) for steps in runs)
    elif kind == "requests":
        assert totals.requests <= limits["max_requests"]
