"""``kanawa mcp myapp:agents``: the agents as an MCP server on stdin/stdout, for desktop MCP hosts.

The host starts the process and speaks JSON-RPC over its stdin and stdout, so nothing else may write
to stdout: logs go to stderr (the host shows or keeps them), so does what a tool prints, and the
process ends when the host closes stdin.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Mapping
from typing import Any

from mcp.server.stdio import stdio_server

from kanawa._logging import get_logger
from kanawa.agents.agent import Agent
from kanawa.mcp_server.server import build_server
from kanawa.mcp_server.toolset import AgentToolset
from kanawa.secrets import install_log_filter


async def serve_stdio(agents: Mapping[str, Agent[Any, Any]]) -> None:
    """Serve ``agents`` (name → agent) over stdio until the host closes the connection."""
    toolset = AgentToolset(agents)
    server = build_server(toolset)
    _log_to_stderr()
    async with stdio_server() as (read, write):
        # the transport writes the protocol through a descriptor of its own and points fd 1 at stderr;
        # ``print`` in a tool still fills ``sys.stdout``'s buffer, which would be flushed at exit onto
        # the protocol's stream once fd 1 is given back: while serving, ``sys.stdout`` is stderr
        with contextlib.redirect_stdout(sys.stderr):
            await server.run(read, write, server.create_initialization_options())


def _log_to_stderr() -> None:
    """Warnings and up from kanawa to stderr, masked (stdout belongs to the protocol)."""
    install_log_filter()
    root = get_logger("kanawa")
    if all(isinstance(handler, logging.NullHandler) for handler in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.WARNING)


__all__ = ["serve_stdio"]
