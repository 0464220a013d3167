"""A remote A2A agent inside kanawa agents: a handoff target whose answer streams, and a tool.

Needs `pip install 'kanawa[a2a]'` and an A2A agent to talk to (any A2A server; the tests start
`tests/a2a/remote_server.py`). The kanawa side runs offline: its models are scripted, so the only
thing on the network is the remote agent.

    python examples/a2a_client.py http://127.0.0.1:9999/ [bearer-token]
"""

from __future__ import annotations

import asyncio
import sys

from kanawa import Agent
from kanawa.a2a import A2AAgent
from kanawa.llm.testing import ScriptedLLM
from kanawa.loop.events import NestedEvent, ToolResultStep
from kanawa.types import AssistantMessage, TextDelta, ToolCall, text_of


async def main(url: str, token: str | None) -> None:
    researcher = A2AAgent(
        url,
        name="researcher",
        description="Finds facts and answers in one paragraph.",
        bearer_token=token,  # sent as Authorization: Bearer …, masked in every error and log line
        timeout=60,
    )

    # 1. As a handoff target: the remote answer streams into this run as the researcher's deltas.
    handoff = AssistantMessage(
        tool_calls=(
            ToolCall("c1", "transfer_to_researcher", '{"message": "When was the Eiffel Tower built?"}'),
        )
    )
    triage = Agent(
        "triage",
        "Hand research questions to the researcher.",
        handoffs=[researcher],
        model=ScriptedLLM([handoff, "The researcher answered."]),
    )
    print("streamed: ", end="")
    async for event in triage.stream("When was the Eiffel Tower built?"):
        if isinstance(event, NestedEvent) and isinstance(event.event, TextDelta):
            print(event.event.text, end="", flush=True)
    print()

    # 2. As a tool: one `input` string in, the remote answer out (an error result if it fails).
    ask = AssistantMessage(tool_calls=(ToolCall("c1", "researcher", '{"input": "Who designed it?"}'),))
    boss = Agent(
        "boss", "Use the researcher.", tools=[researcher.as_tool()], model=ScriptedLLM([ask, "Noted."])
    )
    result = await boss.arun("Who designed the Eiffel Tower?")
    for step in result.steps:
        if isinstance(step, ToolResultStep):
            print("tool result:", text_of(step.result.content))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
