"""What the A2A server tests share: the served app per run-store mode, and the official ``a2a-sdk``
client pointed at one of its agents (speaking A2A 1.0, or 0.3 as a client on 0.3 does)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03
from a2a.types.a2a_pb2 import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
)

from kanawa.server.http.app import create_app
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.a2a_agents import agents
from tests.server.sse import KEY_A


def serve(mode: str, redis_url: str | None, **overrides: object) -> Iterator[LiveServer]:
    """The app serving :func:`agents` in ``mode`` (``embedded`` or ``redis``), for a module."""
    server = LiveServer(
        create_app(agents=agents(), settings=settings_for(mode, redis_url, **overrides))
    ).start()
    try:
        yield server
    finally:
        server.stop()


@asynccontextmanager
async def a2a_client(
    base: str, agent: str, *, key: str = KEY_A, streaming: bool = True
) -> AsyncIterator[Client]:
    """The SDK's client for ``agent``, from its card, sending ``Authorization: Bearer <key>``."""
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(60.0)) as http:
        card = await A2ACardResolver(http, f"{base}/a2a/{agent}").get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        yield client


@asynccontextmanager
async def a2a03_client(
    base: str, agent: str, *, key: str = KEY_A, streaming: bool = True
) -> AsyncIterator[Client]:
    """The SDK's client speaking A2A 0.3 to ``agent``: it reads the card as a 0.3 client does (only
    the 0.3 fields: ``url``, ``protocolVersion``, ...), so the SDK picks its 0.3 JSON-RPC transport."""
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(60.0)) as http:
        answer = await http.get(f"{base}/a2a/{agent}/.well-known/agent-card.json")
        answer.raise_for_status()
        card = conversions.to_core_agent_card(v03.AgentCard.model_validate(answer.json()))
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        yield client


def ask(text: str, *, task_id: str = "", immediately: bool = False) -> SendMessageRequest:
    message = Message(role=Role.ROLE_USER, message_id=f"m-{abs(hash(text))}", parts=[Part(text=text)])
    if task_id:
        message.task_id = task_id
    return SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(return_immediately=immediately)
    )


def text_of(events: list[StreamResponse]) -> str:
    """The answer's text as a client builds it: a task snapshot's artifact replaces what it had, each
    artifact update appends (or starts) it."""
    text = ""
    for event in events:
        kind = event.WhichOneof("payload")
        if kind == "task":
            text = "".join(p.text for a in event.task.artifacts for p in a.parts)
        elif kind == "artifact_update":
            piece = "".join(p.text for p in event.artifact_update.artifact.parts)
            text = text + piece if event.artifact_update.append else piece
    return text
