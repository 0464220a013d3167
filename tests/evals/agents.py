"""Agents for the eval tests: scripted models whose right answers are known.

``calculator`` answers "What is A+B?" by calling the ``add`` tool and then saying the sum; a prompt
containing "wrong" makes it answer one too many, and "slow" makes the model sleep (for timeouts).
Importable as ``tests.evals.agents:calculator`` for the CLI and the served tests.
"""

from __future__ import annotations

import asyncio
import json
import re

from kanawa import Agent, FunctionLLM, tool
from kanawa.llm.testing.models import ModelRequest
from kanawa.types import AssistantMessage, ToolCall, ToolMessage, UserMessage, text_of

_SUM = re.compile(r"(\d+)\s*\+\s*(\d+)")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _question(request: ModelRequest) -> str:
    for message in request.messages:
        if isinstance(message, UserMessage):
            return text_of(message.parts)
    return ""


async def _answer(request: ModelRequest) -> str | AssistantMessage:
    question = _question(request)
    if "slow" in question:
        await asyncio.sleep(30)
    results = [m for m in request.messages if isinstance(m, ToolMessage)]
    match = _SUM.search(question)
    if match is None:
        return "I only add numbers."
    if not results:
        a, b = int(match.group(1)), int(match.group(2))
        return AssistantMessage(tool_calls=(ToolCall("call-1", "add", json.dumps({"a": a, "b": b})),))
    total = int(text_of(results[-1].parts))
    if "wrong" in question:
        total += 1
    return f"The answer is {total}."


def make_calculator() -> Agent:
    """A fresh calculator agent (its model keeps request records, so tests make their own)."""
    return Agent("calculator", "Add numbers with the add tool.", model=FunctionLLM(_answer), tools=[add])


calculator = make_calculator()
