"""MCP tools: the PyPI `mcp-server-time` server over stdio, offered to an agent as ordinary tools.

Runs offline: the model is scripted. Swap `model=` for a real one ("openai:gpt-5") to let it choose.
Needs `pip install 'kanawa[mcp]' mcp-server-time`.
"""

from __future__ import annotations

import asyncio
import sys

from kanawa import Agent
from kanawa.llm.testing import ScriptedLLM
from kanawa.loop.events import ToolResultStep
from kanawa.tools.mcp import MCPServerStdio
from kanawa.types import AssistantMessage, ToolCall, text_of


async def main() -> None:
    server = MCPServerStdio(sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"])
    model = ScriptedLLM(
        [
            AssistantMessage(
                tool_calls=(
                    ToolCall(
                        "c1",
                        "convert_time",
                        '{"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}',
                    ),
                )
            ),
            "Noon UTC is 21:00 in Tokyo.",
        ]
    )
    async with server:  # the server process lives exactly as long as this block
        tools = await server.list_tools()
        print("tools:", ", ".join(t.name for t in tools))
        agent = Agent("clock", "Answer time questions with the tools.", tools=tools, model=model)
        result = await agent.arun("What time is it in Tokyo at noon UTC?")
    for step in result.steps:
        if isinstance(step, ToolResultStep):
            print("tool result:", " ".join(text_of(step.result.content).split()))
    print("answer:", result.text)


if __name__ == "__main__":
    asyncio.run(main())
