"""Agents the AG-UI tests serve: scripted models (FunctionLLM), real tools, the real loop.

- ``helper`` looks the weather up with its own ``lookup`` tool, then — when the frontend offers its
  ``set_theme`` tool — asks the frontend to colour the page, and answers from both results;
- ``recipe`` answers with a structured ``Recipe`` (an agent with AG-UI state): the state the input
  carried, one more serving;
- ``desk`` hands the question to ``grader`` (a handoff: an AG-UI step);
- ``teller`` streams a long story (the reconnect tests cut it mid-answer);
- ``shaky`` fails (a ``RUN_ERROR``);
- ``slow`` waits the seconds its question names before it answers (streams and runs held open);
- ``painter`` asks the frontend's ``set_theme`` for the colour its question names, word for word (an
  agent whose tool arguments a prompt steered), then answers with what the page said.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from pydantic import BaseModel

from kanawa import Agent, tool
from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.types import AssistantMessage, SystemMessage, ToolCall

FRONTEND_TOOL = "set_theme"
STORY = "A carpenter fitted two beams with a dovetail joint, and the roof stood for a century. " * 6


@tool
def lookup(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: the city
    """
    return f"{city}: sunny, 21°C"


def _helper(request: ModelRequest) -> Script:
    results = {m.name: m.text for m in request.tool_results}
    if "lookup" not in results:
        return AssistantMessage(tool_calls=(ToolCall("own_lookup", "lookup", '{"city": "Tokyo"}'),))
    if FRONTEND_TOOL in request.tool_names and FRONTEND_TOOL not in results:
        return AssistantMessage(
            text="Let me brighten the page.",
            tool_calls=(ToolCall("fe_theme", FRONTEND_TOOL, '{"color": "rgb(255, 220, 120)"}'),),
        )
    theme = results.get(FRONTEND_TOOL)
    asked = sum(1 for m in request.messages if m.role == "user")
    return (
        f"Weather {results['lookup']}."
        + (f" The page says: {theme}." if theme else "")
        + f" (question {asked})"
    )


class Recipe(BaseModel):
    title: str
    servings: int


_STATE = re.compile(r"shared state \(JSON\): (\{.*\})")


def _recipe(request: ModelRequest) -> Script:
    system = request.messages[0]
    found = _STATE.search(system.content) if isinstance(system, SystemMessage) else None
    state: dict[str, Any] = json.loads(found.group(1)) if found else {"title": "Soup", "servings": 1}
    return json.dumps({"title": state.get("title", "Soup"), "servings": int(state.get("servings", 1)) + 1})


def _desk(request: ModelRequest) -> Script:
    if request.tool_results:
        return f"The grader said {request.tool_results[-1].text}"
    return AssistantMessage(tool_calls=(ToolCall("to_grader", "transfer_to_grader", '{"message": "grade"}'),))


def _shaky(request: ModelRequest) -> Script:
    return LLMConnectionError("upstream closed the connection", provider="test")


async def _slow(request: ModelRequest) -> Script:
    await asyncio.sleep(float(request.last_user_text or "0.2"))
    return "slow and steady"


def _painter(request: ModelRequest) -> Script:
    said = [m.text for m in request.messages[-1:] if m.role == "tool"]
    if said:
        return f"The page says: {said[0]}"
    colour = json.dumps({"color": request.last_user_text})
    return AssistantMessage(tool_calls=(ToolCall(f"paint_{len(request.messages)}", FRONTEND_TOOL, colour),))


def agents() -> dict[str, Agent[Any, Any]]:
    grader = Agent("grader", "Grade.", tools=(), model=FunctionLLM(lambda r: "9/10"))
    return {
        "helper": Agent("helper", "Help.", tools=[lookup], model=FunctionLLM(_helper)),
        "recipe": Agent("recipe", "Cook.", tools=(), model=FunctionLLM(_recipe), output_type=Recipe),
        "desk": Agent("desk", "Route.", tools=(), model=FunctionLLM(_desk), handoffs=[grader]),
        "teller": Agent("teller", "Tell.", tools=(), model=FunctionLLM(lambda r: STORY)),
        "shaky": Agent("shaky", "Fail.", tools=(), model=FunctionLLM(_shaky)),
        "slow": Agent("slow", "Take your time.", tools=(), model=FunctionLLM(_slow)),
        "painter": Agent("painter", "Paint.", tools=(), model=FunctionLLM(_painter)),
    }
