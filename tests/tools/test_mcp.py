"""MCP tools against real servers: ``mcp-server-time`` from PyPI over stdio, and a streamable-HTTP server
built with the ``mcp`` package's ``MCPServer`` on a loopback port."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as ServerToolError
from mcp.types import EmbeddedResource, TextResourceContents

from kanawa import Agent
from kanawa.llm.testing import ScriptedLLM
from kanawa.tools import ToolErrorKind, ToolInvoker
from kanawa.tools.mcp import MCPServerStdio, MCPServerStreamableHTTP
from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE
from kanawa.trace import InMemoryTraceSink, Tracer
from kanawa.types import AssistantMessage, ImagePart, TextPart, ToolCall, ToolMessage, text_of

PNG = b"\x89PNG\r\n\x1a\n-not-a-real-image"


def _time_server(**options: object) -> MCPServerStdio:
    return MCPServerStdio(
        sys.executable,
        args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
        **options,  # type: ignore[arg-type]
    )


def _children_running(module: str) -> list[int]:
    """Pids of this process's live children whose command line mentions ``module`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and state != "Z" and module in cmdline:
            found.append(int(entry.name))
    return found


async def test_stdio_server_tools_become_kanawa_tools_with_their_schemas() -> None:
    async with _time_server() as server:
        tools = {t.name: t for t in await server.list_tools()}
    assert set(tools) == {"get_current_time", "convert_time"}
    schema = tools["convert_time"].parameters
    assert schema["type"] == "object"
    assert set(schema["required"]) == {"source_timezone", "time", "target_timezone"}  # type: ignore[arg-type]
    assert tools["get_current_time"].spec.description.startswith("Get current time")


async def test_agent_calls_a_stdio_mcp_tool_and_the_process_is_gone_after_the_block() -> None:
    llm = ScriptedLLM(
        [
            AssistantMessage(
                tool_calls=(
                    ToolCall(
                        "c1",
                        "time_convert_time",
                        '{"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}',
                    ),
                )
            ),
            "It is 21:00 in Tokyo.",
        ]
    )
    async with _time_server(tool_prefix="time") as server:
        assert _children_running("mcp_server_time")
        agent = Agent("clock", tools=await server.list_tools(), model=llm)
        result = await agent.arun("Noon UTC in Tokyo?")
    assert result.text == "It is 21:00 in Tokyo."
    reply = result.messages[-2]
    assert isinstance(reply, ToolMessage)
    assert not reply.is_error
    tool_reply = text_of(reply.parts)
    assert "Asia/Tokyo" in tool_reply
    assert "21:00" in tool_reply
    assert _children_running("mcp_server_time") == []


async def test_arguments_breaking_the_input_schema_are_refused_before_reaching_the_server() -> None:
    async with _time_server() as server:
        invoker = ToolInvoker(await server.list_tools())
        bad_type = await invoker.invoke(ToolCall("c1", "get_current_time", '{"timezone": 5}'))
        missing = await invoker.invoke(ToolCall("c2", "convert_time", '{"time": "10:00"}'))
        unknown = await invoker.invoke(ToolCall("c3", "get_time", "{}"))
    assert bad_type.error_kind is ToolErrorKind.VALIDATION_ERROR
    assert "timezone: 5 is not of type 'string'" in text_of(bad_type.content)
    assert missing.error_kind is ToolErrorKind.VALIDATION_ERROR
    assert "'source_timezone' is a required property" in text_of(missing.content)
    assert unknown.error_kind is ToolErrorKind.UNKNOWN_TOOL
    # Nothing ran: a refused call never reaches the server, so no execution detail was recorded.
    assert bad_type.detail is None
    assert missing.detail is None


async def test_an_is_error_result_becomes_the_seed_error_message_with_details_in_the_trace_only() -> None:
    async with _time_server() as server:
        invoker = ToolInvoker(await server.list_tools())
        result = await invoker.invoke(
            ToolCall(
                "c1",
                "convert_time",
                '{"source_timezone": "Nowhere/Atlantis", "time": "10:00", "target_timezone": "UTC"}',
            )
        )
    assert result.is_error
    assert result.error_kind is ToolErrorKind.EXECUTION_ERROR
    assert text_of(result.content) == EXECUTION_ERROR_MESSAGE
    assert result.detail is not None
    assert "MCPToolError" in result.detail
    assert "Nowhere/Atlantis" in result.detail


