"""Talk to a kanawa agent that `kanawa serve` serves over A2A, with the official `a2a-sdk` client.

Start a server (`kanawa serve` with a key), then give this the agent's A2A address and the key:

    KANAWA_API_KEYS=my-key:acme kanawa serve
    python examples/a2a_server_client.py http://127.0.0.1:8000/a2a/echo my-key

It streams one answer as it is written, then reads the task back by its id (the run's id).
"""

from __future__ import annotations

import asyncio
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState


async def main(url: str, key: str, question: str) -> None:
    # the key goes with every request: it decides whose tasks these are
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()  # <url>/.well-known/agent-card.json
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
        message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[Part(text=question)])
        task_id = ""
        async for event in client.send_message(SendMessageRequest(message=message)):
            if event.HasField("task"):
                task_id = event.task.id  # the task is the kanawa run: its id is the run id
            elif event.HasField("artifact_update"):
                for part in event.artifact_update.artifact.parts:
                    print(part.text, end="", flush=True)
        print()
        task = await client.get_task(GetTaskRequest(id=task_id))
        print(TaskState.Name(task.status.state))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "Hello!"))
