"""One answer text on every protocol (docs/design.md, "One answer text"; issue 34, item 6): an agent
that says something, calls a tool, then says the rest answers with all of it, in order — over MCP
(HTTP with the official ``mcp`` client, and stdio's toolset), OpenAI Responses and Chat Completions
(``openai``), and A2A (``a2a-sdk``), streamed and not. Before, an MCP result held only the last step's
text while the others held both."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import types
from openai import AsyncOpenAI

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM, ModelRequest, Script
from kanawa.mcp_server.toolset import AgentToolset
from kanawa.server.http.app import create_app
from kanawa.types import AssistantMessage, ToolCall
from tests.mcp_server.test_http import session_of
from tests.server.conftest import LiveServer, redis_url, settings_for
from tests.server.protocols.a2a_support import a2a_client, ask, text_of
from tests.server.sse import KEY_A

__all__ = ["redis_url"]  # the Redis fixture, for the redis mode

BEFORE = "Let me look that up. "
AFTER = "Joints lock without nails."
ANSWER = BEFORE + AFTER


@tool
def look_up(topic: str) -> str:
    """Look a topic up.

    Args:
        topic: what to look up
    """
    return f"notes on {topic}"


def _talks_first(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(
            text=BEFORE, tool_calls=(ToolCall("call_1", "look_up", '{"topic": "joints"}'),)
        )
    return AFTER


def narrator() -> Agent[None, str]:
    return Agent("narrator", "Says what it does.", tools=[look_up], model=FunctionLLM(_talks_first))


@pytest.fixture(scope="module", params=["embedded", "redis"])
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    live = LiveServer(
        create_app(agents={"narrator": narrator()}, settings=settings_for(request.param, redis))
    )
    live.start()
    try:
        yield live
    finally:
        live.stop()


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize("progress", [False, True])
async def test_mcp_over_http(server: LiveServer, progress: bool) -> None:
    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        pass

    async with session_of(server.url, KEY_A) as session:
        result = await session.call_tool(
            "narrator", {"input": "joints?"}, progress_callback=on_progress if progress else None
        )
    assert not result.is_error
    assert _text(result) == ANSWER


async def test_mcp_over_stdio_toolset() -> None:
    result = await AgentToolset({"narrator": narrator()}).call("narrator", {"input": "joints?"})
    assert _text(result) == ANSWER


@pytest.mark.parametrize("stream", [False, True])
async def test_responses(server: LiveServer, stream: bool) -> None:
    async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key=KEY_A, max_retries=0, timeout=30) as client:
        if stream:
            async with client.responses.stream(model="narrator", input="joints?") as events:
                response = await events.get_final_response()
        else:
            response = await client.responses.create(model="narrator", input="joints?")
    assert response.output_text == ANSWER


async def test_chat_completions(server: LiveServer) -> None:
    async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key=KEY_A, max_retries=0, timeout=30) as client:
        answer = await client.chat.completions.create(
            model="narrator", messages=[{"role": "user", "content": "joints?"}]
        )
    assert answer.choices[0].message.content == ANSWER


@pytest.mark.parametrize("streaming", [False, True])
async def test_a2a(server: LiveServer, streaming: bool) -> None:
    async with a2a_client(server.url, "narrator", streaming=streaming) as client:
        events = [event async for event in client.send_message(ask("joints?"))]
    assert text_of(events) == ANSWER
