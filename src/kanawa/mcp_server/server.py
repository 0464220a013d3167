"""An :class:`~kanawa.mcp_server.toolset.AgentToolset` as an MCP server (the official ``mcp`` SDK's
low-level :class:`mcp.server.lowlevel.Server`), ready for any transport.

The server answers ``tools/list`` and ``tools/call`` and nothing else (no resources or prompts): the
tools are the agents. Progress is reported only when the host sent a ``progressToken`` (the SDK's
``report_progress`` is a no-op otherwise); the SDK cancels the handler when the host sends
``notifications/cancelled``, which cancels the run. ``kanawa mcp`` runs it over stdio
(:mod:`.stdio`); an HTTP mount passes the same server to the SDK's streamable-HTTP manager.
"""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.server import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from kanawa import __version__
from kanawa.mcp_server.toolset import AgentToolset, Report, UnknownAgentToolError

SERVER_NAME = "kanawa"

INSTRUCTIONS = (
    'Each tool is a kanawa agent: call it with {"input": "<your message>"} and it answers with its '
    "final answer (structured content when the agent has an output type)."
)


def progress_of(ctx: ServerRequestContext[Any]) -> Report:
    """How a tool call tells its host what it is doing: a ``notifications/progress`` per message,
    ``progress`` counting up (sent only when the host asked, with a ``progressToken``)."""
    progress = 0

    async def report(message: str) -> None:
        nonlocal progress
        progress += 1
        await ctx.session.report_progress(progress, None, message)

    return report


def build_server(toolset: AgentToolset, *, name: str = SERVER_NAME) -> Server[Any]:
    """A low-level MCP server whose tools are ``toolset``'s agents."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=toolset.list_tools())

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            return await toolset.call(params.name, params.arguments, report=progress_of(ctx))
        except UnknownAgentToolError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None

    return Server(
        name,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


__all__ = ["INSTRUCTIONS", "SERVER_NAME", "build_server", "progress_of"]
