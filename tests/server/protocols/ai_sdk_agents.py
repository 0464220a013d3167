"""The agents the AI SDK tests chat with, and the app that serves them with the useChat page.

``gated`` answers in two steps with its own ``hold`` tool between them, which waits for
:data:`GATE`: the test cuts a client's connection while the run waits there — mid-answer, by
construction rather than by timing — reconnects, and then opens the gate. While ``hold`` runs the
client has its ``tool-input-start`` and ``-delta``; the call's ``tool-input-available`` comes with its
result (the run reports a call of the agent's own tool once it has run).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.server.runs.extensions import Extension
from kanawa.types import AssistantMessage, ReasoningPart, ToolCall
from tests.server.agents import server_agents

ROOT = Path(__file__).resolve().parents[3]
CLIENTS = ROOT / "tests" / "clients" / "aisdk"
BUNDLE = CLIENTS / "node_modules" / ".page" / "chat.js"
FIRST_HALF = "The first half of the answer is here. "
SECOND_HALF = "And the second half arrives after the hold."
GATE = threading.Event()
"""Opened by a test to let ``hold`` return (closed again before each use)."""


@tool
async def hold() -> str:
    """Wait until the test opens the gate."""
    opened = await asyncio.to_thread(GATE.wait, 60)
    return "released" if opened else "timed out"


def _gated(request: ModelRequest) -> Script:
    if request.tool_results:
        return SECOND_HALF
    return AssistantMessage(
        text=FIRST_HALF,
        tool_calls=(ToolCall("hold_1", "hold", "{}"),),
        reasoning=(ReasoningPart(text="Half now, half later.", provider="test"),),
    )


def ai_sdk_agents() -> dict[str, Agent[Any, Any]]:
    """The server test agents (``concierge`` calls the client's ``get_weather``) and ``gated``."""
    agents = server_agents()
    agents["gated"] = Agent("gated", "Answer in two halves.", tools=[hold], model=FunctionLLM(_gated))
    return agents


def page_extension() -> Extension:
    """The useChat page (``/test-page/chat.html``, its bundle ``chat.js``) served by the app itself,
    so the page's requests to ``/ai-sdk`` are same-origin."""
    router = APIRouter()

    @router.get("/test-page/chat.html")
    async def html() -> FileResponse:
        return FileResponse(CLIENTS / "page" / "chat.html", media_type="text/html")

    @router.get("/test-page/chat.js")
    async def bundle() -> FileResponse:
        return FileResponse(BUNDLE, media_type="text/javascript")

    return Extension("ai-sdk-test-page", router=router)
