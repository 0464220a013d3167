"""TokenGuard through the public API (seed 002 §3-1 トークン計算, §3-4 TokenGuard warn/block, §7):
every test runs on the in-memory and the Redis store (``make_guard``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from kanawa import Agent, FunctionLLM
from kanawa.agents.budget import TokenGuard
from kanawa.llm.testing import ModelRequest
from kanawa.loop.errors import BudgetExceeded, GuardrailViolation
from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolMessage, Usage
from tests.agents.budget._support import COST_NANO, Counted, run_blocked, text_response, warnings_of
from tests.agents.budget.conftest import GuardFactory

# ------------------------------------------------------------------------------------------- block


async def test_block_request_budget_stops_before_the_model_call_and_never_overshoots(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard(max_requests=2)
    counted = Counted(tool_turns=3)
    blocked = await run_blocked(counted.agent(guard))
    assert counted.requests == 2  # the third request was never sent
    assert counted.tool_runs == 2
    assert blocked.stage == "model_call"
    assert blocked.guardrail == "token_guard"
    assert "request budget is spent (2 of 2 model requests)" in str(blocked)
    assert isinstance(blocked, GuardrailViolation)
    assert blocked.partial_result is not None
    assert blocked.partial_result.usage.requests == 2
    assert (await guard.totals()).requests == 2


async def test_block_token_budget_stops_the_tools_of_the_response_that_spent_it(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard(max_tokens=200)
    counted = Counted(tool_turns=3)
    blocked = await run_blocked(counted.agent(guard))
    # request 1: 110 tokens, tools run; request 2 admitted (110 < 200) → 220: its tools do not run
    assert counted.requests == 2
    assert counted.tool_runs == 1
    assert blocked.stage == "tool_call"
    assert "token budget is spent (220 of 200 tokens)" in str(blocked)
    totals = await guard.totals()
    assert (totals.tokens, totals.requests) == (220, 2)
    # the unrun call got an error answer: the history stays valid for a later run
    assert blocked.partial_result is not None
    last = blocked.partial_result.messages[-1]
    assert isinstance(last, ToolMessage)
    assert last.is_error


async def test_block_money_budget_by_the_price_table(make_guard: GuardFactory) -> None:
    guard = make_guard(max_cost_usd=0.0005)
    counted = Counted(tool_turns=5)
    blocked = await run_blocked(counted.agent(guard))
    # 225k, 450k nano-dollars < 500k: a third request is admitted and spends it; its tools do not run
    assert counted.requests == 3
    assert counted.tool_runs == 2
    assert blocked.stage == "tool_call"
    totals = await guard.totals()
    assert totals.cost_nano_usd == 3 * COST_NANO
    assert totals.cost_usd == pytest.approx(0.000675)
    assert "money budget is spent ($0.000675 of $0.000500)" in str(blocked)


async def test_a_spent_budget_blocks_the_next_run_before_any_request(make_guard: GuardFactory) -> None:
    guard = make_guard(max_tokens=100)
    first = Counted(tool_turns=0)
    await first.agent(guard).arun("add")  # 110 tokens: the answer completes the run
    second = Counted(tool_turns=0)
    blocked = await run_blocked(second.agent(guard))
    assert second.requests == 0
    assert blocked.stage == "model_call"
    assert blocked.event.step == 1


async def test_stream_yields_the_block_event_first_and_nothing_after_it(make_guard: GuardFactory) -> None:
    guard = make_guard(max_requests=1)
    counted = Counted(tool_turns=2)
    events: list[Any] = []

    async def consume() -> None:
        async for event in counted.agent(guard).stream("add"):
            events.append(event)

    with pytest.raises(BudgetExceeded) as caught:
        await consume()
    assert events[-1] is caught.value.event
    assert events[-1].action == "block"
    assert events[-1].stage == "model_call"
    assert counted.requests == 1
    assert counted.tool_runs == 1


# -------------------------------------------------------------------------------------------- warn


async def test_warn_request_budget_lets_the_run_finish_and_yields_a_chat_bubble(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard(max_requests=2, action="warn", warn_at=None)
    counted = Counted(tool_turns=3)
    result = await counted.agent(guard).arun("add")
    assert result.completed
    assert counted.requests == 4
    warnings = warnings_of(result.steps)
    assert len(warnings) == 1
    assert warnings[0].stage == "model_call"
    assert warnings[0].step == 2
    assert warnings[0].reasons == (
        "the session has reached its request budget (2 of 2 model requests); the run goes on",
    )
    assert (await guard.totals()).requests == 4


async def test_warn_token_budget_warns_at_warn_at_then_at_the_limit(make_guard: GuardFactory) -> None:
    guard = make_guard(max_tokens=300, action="warn", warn_at=0.5)
    counted = Counted(tool_turns=3)
    events = [event async for event in counted.agent(guard).stream("add")]
    warnings = warnings_of(events)
    assert [w.step for w in warnings] == [2, 3]  # 220 ≥ 150, then 330 ≥ 300
    assert warnings[0].reasons == ("the session has used 73% of its token budget (220 of 300 tokens)",)
    assert "reached its token budget (330 of 300 tokens)" in warnings[1].reasons[0]
    assert counted.requests == 4
    assert counted.tool_runs == 3


async def test_warn_money_budget(make_guard: GuardFactory) -> None:
    guard = make_guard(max_cost_usd=0.0004, action="warn", warn_at=None)
    counted = Counted(tool_turns=2)
    result = await counted.agent(guard).arun("add")
    assert result.completed
    warnings = warnings_of(result.steps)
    assert [w.step for w in warnings] == [2]
    assert "reached its money budget ($0.000450 of $0.000400)" in warnings[0].reasons[0]


async def test_block_mode_warns_early_at_warn_at(make_guard: GuardFactory) -> None:
    guard = make_guard(max_requests=5, warn_at=0.6)
    counted = Counted(tool_turns=3)
    result = await counted.agent(guard).arun("add")
    warnings = warnings_of(result.steps)
    assert [w.step for w in warnings] == [3]
    assert warnings[0].reasons == ("the session has used 60% of its request budget (3 of 5 model requests)",)


async def test_a_later_run_is_warned_at_its_first_request_while_the_session_is_past_warn_at(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard(max_tokens=1000, warn_at=0.2)
    await Counted(tool_turns=1).agent(guard).arun("add")  # 220 tokens ≥ 200
    result = await Counted(tool_turns=0).agent(guard).arun("add")
    warnings = warnings_of(result.steps)
    assert [(w.step, w.reasons) for w in warnings] == [
        (1, ("the session has used 22% of its token budget (220 of 1,000 tokens)",))
    ]


async def test_block_mode_warns_when_a_response_reaches_the_limit(make_guard: GuardFactory) -> None:
    guard = make_guard(max_tokens=110, warn_at=None)
    result = await Counted(tool_turns=0).agent(guard).arun("add")
    assert result.completed
    assert warnings_of(result.steps)[0].reasons == (
        "the session has reached its token budget (110 of 110 tokens); "
        "further model requests will be blocked",
    )


# ------------------------------------------------------------------------------------- sessions


@dataclass
class User:
    name: str


async def test_sessions_named_from_deps_have_separate_budgets(make_guard: GuardFactory) -> None:
    guard = make_guard(max_requests=2, session=lambda ctx: f"user:{ctx.deps.name}")
    alice = Counted(tool_turns=2)
    with pytest.raises(BudgetExceeded):
        await alice.agent(guard).arun("add", deps=User("alice"))
    bob = Counted(tool_turns=1)
    result = await bob.agent(guard).arun("add", deps=User("bob"))
    assert result.completed
    assert (await guard.totals("user:alice")).requests == 2
    assert (await guard.totals("user:bob")).requests == 2
    with pytest.raises(ValueError, match="pass the session's name"):
        await guard.totals()


async def test_guards_sharing_a_store_share_the_budget_across_agents(make_guard: GuardFactory) -> None:
    one = make_guard(max_requests=3)
    other = make_guard(max_requests=3)
    await Counted(tool_turns=1).agent(one).arun("add")  # 2 requests
    counted = Counted(tool_turns=1)
    with pytest.raises(BudgetExceeded):
        await counted.agent(other, name="second").arun("add")
    assert counted.requests == 1


async def test_reset_starts_the_session_afresh(make_guard: GuardFactory) -> None:
    guard = make_guard(max_requests=1)
    await Counted(tool_turns=0).agent(guard).arun("add")
    await run_blocked(Counted(tool_turns=0).agent(guard))
    await guard.reset()
    assert (await guard.totals()).requests == 0
    assert (await Counted(tool_turns=0).agent(guard).arun("add")).completed


# ----------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_tokens": 0}, "max_tokens must be a positive int"),
        ({"max_requests": -1}, "max_requests must be a positive int"),
        ({"max_requests": True}, "max_requests must be a positive int"),
        ({"max_cost_usd": 0}, "max_cost_usd must be a positive number"),
        ({"max_cost_usd": float("nan")}, "max_cost_usd must be a positive number"),
        ({"action": "stop"}, "action must be 'warn' or 'block'"),
        ({"warn_at": 1.5}, "warn_at must be a fraction"),
        ({"ttl": 0}, "ttl must be a positive number"),
        ({"ttl": True}, "ttl must be a positive number"),
        ({"warn_at": 0}, "warn_at must be a fraction"),
        ({"session": ""}, "session must be a non-empty string"),
    ],
)
def test_bad_settings_are_clear_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TokenGuard(**kwargs)


async def test_a_session_function_returning_no_name_is_a_clear_error() -> None:
    guard = TokenGuard(max_requests=1, session=lambda ctx: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="the session function must return a non-empty string"):
        await Counted(tool_turns=0).agent(guard).arun("add")


async def test_a_per_user_budget_and_a_global_budget_together(make_guard: GuardFactory) -> None:
    """Two guards on one agent: each user's own budget, and one for everybody. A request reserved by
    the first guard and then refused by the second still counts for the first (budgets stop early,
    never late)."""
    per_user = make_guard(max_requests=10, session=lambda ctx: f"user:{ctx.deps.name}")
    everybody = make_guard(max_requests=3, session="everybody")
    alice, bob = Counted(tool_turns=1), Counted(tool_turns=5)
    assert (await alice.agent(per_user, everybody).arun("add", deps=User("alice"))).completed
    blocked = await run_blocked_with(bob.agent(per_user, everybody), deps=User("bob"))
    assert blocked.reasons == ("the session's request budget is spent (3 of 3 model requests)",)
    assert (alice.requests, bob.requests) == (2, 1)
    assert (await everybody.totals()).requests == 3
    assert (await per_user.totals("user:bob")).requests == 2  # the refused one included


async def run_blocked_with(agent: Agent[str], *, deps: object) -> BudgetExceeded:
    with pytest.raises(BudgetExceeded) as caught:
        await agent.arun("add", deps=deps)
    return caught.value


async def test_one_guard_on_an_agent_and_its_handoff_target_counts_both(make_guard: GuardFactory) -> None:
    """Seed 002 §3-1 handoffs: the target's requests come out of the same budget when it has the same
    guard; a budget spent inside the handoff stops the whole run."""
    from kanawa.types import ToolCall

    guard = make_guard(max_requests=2)
    child_requests: list[int] = []
    parent_requests: list[int] = []

    def child_model(request: ModelRequest) -> LLMResponse:
        child_requests.append(1)
        return text_response("the child's answer")

    def parent_model(request: ModelRequest) -> LLMResponse:
        parent_requests.append(1)
        if not request.tool_results:
            call = ToolCall("h1", "transfer_to_child", '{"message": "please answer"}')
            return LLMResponse(
                AssistantMessage(tool_calls=(call,)),
                StopReason.TOOL_USE,
                usage=Usage(input_tokens=100, output_tokens=10),
                model="gpt-5",
            )
        return text_response("the parent's answer")

    child = Agent("child", "", model=FunctionLLM(child_model, model="gpt-5"), guardrails=[guard])
    parent = Agent(
        "parent", "", model=FunctionLLM(parent_model, model="gpt-5"), handoffs=[child], guardrails=[guard]
    )
    blocked = await run_blocked(parent)
    assert (len(parent_requests), len(child_requests)) == (1, 1)
    assert blocked.stage == "model_call"
    assert (await guard.totals()).requests == 2

    await guard.reset()
    child_requests.clear()
    parent_requests.clear()
    spent_inside = make_guard(max_requests=1, session="inside")
    child = Agent("child", "", model=FunctionLLM(child_model, model="gpt-5"), guardrails=[spent_inside])
    parent2 = Agent(
        "parent",
        "",
        model=FunctionLLM(parent_model, model="gpt-5"),
        handoffs=[child],
        guardrails=[spent_inside],
    )
    with pytest.raises(BudgetExceeded):
        await parent2.arun("go")
    assert (len(parent_requests), len(child_requests)) == (1, 0)
