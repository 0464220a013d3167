"""A registry whose tool prints to stdout, as careless tools do (``test_stdout_guard``)."""

from __future__ import annotations

import os
import sys

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import AssistantMessage, ModelRequest, Script, ToolCall


@tool
def shout(word: str) -> str:
    """Says the word louder, and prints on the way (through ``print`` and straight to fd 1)."""
    print("print() from a tool " * 10)
    sys.stdout.write("sys.stdout.write from a tool\n")
    os.write(1, b"os.write(1) from a tool\n")
    return word.upper()


def _shouter(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("call_1", "shout", '{"word": "hello"}'),))
    return f"I said {request.tool_results[-1].text}"


agents = {"shouter": Agent("shouter", "Shouts.", tools=[shout], model=FunctionLLM(_shouter))}
