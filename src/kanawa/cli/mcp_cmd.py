"""``kanawa mcp``: serve agents as MCP tools over stdio (:mod:`kanawa.mcp_server`).

A desktop MCP host starts ``kanawa mcp myapp:agents`` itself and talks to it over stdin/stdout, so
the command prints nothing to stdout: a registry that cannot be loaded is one line on stderr and exit
code 2, before the protocol starts.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kanawa.cli.running import EXIT_OK, EXIT_SETUP
from kanawa.cli.serve_cmd import app_dir_on_path


async def serve_mcp(err: Console, *, agents: str | None) -> int:
    """Load the registry like ``kanawa serve`` does, then serve it over stdio until stdin closes."""
    from kanawa.mcp_server.stdio import serve_stdio
    from kanawa.server.runs.loaders import LoadError, load_agents

    app_dir_on_path()
    try:
        registry = load_agents(agents)
    except LoadError as exc:
        err.print(Text(f"kanawa mcp: {exc}"), soft_wrap=True)
        return EXIT_SETUP
    from kanawa.agents.agent import Agent

    composites = sorted(name for name, agent in registry.items() if not isinstance(agent, Agent))
    if composites:  # a composite servable (SmartAO's coordinator) has no tool schema of its own yet
        err.print(Text(f"kanawa mcp: serves Agent objects only; not an Agent: {', '.join(composites)}"))
        return EXIT_SETUP
    agents_only = {name: agent for name, agent in registry.items() if isinstance(agent, Agent)}
    try:
        await serve_stdio(agents_only)
    except ValueError as exc:  # two agents whose names make the same tool name
        err.print(Text(f"kanawa mcp: {exc}"), soft_wrap=True)
        return EXIT_SETUP
    return EXIT_OK


__all__ = ["serve_mcp"]
