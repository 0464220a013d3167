"""Budgets: a session's tokens, requests and money under one TokenGuard (offline, runnable).

A scripted model stands in for ``openai:gpt-5`` and reports real-looking usage, so the guard prices
it with the shipped price table. The first run passes half of the money budget, then spends it (two
warnings a client can show as chat bubbles); the second run of that session is stopped before its
model request is sent, while another user's session has its own budget. With
``KANAWA_REDIS_URL`` set, the same totals live in Redis and every process shares them.

Run: ``python examples/budgets.py``
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from kanawa import Agent, FunctionLLM, RunContext, tool
from kanawa.agents.budget import TokenGuard
from kanawa.llm.testing import ModelRequest
from kanawa.loop.errors import BudgetExceeded
from kanawa.loop.events import GuardrailTripped
from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolCall, Usage


@dataclass
class Deps:
    user_id: str


@tool
def lookup(ctx: RunContext[Deps], topic: str) -> str:
    """Look a topic up in the user's notes.

    Args:
        topic: what to look up
    """
    return f"{ctx.deps.user_id}'s notes on {topic}: kanawa joints hold without nails."


def gpt5_stand_in(request: ModelRequest) -> LLMResponse:
    """Asks for one lookup, then answers; every response reports 4,000 input and 500 output tokens."""
    usage = Usage(input_tokens=4_000, output_tokens=500, requests=1)
    if not request.tool_results:
        call = ToolCall("call_1", "lookup", '{"topic": "joinery"}')
        return LLMResponse(
            AssistantMessage(tool_calls=(call,)), StopReason.TOOL_USE, usage=usage, model="gpt-5"
        )
    return LLMResponse(
        AssistantMessage(text="They hold by shape alone."), StopReason.END_TURN, usage=usage, model="gpt-5"
    )


async def main() -> None:
    guard = TokenGuard(
        max_tokens=100_000,
        max_requests=50,
        max_cost_usd=0.02,  # gpt-5: $1.25 / M input, $10 / M output → $0.01 per response here
        session=lambda ctx: ctx.deps.user_id,
        warn_at=0.5,
    )
    agent: Agent[str, Deps] = Agent(
        "notes",
        "Answer from the user's notes.",
        tools=[lookup],
        model=FunctionLLM(gpt5_stand_in, model="gpt-5"),
        deps_type=Deps,
        guardrails=[guard],
    )
    async with guard:
        async for event in agent.stream("How do kanawa joints hold?", deps=Deps("u-42")):
            if isinstance(event, GuardrailTripped):
                print(f"[{event.action}] {event.reasons[0]}")
        totals = await guard.totals("u-42")
        print(f"session u-42: {totals.requests} requests, {totals.tokens:,} tokens, ${totals.cost_usd:.4f}")
        try:
            await agent.arun("And again?", deps=Deps("u-42"))
        except BudgetExceeded as exc:
            print(f"stopped before the model call: {exc.reasons[0]}")
        other = await agent.arun("How do kanawa joints hold?", deps=Deps("u-7"))
        print(f"session u-7 is separate: {other.text} (cost ${other.cost:.4f})")


if __name__ == "__main__":
    asyncio.run(main())
