"""``/mcp`` sessions and their streams as a hostile tenant tries them (issue 30, findings 2-4): a
``Last-Event-ID`` of another session replays nothing, the event log is bounded and freed, streams and
sessions count against the tenant's caps. Real ``kanawa serve`` apps on loopback (embedded and Redis
runs), the official ``mcp`` client for the victim's side, raw HTTP for the attacker's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import ClientMessageMetadata

from kanawa import Agent
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.server.http.app import create_app
from kanawa.types import AssistantMessage, LLMResponse, ResponseCompleted, StopReason, TextDelta
from tests.mcp_server.agents import STORY
from tests.mcp_server.test_http import served_agents
from tests.server.conftest import LiveServer, redis_url, settings_for
from tests.server.sse import AUTH_A, AUTH_B, KEY_A, KEY_B

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


BIG = 8 * 1024 * 1024
"""The ``big`` agent's answer, in characters: the size of the issue's stalled-reader answer."""


def _big_answer(request: ModelRequest) -> Script:
    text = "x" * BIG  # in one delta, as a fast provider's last burst would be
    return [TextDelta(text), ResponseCompleted(LLMResponse(AssistantMessage(text=text), StopReason.END_TURN))]


def capped_agents() -> dict[str, Any]:
    return {**served_agents(), "big": Agent("big", "Answers at length.", model=FunctionLLM(_big_answer))}


@pytest.fixture(scope="module", params=["embedded", "redis"])
def capped(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """Two streams and two MCP sessions a tenant, a 1 s write timeout, a 1 MiB event log."""
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    limits = {"max_streams": 2, "mcp_sessions": 2, "sse_write_timeout": 1.0, "mcp_event_bytes": 1024 * 1024}
    live = LiveServer(
        create_app(agents=capped_agents(), settings=settings_for(request.param, redis, **limits))
    )
    live.start()
    try:
        yield live
    finally:
        live.stop()


async def until(check: Callable[[], Awaitable[bool]], what: str, *, within: float = 30.0) -> None:
    """Wait for ``check`` to hold (the server works on its own pace: no fixed sleeps)."""
    deadline = asyncio.get_running_loop().time() + within
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"never: {what}"
        await asyncio.sleep(0.05)


def _headers(auth: dict[str, str], session_id: str, accept: str = ACCEPT) -> dict[str, str]:
    return {**auth, "Accept": accept, "mcp-session-id": session_id, "mcp-protocol-version": PROTOCOL}


async def _probe(http: httpx.AsyncClient, auth: dict[str, str]) -> int:
    """A ``GET /mcp`` of no session: 429 when the tenant's streams are all taken, else the SDK's 404."""
    response = await http.get("/mcp", headers=_headers(auth, "f" * 32, "text/event-stream"))
    return response.status_code


async def test_get_streams_count_against_the_tenants_stream_cap(capped: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=capped.url, timeout=30) as http:
        assert await _probe(http, AUTH_A) == 404
        async with session_of(capped.url, KEY_A), session_of(capped.url, KEY_A):
            # each official client holds a GET stream for the server's messages: two, the cap

            async def at_cap() -> bool:
                return await _probe(http, AUTH_A) == 429

            await until(at_cap, "the two clients' GET streams fill the tenant's cap")
            run = await http.post("/v1/runs", json={"agent": "judge", "input": "x"}, headers=AUTH_A)
            assert run.status_code == 429  # the same cap as every other stream of the tenant
            assert await _probe(http, AUTH_B) == 404  # another tenant's are its own

        async def given_back() -> bool:
            return await _probe(http, AUTH_A) == 404

        await until(given_back, "the clients' streams give their slots back")


async def _tools(http: httpx.AsyncClient, session_id: str) -> int:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    return (await http.post("/mcp", json=body, headers=_headers(AUTH_A, session_id))).status_code


async def test_sessions_are_capped_per_tenant_and_the_idlest_makes_room(capped: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=capped.url, timeout=30) as http:
        oldest = await open_session(http, AUTH_A)
        older = await open_session(http, AUTH_A)
        newest = await open_session(http, AUTH_A)  # at the cap: the session idle longest ends
        assert await _tools(http, oldest) == 404
        assert await _tools(http, older) == 200
        assert await _tools(http, newest) == 200
        streams = [
            http.stream("GET", "/mcp", headers=_headers(AUTH_A, session_id, "text/event-stream"))
            for session_id in (older, newest)
        ]
        async with streams[0] as first, streams[1] as second:  # both sessions busy
            assert (first.status_code, second.status_code) == (200, 200)
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            refused = await http.post("/mcp", json=body, headers={**AUTH_A, "Accept": ACCEPT})
            assert refused.status_code == 429
            assert refused.headers["retry-after"] == "1"
            assert "MCP sessions" in refused.json()["detail"]
            assert await open_session(http, AUTH_B)  # another tenant's cap is its own

        async def room() -> bool:
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            again = await http.post("/mcp", json=body, headers={**AUTH_A, "Accept": ACCEPT})
            return again.status_code != 429  # the SDK's answer to a bare initialize: past the cap

        await until(room, "a session whose stream ended makes room")


async def test_a_reader_that_stalls_is_cut_and_the_log_stays_in_its_bytes(capped: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=capped.url, timeout=30) as http:
        session_id = await open_session(http, AUTH_A)
        manager = capped.app.state.mcp.running
        assert manager is not None
        uvicorn_server = capped.server
        assert uvicorn_server is not None
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a reader that takes (almost) nothing
        sock.connect(("127.0.0.1", capped.port))
        call = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "big", "arguments": {"input": "x"}},
        }
        payload = json.dumps(call).encode()
        head = "".join(f"{name}: {value}\r\n" for name, value in _headers(AUTH_A, session_id).items())
        sock.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{head}"
            f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        try:
            mine = sock.getsockname()[1]

            def open_now() -> bool:  # the server still holds this client's connection
                return any(
                    protocol.transport.get_extra_info("peername")[1] == mine
                    for protocol in list(uvicorn_server.server_state.connections)
                    if protocol.transport is not None and not protocol.transport.is_closing()
                )

            async def connected() -> bool:
                return open_now()

            async def cut() -> bool:
                return not open_now()

            await until(connected, "the stalled client's connection is open")
            await until(cut, "the server cuts a client that takes nothing for the write timeout")
            assert manager.events.bytes <= 1024 * 1024  # the answer is larger than the log's budget
            received = bytearray()
            sock.settimeout(10)
            with contextlib.suppress(OSError):
                while chunk := sock.recv(65536):
                    received += chunk
            assert len(received) < BIG  # the connection ended before the answer went out
        finally:
            sock.close()
        small = {**call, "id": 10, "params": {"name": "judge", "arguments": {"input": "kept"}}}
        answered = await http.post("/mcp", json=small, headers=_headers(AUTH_A, session_id))
        assert '"score":7' in answered.text
        assert manager.events.bytes_of(session_id) > 0  # kept for a resume
        gone = await http.delete("/mcp", headers=_headers(AUTH_A, session_id))
        assert gone.status_code == 200
        assert manager.events.bytes_of(session_id) == 0  # a deleted session's events are freed
