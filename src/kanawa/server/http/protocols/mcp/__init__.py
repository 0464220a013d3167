"""MCP server over streamable HTTP: the served agents as tools at ``/mcp`` (:mod:`.routes`; the
official ``mcp`` SDK's session manager, :mod:`.transport`; a call as a run, :mod:`.tools`; resumable
streams, :mod:`.events`). Only :mod:`.routes` is imported with the app: the SDK waits for the first
``/mcp`` request."""

__all__: list[str] = []
