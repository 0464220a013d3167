"""The agents the docs test serves with ``kanawa serve tests.docs.served_agents:agents`` — the
``myapp:agents`` of docs/server.md — for the example programs the protocol pages quote as fragments
(examples/a2a_client.py, examples/a2a_server_client.py, examples/mcp_http_client.py).

Scripted content (FunctionLLM), a real tool, the real loop and the real server: ``storyteller`` looks
something up before it answers (so an MCP client sees progress), ``researcher`` answers a question
about the question, ``echo`` repeats it.
"""

from __future__ import annotations

from typing import Any

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.types import AssistantMessage, ToolCall


@tool
def look_up(topic: str) -> str:
    """Look a topic up in the notes.

    Args:
        topic: what to look up
    """
    return f"notes on {topic}"


def _story(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("c1", "look_up", '{"topic": "joinery"}'),))
    notes = request.tool_results[-1].text
    return f"A joint that holds without nails ({notes}; you asked: {request.last_user_text})"


def research(question: str) -> str:
    """What ``researcher`` answers to ``question``."""
    return f"Research notes on {question}: built in 1889 for the World's Fair."


def agents() -> dict[str, Agent[Any, Any]]:
    return {
        "echo": Agent("echo", "Repeat the user's words.", model=FunctionLLM(lambda r: r.last_user_text)),
        "researcher": Agent(
            "researcher", "Find facts.", model=FunctionLLM(lambda r: research(r.last_user_text))
        ),
        "storyteller": Agent(
            "storyteller",
            "Tell a story about what the user asks.",
            tools=[look_up],
            model=FunctionLLM(_story),
        ),
    }
