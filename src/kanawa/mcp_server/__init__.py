"""kanawa agents as an MCP server (Model Context Protocol): each agent is a tool a host can call.

* :class:`AgentToolset` — the protocol-neutral core: tools from agents, one call as one run with
  progress, errors as ``isError`` results (:mod:`.toolset`, :mod:`.schemas`, :mod:`.progress`);
* :func:`build_server` — the toolset as the official ``mcp`` SDK's low-level server, for any transport;
* :func:`serve_stdio` — that server over stdin/stdout (``kanawa mcp myapp:agents``).

Needs the ``mcp`` extra (``pip install 'kanawa[mcp]'``); nothing is imported until used. The MCP
*client* side (MCP servers' tools inside kanawa agents) is :mod:`kanawa.tools.mcp`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "AgentToolset": "kanawa.mcp_server.toolset",
    "UnknownAgentToolError": "kanawa.mcp_server.toolset",
    "build_server": "kanawa.mcp_server.server",
    "serve_stdio": "kanawa.mcp_server.stdio",
}

if TYPE_CHECKING:
    from kanawa.mcp_server.server import build_server
    from kanawa.mcp_server.stdio import serve_stdio
    from kanawa.mcp_server.toolset import AgentToolset, UnknownAgentToolError

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = ["AgentToolset", "UnknownAgentToolError", "build_server", "serve_stdio"]