async def test_the_server_is_unusable_outside_its_block() -> None:
    server = _time_server()
    with pytest.raises(RuntimeError, match="not open"):
        await server.list_tools()
    async with server:
        tools = await server.list_tools()
    outcome = await ToolInvoker(tools).invoke(ToolCall("c1", "get_current_time", '{"timezone": "UTC"}'))
    assert outcome.error_kind is ToolErrorKind.EXECUTION_ERROR


# ------------------------------------------------------------------------------- streamable HTTP


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_mcp_url() -> Iterator[str]:
    """A real MCP server (the ``mcp`` package's ``MCPServer``) on loopback, over streamable HTTP."""
    app = MCPServer("inventory")

    @app.tool()
    def stock(item: str, warehouse: int = 1) -> str:
        """How many of an item a warehouse holds."""
        if item == "unobtainium":
            raise ServerToolError("no such item")
        return f"{item}@{warehouse}: 7"

    @app.tool(structured_output=False)
    def photo(item: str) -> list[object]:
        """A picture of an item, with its caption and an embedded resource."""
        return [
            f"photo of {item}",
            Image(data=PNG, format="png"),
            EmbeddedResource(
                type="resource", resource=TextResourceContents(uri="inv://bolts", text="spec sheet")
            ),
        ]

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app.streamable_http_app(), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the MCP test server did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(10)


async def test_streamable_http_tools_run_through_the_invoker_fail_closed(http_mcp_url: str) -> None:
    async with MCPServerStreamableHTTP(http_mcp_url) as server:
        tools = await server.list_tools()
        invoker = ToolInvoker(tools)
        ok, bad, failed = await invoker.invoke_all(
            [
                ToolCall("c1", "stock", '{"item": "bolts", "warehouse": 3}'),
                ToolCall("c2", "stock", '{"item": "bolts", "warehouse": "third"}'),
                ToolCall("c3", "stock", '{"item": "unobtainium"}'),
            ]
        )
    assert [t.name for t in tools] == ["stock", "photo"]
    assert tools[0].parameters["required"] == ["item"]
    assert text_of(ok.content) == "bolts@3: 7"
    assert bad.error_kind is ToolErrorKind.VALIDATION_ERROR
    assert "warehouse: 'third' is not of type 'integer'" in text_of(bad.content)
    assert text_of(failed.content) == EXECUTION_ERROR_MESSAGE
    assert failed.detail is not None
    assert "no such item" in failed.detail


async def test_mcp_tool_failures_are_traced_like_any_tool(http_mcp_url: str) -> None:
    sink = InMemoryTraceSink()
    llm = ScriptedLLM(
        [AssistantMessage(tool_calls=(ToolCall("c1", "stock", '{"item": "unobtainium"}'),)), "none left"]
    )
    async with MCPServerStreamableHTTP(http_mcp_url) as server:
        agent = Agent("shop", tools=await server.list_tools(), model=llm, tracer=Tracer(sinks=[sink]))
        await agent.arun("any unobtainium?")
    (end,) = sink.named("tool_end")
    assert end.data == {"error_kind": "execution_error"}
    assert end.error is not None
    assert "no such item" in end.error


async def test_images_and_other_mcp_content_become_content_parts(http_mcp_url: str) -> None:
    async with MCPServerStreamableHTTP(http_mcp_url, tool_prefix="inv") as server:
        result = await ToolInvoker(await server.list_tools()).invoke(
            ToolCall("c1", "inv_photo", '{"item": "bolts"}')
        )
    assert not result.is_error
    caption, image, resource = result.content
    assert caption == TextPart("photo of bolts")
    assert image == ImagePart(data=PNG, media_type="image/png")
    assert isinstance(resource, TextPart)
    assert '"uri":"inv://bolts"' in resource.text.replace(" ", "")
    assert "spec sheet" in resource.text
