"""The agents ``bench/hostile_figures.py`` serves with ``kanawa serve bench.hostile_agents:agents``:
the demo agents, ``big`` (an 8 MiB answer, in 64 KiB text deltas) and ``hold`` (a run that keeps its
stream open for as long as the figures need it to, without a model call)."""

from __future__ import annotations

import asyncio
from typing import Any

from kanawa import Agent
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script, response_from
from kanawa.server.runs.demo_agents import demo_agents
from kanawa.types import ResponseCompleted, TextDelta

ANSWER_BYTES = 8 * 1024 * 1024
"""The size of ``big``'s answer: the size the issue's amplification and stalled-reader figures use."""
PIECE = 64 * 1024
HOLD_S = 600.0
"""How long ``hold`` waits before answering: longer than any figure takes (the server is stopped)."""


def _big(request: ModelRequest) -> Script:
    piece = ("0123456789abcdef" * (PIECE // 16))[:PIECE]
    count = ANSWER_BYTES // PIECE
    return [*(TextDelta(piece) for _ in range(count)), ResponseCompleted(response_from(piece * count))]


async def _hold(request: ModelRequest) -> Script:
    await asyncio.sleep(HOLD_S)
    return "held"


def agents() -> dict[str, Agent[Any, Any]]:
    made = demo_agents()
    made["big"] = Agent("big", "Answer at length.", tools=(), model=FunctionLLM(_big))
    made["hold"] = Agent("hold", "Wait.", tools=(), model=FunctionLLM(_hold))
    return made
