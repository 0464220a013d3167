"""Call a kanawa agent served by `kanawa serve` over MCP (streamable HTTP) with the official `mcp`
client: list the agents, then call one, printing its progress as the run streams and its answer.

    python examples/mcp_http_client.py http://127.0.0.1:8000/mcp <api-key> <agent> "<your message>"
"""

from __future__ import annotations

import asyncio
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, key: str, agent: str, question: str) -> None:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        print(f"  … {message}")  # a piece of the answer, "calling <tool>", "<tool> answered" …

    headers = {"Authorization": f"Bearer {key}"}  # the key decides the tenant the run belongs to
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        print("agents:", ", ".join(tool.name for tool in tools.tools))
        result = await session.call_tool(agent, {"input": question}, progress_callback=on_progress)
        answer = result.structured_content or "".join(getattr(block, "text", "") for block in result.content)
        print("error:" if result.is_error else "answer:", answer)
        print("run:", (result.meta or {}).get("kanawa/run_id"))  # GET /v1/runs/{id}, the timeline page


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
