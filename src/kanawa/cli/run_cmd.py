"""``kanawa run --model <model string> "question"``: one question, streamed, with built-in tools.

The model string goes through :func:`kanawa.llm.models.resolve_model` before anything is printed, so
an unusable provider (unknown prefix, SDK extra missing, no API key) costs one line and exit code 2.
``--model test`` runs offline with :class:`~kanawa.llm.testing.models.TestLLM`. ``--max-tokens`` /
``--max-cost`` put a :class:`~kanawa.agents.budget.TokenGuard` on the run (in memory, for this run
only); the usage and cost are printed at the end either way.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kanawa.agents.agent import Agent
from kanawa.cli.errors import setup_hint
from kanawa.cli.running import EXIT_SETUP, execute, make_tracer
from kanawa.llm.errors import LLMError
from kanawa.llm.models import resolve_model
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.hooks import RunHooks
from kanawa.tools.base import Tool
from kanawa.tools.builtin import calculator, current_time


async def run_question(
    console: Console,
    err: Console,
    *,
    question: str,
    model: str,
    instructions: str,
    stream: bool = True,
    tools: bool = True,
    max_steps: int = 10,
    trace: bool | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
) -> int:
    """Resolve the model, run the agent and print it; returns the exit code."""
    try:
        adapter = resolve_model(model)
    except LLMError as exc:
        err.print(Text(setup_hint(model, exc)), soft_wrap=True, highlight=False)
        return EXIT_SETUP
    try:
        tracer = make_tracer(trace)
    except ValueError as exc:  # a bad KANAWA_TRACE_* setting
        err.print(Text(f"kanawa: {exc}"), soft_wrap=True, highlight=False)
        return EXIT_SETUP
    offered: list[Tool] = [calculator, current_time] if tools else []
    guards: list[RunHooks] = []
    if max_tokens is not None or max_cost is not None:
        from kanawa.agents.budget import MemoryBudgetStore, TokenGuard

        try:
            guards.append(TokenGuard(max_tokens=max_tokens, max_cost_usd=max_cost, store=MemoryBudgetStore()))
        except ValueError as exc:
            err.print(Text(f"kanawa: {exc}"), soft_wrap=True, highlight=False)
            return EXIT_SETUP
    agent: Agent[str] = Agent(
        "kanawa-run",
        instructions,
        tools=offered,
        model=adapter,
        output_type=str,
        config=AgentConfiguration(max_steps=max_steps),
        tracer=tracer,
        guardrails=guards,
    )
    return await execute(agent, question, model_spec=model, console=console, err=err, stream=stream)


__all__ = ["run_question"]
