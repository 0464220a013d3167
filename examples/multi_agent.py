"""Several agents, runnable offline: ``python examples/multi_agent.py``.

The seed's shape (seed 002 §2–§3): a coordinator routes an essay to specialist agents and merges
their answers; the drafting agent hands the essay to an evaluator (a handoff, offered to its model as
the tool ``transfer_to_eval``); a guardrail blocks card numbers anywhere; and sending the essay to a
teacher waits for a person's approval. The models are scripted functions so it runs without a key;
swap each ``model=`` for a model string (``"openai:gpt-5"`` …) to use a provider. ``mypy --strict``
checks this file (``make typecheck``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from kanawa import Agent, AgentTeam, Approvals, FunctionLLM, Guardrail, RuleRouter, RunResult, tool
from kanawa.llm.testing import ModelRequest
from kanawa.loop.events import GuardrailTripped, HandoffStarted, NestedEvent
from kanawa.types import AssistantMessage, ToolCall

ESSAY = "私は地域の医療を支えたいと考え、貴学の看護学科を志望します。"

no_card_numbers = Guardrail(regex_blocks={"card number": r"\b(?:\d[ -]?){13,16}\b"}, name="pii")


def evaluator_model(request: ModelRequest) -> str:
    return "評価: 7/10 — 動機は明確だが、具体的な経験が足りない。"


def drafter_model(request: ModelRequest) -> AssistantMessage | str:
    if not request.tool_results:  # first turn: hand the essay to the evaluator
        return AssistantMessage(
            tool_calls=(ToolCall("h1", "transfer_to_eval", '{"message": "採点してください"}'),)
        )
    return f"深掘り案: 経験の具体例を一段落追加する。（{request.tool_results[-1].text}）"


def style_model(request: ModelRequest) -> str:
    return "文体: です・ます調で統一されています。"


@tool(requires_approval=True)
def send_to_teacher(essay_id: str) -> str:
    """Send the essay to the student's teacher.

    Args:
        essay_id: the essay to send
    """
    return f"sent essay {essay_id}"


def mailer_model(request: ModelRequest) -> AssistantMessage | str:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("m1", "send_to_teacher", '{"essay_id": "42"}'),))
    return f"Done: {request.tool_results[-1].text}"


def merge(results: Mapping[str, RunResult[Any]]) -> dict[str, str]:
    return {name: result.text for name, result in results.items()}


async def main() -> None:
    evaluator = Agent("Eval", "Score the essay from 1 to 10 and say why.", model=FunctionLLM(evaluator_model))
    draft = Agent(
        "Draft",
        "Deepen the essay; keep its headings.",
        model=FunctionLLM(drafter_model),
        handoffs=[evaluator],
        guardrails=[no_card_numbers],
    )
    style = Agent(
        "Style", "Point out style problems.", model=FunctionLLM(style_model), guardrails=[no_card_numbers]
    )
    coordinator = AgentTeam(
        "AgentTeam",
        router=RuleRouter([(r"文体|style", ["Style"])], default=["Draft", "Style"]),
        agents=[draft, style],
        mode="parallel",
        merge=merge,
    )
    running = coordinator.stream(ESSAY)
    async for event in running:
        if isinstance(event, NestedEvent) and isinstance(event.event, HandoffStarted):
            print(f"{event.agent} hands off to {event.event.target}")
        elif isinstance(event, NestedEvent) and isinstance(event.event, GuardrailTripped):
            print(f"guardrail in {event.agent}: {event.event.reasons}")
    result = running.result
    print("route:", result.route.agents, f"({result.route.reason})")
    for name, text in result.output.items():
        print(f"{name}: {text}")

    mailer = Agent(
        "Mailer", "Send essays when asked.", tools=[send_to_teacher], model=FunctionLLM(mailer_model)
    )
    waiting = await mailer.arun("Send essay 42 to my teacher.")
    print("mailer:", waiting.termination_reason, [call.name for call in waiting.pending_approvals])
    approved = await mailer.arun(
        Approvals(approved=[waiting.pending_approvals[0].id]), history=waiting.messages
    )
    print("mailer:", approved.output)


if __name__ == "__main__":
    asyncio.run(main())
