"""Agents the A2A server tests serve: the server suite's agents plus ``teller``, whose answer stops
half way until the test opens its gate (a stream cut mid-answer, a cancel of a working task, a run
holding a run slot — each without a sleep standing in for synchronisation).

``teller`` tells :data:`TALE` in 8-character deltas; after :data:`HALF` of them it waits for
``GATES[<the question>]`` (a :class:`threading.Event`: the server runs in the test's process, in a
thread of its own), then tells the rest. ``python -m kanawa serve tests.server.protocols.a2a_agents:remote``
serves ``researcher`` for the cross-process handoff test.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from typing import Any

from kanawa import Agent
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.types import Message, StreamEvent, UserMessage
from tests.server.agents import server_agents

TALE = "A joiner cut two beams so true that they locked without a nail and held for three hundred years."
HALF = 5
"""Deltas sent before the gate."""
GATE_WAIT_S = 120.0
GATES: defaultdict[str, threading.Event] = defaultdict(threading.Event)
"""Per question: set it to let ``teller`` finish its answer."""


def _last_user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.text
    return ""


class GatedLLM(FunctionLLM):
    """Streams its answer, stopping after :data:`HALF` text deltas until the question's gate opens."""

    async def stream(self, messages: Sequence[Message], **kwargs: Any) -> AsyncIterator[StreamEvent]:  # type: ignore[override]
        gate = GATES[_last_user_text(messages)]
        sent = 0
        async for event in super().stream(messages, **kwargs):
            if event.kind == "text_delta":
                if sent == HALF:
                    await asyncio.to_thread(gate.wait, GATE_WAIT_S)
                sent += 1
            yield event


def _tale(request: ModelRequest) -> Script:
    return TALE


def _research(request: ModelRequest) -> Script:
    return f"Research notes on {request.last_user_text}: built in 1889 for the World's Fair."


def agents() -> dict[str, Agent[Any, Any]]:
    made = server_agents()
    made["teller"] = Agent("teller", "Tell a tale, slowly.", tools=(), model=GatedLLM(_tale))
    return made


def remote() -> dict[str, Agent[Any, Any]]:
    """What the second ``kanawa serve`` process serves."""
    return {"researcher": Agent("researcher", "Find facts.", tools=(), model=FunctionLLM(_research))}
