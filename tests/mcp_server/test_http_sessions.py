"""``/mcp`` sessions and their streams as a hostile tenant tries them (issue 30, findings 2-4): a
``Last-Event-ID`` of another session replays nothing, the event log is bounded and freed, streams and
sessions count against the tenant's caps. Real ``kanawa serve`` apps on loopback (embedded and Redis
runs), the official ``mcp`` client for the victim's side, raw HTTP for the attacker's."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import ClientMessageMetadata

from kanawa.server.http.app import create_app
from tests.mcp_server.agents import STORY
from tests.mcp_server.test_http import served_agents
from tests.server.conftest import LiveServer, redis_url, settings_for
from tests.server.sse import AUTH_A, AUTH_B, KEY_B

__all__ = ["redis_url"]  # the Redis fixture, for the redis mode

PROTOCOL = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module", params=["embedded", "redis"])
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    live = LiveServer(create_app(agents=served_agents(), settings=settings_for(request.param, redis))).start()
    try:
        yield live
    finally:
        live.stop()


@asynccontextmanager
async def session_of(url: str, key: str) -> AsyncIterator[ClientSession]:
    """An initialized session of the official client, authenticated with ``key``."""
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call_with_event_ids(session: ClientSession, name: str, text: str) -> tuple[str, list[str]]:
    """Call tool ``name`` and note the ids of the events its answer came in (the resumption tokens
    the official client keeps): the answer's text and the ids."""
    ids: list[str] = []

    async def noted(token: str) -> None:
        ids.append(token)

    async def progress(value: float, total: float | None, message: str | None) -> None:
        pass  # asking for progress makes the answer a stream of several events

    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments={"input": text}))
    result = await session.send_request(
        request,
        types.CallToolResult,
        metadata=ClientMessageMetadata(on_resumption_token_update=noted),
        progress_callback=progress,
    )
    answer = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
    return answer, ids


async def open_session(http: httpx.AsyncClient, auth: dict[str, str]) -> str:
    """A session opened by hand, as a client that is not the official one would: its id."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    opened = await http.post("/mcp", json=body, headers={**auth, "Accept": ACCEPT})
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    headers = {**auth, "Accept": ACCEPT, "mcp-session-id": session_id, "mcp-protocol-version": PROTOCOL}
    done = await http.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202
    return str(session_id)


async def resumed(
    http: httpx.AsyncClient, auth: dict[str, str], session_id: str, last_event_id: str
) -> tuple[int, str, bytes]:
    """``GET /mcp`` with ``Last-Event-ID`` in ``session_id``: the status, content type and what the
    stream sent within a few seconds (a stream that replays and then waits for more is read that long)."""
    headers = {
        **auth,
        "Accept": "text/event-stream",
        "mcp-session-id": session_id,
        "mcp-protocol-version": PROTOCOL,
        "Last-Event-ID": last_event_id,
    }
    body = bytearray()
    async with http.stream("GET", "/mcp", headers=headers) as response:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                async for piece in response.aiter_bytes():
                    body += piece
        return response.status_code, response.headers.get("content-type", ""), bytes(body)


async def test_another_sessions_event_id_replays_nothing(server: LiveServer) -> None:
    async with session_of(server.url, KEY_B) as victim:
        answer, ids = await call_with_event_ids(victim, "storyteller", "private plans")
        assert STORY in answer
        assert len(ids) >= 3
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            for auth in (AUTH_A, AUTH_B):  # another tenant, and the same tenant in another session
                attacker = await open_session(http, auth)
                missing = await resumed(http, auth, attacker, "0" * 24)
                for event_id in ids[:-1]:  # each one that a resume would replay something after
                    theirs = await resumed(http, auth, attacker, event_id)
                    assert STORY not in theirs[2].decode()
                    assert b"private plans" not in theirs[2]
                    assert theirs == missing  # exactly as an id that was never given out
