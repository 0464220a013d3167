"""Agents the server tests run: scripted content (FunctionLLM), real tools, real loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kanawa import Agent, tool
from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.server.runs.demo_agents import demo_agents
from kanawa.types import AssistantMessage, ReasoningPart, SystemMessage, ToolCall

SECRET = "sk-proj-SERVERTESTSECRET0123456789abcdefXYZ"
STORY = "Once upon a time a timber joint held a house together without a single nail. " * 3
STORY_STEPS = 3


@tool
async def tick(n: int) -> str:
    """Wait a moment and answer.

    Args:
        n: which tick
    """
    await asyncio.sleep(0.001)
    return f"tick {n}"


@tool
def leaky(note: str) -> str:
    """A tool that fails with a secret in its exception.

    Args:
        note: anything
    """
    raise RuntimeError(f"database password is {SECRET}")


def _story(request: ModelRequest) -> Script:
    done = len(request.tool_results)
    if done < STORY_STEPS:
        return AssistantMessage(tool_calls=(ToolCall(f"call_{done}", "tick", f'{{"n": {done}}}'),))
    return STORY


async def _slow(request: ModelRequest) -> Script:
    """Sleeps per step for the seconds the question names (disconnect, cancel and ping tests)."""
    seconds = float(request.last_user_text or "0.3")
    await asyncio.sleep(seconds)
    if len(request.tool_results) < 2:
        n = len(request.tool_results)
        return AssistantMessage(tool_calls=(ToolCall(f"call_{n}", "tick", f'{{"n": {n}}}'),))
    return "slow and steady"


def _boom(request: ModelRequest) -> Script:
    return LLMConnectionError(f"upstream refused key {SECRET}", provider="test")


def _crash(request: ModelRequest) -> Script:
    raise ValueError(f"an internal failure mentioning {SECRET}")


def _leak(request: ModelRequest) -> Script:
    if request.tool_results:
        return "the tool failed"
    return AssistantMessage(tool_calls=(ToolCall("call_0", "leaky", '{"note": "x"}'),))


SENT: list[str] = []
"""Essays the ``mailer`` agent's approval-gated tool actually sent (counted across modes)."""


@tool(requires_approval=True)
def send_essay(essay_id: str) -> str:
    """Send an essay to the teacher (needs a person's approval).

    Args:
        essay_id: the essay
    """
    SENT.append(essay_id)
    return f"sent {essay_id}"


def _mailer(request: ModelRequest) -> Script:
    if request.tool_results:
        return f"mailer: {request.tool_results[-1].text}"
    return AssistantMessage(tool_calls=(ToolCall("send_1", "send_essay", '{"essay_id": "42"}'),))


def _coordinator(request: ModelRequest) -> Script:
    if request.tool_results:
        return f"the evaluator said: {request.tool_results[-1].text}"
    return AssistantMessage(tool_calls=(ToolCall("h1", "transfer_to_evaluator", '{"message": "grade it"}'),))


def _guarded(request: ModelRequest) -> Script:
    return "my card is 4111 1111 1111 1111"


def _assistant(request: ModelRequest) -> Script:
    """Calls the client-declared ``weather`` tool once when the client offers it, then answers from its
    result: the model of the documented client-tool examples (docs/openai-*.md)."""
    if request.tool_results:
        return f"In Tokyo: {request.tool_results[-1].text}"
    if "weather" in request.tool_names:
        return AssistantMessage(tool_calls=(ToolCall("call_weather", "weather", '{"city": "Tokyo"}'),))
    return "No weather tool was offered."


WEATHER_TOOL = "get_weather"
"""The tool the OpenAI-protocol tests declare as the client's (the ``concierge`` agent calls it)."""


def _concierge(request: ModelRequest) -> Script:
    """Asked for JSON (a request's schema), answers JSON naming the output cap it was given. Else
    thinks aloud, then: with the client's weather tool offered, calls it together with its own
    ``tick`` (one turn, both kinds) and answers with the client's result; without it, greets
    (a pirate when its instructions say so: the request's instructions reached the model)."""
    settings = request.settings
    if settings is not None and settings.response_format == "json_schema":
        return json.dumps({"greeting": f"hello {request.last_user_text}", "cap": settings.max_output_tokens})
    weather = [m for m in request.tool_results if m.name == WEATHER_TOOL]
    if weather:
        return f"Kyoto is {weather[-1].text}"
    if WEATHER_TOOL in request.tool_names and not request.tool_results:
        return AssistantMessage(
            text="Let me check.",
            tool_calls=(
                ToolCall("own_1", "tick", '{"n": 1}'),
                ToolCall("cw_1", WEATHER_TOOL, '{"city": "Kyoto"}'),
            ),
            reasoning=(ReasoningPart(text="The user wants the weather.", provider="test"),),
        )
    system = request.messages[0]
    pirate = isinstance(system, SystemMessage) and "pirate" in system.content
    return AssistantMessage(
        text=f"Hello! You said: {request.last_user_text}" + (" Arr!" if pirate else ""),
        reasoning=(ReasoningPart(text="A greeting is due.", provider="test"),),
    )


def multi_agents() -> dict[str, Agent[Any, Any]]:
    """Agents using the multi-agent library: a handoff, a warning and a blocking guardrail, approval."""
    from kanawa import Guardrail

    evaluator = Agent("evaluator", "Grade essays.", tools=(), model=FunctionLLM(lambda r: "8/10"))
    card = {"card number": r"\b(?:\d[ -]?){13,16}\b"}
    return {
        "mailer": Agent("mailer", "Send essays.", tools=[send_essay], model=FunctionLLM(_mailer)),
        "coordinator": Agent(
            "coordinator", "Route.", tools=(), model=FunctionLLM(_coordinator), handoffs=[evaluator]
        ),
        "warned": Agent(
            "warned",
            "Echo.",
            tools=(),
            model=FunctionLLM(_guarded),
            guardrails=[Guardrail(regex_blocks=card, action="warn")],
        ),
        "blocked": Agent(
            "blocked",
            "Echo.",
            tools=(),
            model=FunctionLLM(_guarded),
            guardrails=[Guardrail(regex_blocks=card)],
        ),
    }


def server_agents() -> dict[str, Agent[Any, Any]]:
    agents = demo_agents()
    agents.update(
        story=Agent("story", "Tell a story.", tools=[tick], model=FunctionLLM(_story)),
        slow=Agent("slow", "Take your time.", tools=[tick], model=FunctionLLM(_slow)),
        boom=Agent("boom", "Fail.", tools=(), model=FunctionLLM(_boom)),
        crash=Agent("crash", "Crash.", tools=(), model=FunctionLLM(_crash)),
        leak=Agent("leak", "Leak.", tools=[leaky], model=FunctionLLM(_leak)),
        assistant=Agent("assistant", "Help.", tools=(), model=FunctionLLM(_assistant)),
        concierge=Agent("concierge", "Help travellers.", tools=[tick], model=FunctionLLM(_concierge)),
        **multi_agents(),
    )
    return agents
