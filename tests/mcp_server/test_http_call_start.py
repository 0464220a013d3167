"""A tool call's progress ("calling X") reaches the MCP host when the call starts, not once the tool
has returned — through the official ``mcp`` client against ``kanawa serve``'s ``/mcp`` on loopback,
in memory and with Redis, and over stdio (``kanawa mcp``'s toolset in process).

The served agent's tool waits for a gate that the test opens only from its progress callback, on
seeing "calling open_when_told". Told late, the gate is never opened while the tool waits: the tool
gives up after :data:`GATE_SECONDS` and answers so, and the answer says which happened (no clock is
asserted on)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import types

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.mcp_server import AgentToolset
from kanawa.server.http.app import create_app
from kanawa.types import AssistantMessage, ToolCall
from tests.mcp_server.test_http import session_of
from tests.server.conftest import LiveServer, redis_url, settings_for
from tests.server.sse import KEY_A

pytestmark = pytest.mark.timeout(120)

__all__ = ["redis_url"]  # the Redis fixture, for the redis mode

GATE_SECONDS = 20.0
"""How long the tool waits for the gate before it gives up (a bound on a failing run, not a timing
the test checks)."""
GATE = threading.Event()
"""Opened by the test's progress callback (the server runs the tool in another thread's loop)."""


@tool
async def open_when_told(reason: str) -> str:
    """Wait until the host has been told this call started.

    Args:
        reason: why
    """
    opened = await asyncio.to_thread(GATE.wait, GATE_SECONDS)
    return "the gate was opened while I waited" if opened else "nobody opened the gate"


def _gatekeeper(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("call_1", "open_when_told", '{"reason": "test"}'),))
    return request.tool_results[-1].text


def gatekeeper() -> Agent[Any]:
    return Agent("gatekeeper", "Wait at the gate.", tools=[open_when_told], model=FunctionLLM(_gatekeeper))


@pytest.fixture(params=["embedded", "redis"])
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    live = LiveServer(
        create_app(agents={"gatekeeper": gatekeeper()}, settings=settings_for(request.param, redis))
    )
    live.start()
    try:
        yield live
    finally:
        live.stop()


def _opening_progress(seen: list[str | None]) -> Any:
    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message)
        if message == "calling open_when_told":
            GATE.set()

    return on_progress


async def test_over_http_the_host_is_told_of_a_call_before_the_tool_returns(server: LiveServer) -> None:
    GATE.clear()
    seen: list[str | None] = []
    async with session_of(server.url, KEY_A) as session:
        result = await session.call_tool(
            "gatekeeper", {"input": "go"}, progress_callback=_opening_progress(seen)
        )
    assert not result.is_error
    assert "calling open_when_told" in seen
    assert seen.count("calling open_when_told") == 1  # told at the start, not again with the result
    answer = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
    assert answer == "the gate was opened while I waited"


async def test_over_stdio_the_host_is_told_of_a_call_before_the_tool_returns() -> None:
    GATE.clear()
    seen: list[str | None] = []
    on_progress = _opening_progress(seen)

    async def report(message: str) -> None:
        await on_progress(len(seen), None, message)

    result = await AgentToolset({"gatekeeper": gatekeeper()}).call(
        "gatekeeper", {"input": "go"}, report=report
    )
    assert seen.count("calling open_when_told") == 1
    answer = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
    assert answer == "the gate was opened while I waited"
