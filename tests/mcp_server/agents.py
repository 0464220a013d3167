"""Agents ``kanawa mcp tests.mcp_server.agents:agents`` serves in the MCP server tests: offline
FunctionLLM models, real tools, the real loop.

``waiter``'s tool writes ``started`` to the file named by ``KANAWA_TEST_MCP_MARKER``, then waits; when
its run is cancelled it writes ``cancelled`` — so a test in another process can see a cancellation
arrive at the run.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from pydantic import BaseModel

from kanawa import Agent, tool
from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.loop.config import AgentConfiguration
from kanawa.types import AssistantMessage, ToolCall

SECRET = "sk-proj-MCPSERVERTESTSECRET0123456789abcdef"
STORY_INSTRUCTIONS = (
    "Tell a short story about joinery.\nLooks things up first.\nThe house code is KW-JOINT-5512."
)
"""``storyteller``'s instructions: private, so no tool list shows them (its ``description`` is what
callers read)."""
STORY_DESCRIPTION = "Tells a short story about joinery."
STORY = "A joint that holds without nails is made by cutting both timbers so each locks the other."


class Verdict(BaseModel):
    """The ``judge`` agent's structured answer."""

    topic: str
    score: int


@tool
def look_up(topic: str) -> str:
    """Look a topic up.

    Args:
        topic: what to look up
    """
    return f"notes on {topic}"


@tool
async def wait_forever(reason: str) -> str:
    """Wait until cancelled.

    Args:
        reason: why
    """
    _mark("started")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        _mark("cancelled")
        raise
    return "never"


def _mark(state: str) -> None:
    Path(os.environ["KANAWA_TEST_MCP_MARKER"]).write_text(state)


def _storyteller(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("call_1", "look_up", '{"topic": "joinery"}'),))
    return f"{STORY} ({request.tool_results[-1].text}; you asked: {request.last_user_text})"


def _judge(request: ModelRequest) -> Script:
    return json.dumps({"topic": request.last_user_text, "score": 7})


def _counter(request: ModelRequest) -> Script:
    return "[1, 2, 3]"


def _broken(request: ModelRequest) -> Script:
    return LLMConnectionError(f"upstream refused key {SECRET}", provider="test")


def _waiter(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("call_1", "wait_forever", '{"reason": "test"}'),))
    return "done waiting"


agents = [
    Agent(
        "storyteller",
        STORY_INSTRUCTIONS,
        tools=[look_up],
        model=FunctionLLM(_storyteller),
        description=STORY_DESCRIPTION,
    ),
    Agent("judge", "Score a topic from 1 to 10.", output_type=Verdict, model=FunctionLLM(_judge)),
    Agent("counter", "Count to three.", output_type=list[int], model=FunctionLLM(_counter)),
    Agent("broken", "Always fails.", model=FunctionLLM(_broken)),
    # no tool timeout: only a cancellation from the host can end wait_forever (at the default 60 s
    # timeout the loop would cancel it too, and a test waiting for "cancelled" could not tell who did)
    Agent(
        "waiter",
        "Waits for ever.",
        tools=[wait_forever],
        model=FunctionLLM(_waiter),
        config=AgentConfiguration(tool_timeout=None),
    ),
]
