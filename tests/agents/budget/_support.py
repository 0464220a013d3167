"""Scripted conversations for the budget tests: responses with known usage and a counted tool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from kanawa import Agent, AgentConfiguration, FunctionLLM, tool
from kanawa.agents.budget import TokenGuard
from kanawa.llm.testing import ModelRequest
from kanawa.loop.errors import BudgetExceeded
from kanawa.loop.events import GuardrailTripped
from kanawa.tools.base import Tool
from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolCall, Usage


def tool_call_response(
    n: int, *, usage: Usage | None = None, model: str = "gpt-5", calls: int = 1
) -> LLMResponse:
    """A response asking for ``calls`` ``add`` calls, with the given usage (default 100 in / 10 out)."""
    message = AssistantMessage(
        tool_calls=tuple(ToolCall(f"call_{n}_{i}", "add", f'{{"a": {n}, "b": {i}}}') for i in range(calls))
    )
    return LLMResponse(
        message,
        StopReason.TOOL_USE,
        usage=usage or Usage(input_tokens=100, output_tokens=10, requests=1),
        model=model,
    )


def text_response(text: str = "done", *, usage: Usage | None = None, model: str = "gpt-5") -> LLMResponse:
    return LLMResponse(
        AssistantMessage(text=text),
        StopReason.END_TURN,
        usage=usage or Usage(input_tokens=100, output_tokens=10, requests=1),
        model=model,
    )


@dataclass
class Counted:
    """An agent whose model asks for ``add`` ``tool_turns`` times, then answers; counts what ran."""

    requests: int = 0
    tool_runs: int = 0
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=100, output_tokens=10, requests=1))
    tool_turns: int = 3
    model: str = "gpt-5"
    pause: Callable[[], Awaitable[None]] | None = None

    def tool(self) -> Tool:
        counter = self

        @tool
        def add(a: int, b: int) -> int:
            """Add two integers.

            Args:
                a: first addend
                b: second addend
            """
            counter.tool_runs += 1
            return a + b

        return add

    async def answer(self, request: ModelRequest) -> LLMResponse:
        self.requests += 1
        if self.pause is not None:
            await self.pause()
        turn = len(request.tool_results)
        if turn < self.tool_turns:
            return tool_call_response(turn, usage=self.usage, model=self.model)
        return text_response(usage=self.usage, model=self.model)

    def agent(self, *guards: TokenGuard, name: str = "budgeted") -> Agent[str]:
        return Agent(
            name,
            "Add.",
            tools=[self.tool()],
            model=FunctionLLM(self.answer, model=self.model),
            config=AgentConfiguration(max_steps=100, max_tool_calls_per_tool=100),
            guardrails=guards,
        )


async def run_to_end(agent: Agent[str], prompt: str = "add") -> tuple[Usage, bool]:
    """Run ``agent``; its usage (of the partial result when a budget stopped it) and whether it was."""
    try:
        result = await agent.arun(prompt)
    except BudgetExceeded as exc:
        if exc.partial_result is None:
            raise
        return exc.partial_result.usage, True
    return result.usage, False


# gpt-5: $1.25 per million input, $10 per million output → 100 in + 10 out = $0.000225
COST_NANO = 225_000


def warnings_of(events: Any) -> list[GuardrailTripped]:
    return [e for e in events if isinstance(e, GuardrailTripped) and e.action == "warn"]


async def run_blocked(agent: Agent[str], prompt: str = "add") -> BudgetExceeded:
    with pytest.raises(BudgetExceeded) as caught:
        await agent.arun(prompt)
    return caught.value
