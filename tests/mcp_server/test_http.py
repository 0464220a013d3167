"""``/mcp`` of ``kanawa serve`` driven by the official ``mcp`` client over streamable HTTP
(``mcp.client.streamable_http``), against the app served by uvicorn on loopback — in memory and with
Redis: the agents as tools, answers and structured answers, progress as the run streams, a cancel
reaching the run, each call a run of the caller's tenant, sessions that another tenant's key cannot
use, and the service's keys and limits in front of it all."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import jsonschema
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from kanawa.server.http.app import create_app
from kanawa.server.http.protocols.mcp.tools import RUN_ID_META
from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE
from tests.mcp_server.agents import SECRET, STORY, STORY_DESCRIPTION, agents
from tests.server.composite_agents import Relay
from tests.server.conftest import LiveServer, redis_url, settings_for
from tests.server.sse import AUTH_A, AUTH_B, KEY_A, KEY_B

pytestmark = pytest.mark.timeout(180)

__all__ = ["redis_url"]  # the Redis fixture, for the redis mode

PROTOCOL = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


def served_agents() -> dict[str, Any]:
    return {**{agent.name: agent for agent in agents}, "relay": Relay()}


@pytest.fixture(scope="module")
def marker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the ``waiter`` agent's tool says it started and was cancelled (the server runs in this
    process: the tool reads the variable when it runs)."""
    path = tmp_path_factory.mktemp("mcp") / "marker.txt"
    before = os.environ.get("KANAWA_TEST_MCP_MARKER")
    os.environ["KANAWA_TEST_MCP_MARKER"] = str(path)
    yield path
    if before is None:
        os.environ.pop("KANAWA_TEST_MCP_MARKER", None)
    else:
        os.environ["KANAWA_TEST_MCP_MARKER"] = before


@pytest.fixture(scope="module", params=["embedded", "redis"])
def server(request: pytest.FixtureRequest, marker: Path) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    settings = settings_for(request.param, redis, max_request_bytes=64 * 1024)
    live = LiveServer(create_app(agents=served_agents(), settings=settings)).start()
    try:
        yield live
    finally:
        live.stop()


@asynccontextmanager
async def session_of(url: str, key: str, *, modern: bool = False) -> AsyncIterator[ClientSession]:
    """An initialized session of the official client, authenticated with ``key``; ``modern``: on
    protocol 2026-07-28 (``server/discover``, no handshake, no session)."""
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        if modern:
            await session.discover()
        else:
            await session.initialize()
        yield session


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def _run_id(result: types.CallToolResult) -> str:
    assert result.meta is not None
    run_id = result.meta[RUN_ID_META]
    assert isinstance(run_id, str)
    return run_id


def _run(url: str, run_id: str, auth: dict[str, str]) -> httpx.Response:
    return httpx.get(f"{url}/v1/runs/{run_id}", headers=auth, timeout=30)


async def test_every_agent_is_a_tool_with_its_schemas(server: LiveServer) -> None:
    async with session_of(server.url, KEY_A) as session:
        listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == ["storyteller", "judge", "counter", "broken", "waiter", "relay"]
    assert tools["storyteller"].description == STORY_DESCRIPTION  # what it says of itself to callers
    assert tools["judge"].description == "The kanawa agent 'judge'."  # none: its name, not its instructions
    for listed_tool in tools.values():
        assert "joinery.\nLooks" not in (listed_tool.description or "")
        assert "KW-JOINT" not in listed_tool.model_dump_json()
    assert tools["storyteller"].input_schema["required"] == ["input"]
    assert tools["storyteller"].output_schema is None
    judge = tools["judge"].output_schema
    assert judge is not None
    assert set(judge["properties"]) == {"topic", "score"}
    counter = tools["counter"].output_schema
    assert counter is not None
    assert counter["properties"]["result"]["type"] == "array"
    assert tools["relay"].output_schema is None  # a composite: a text tool


async def test_a_call_streams_progress_and_is_a_run_of_the_callers_tenant(server: LiveServer) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with session_of(server.url, KEY_A) as session:
        result = await session.call_tool("storyteller", {"input": "tell me"}, progress_callback=on_progress)
    assert not result.is_error
    assert _text(result) == f"{STORY} (notes on joinery; you asked: tell me)"
    messages = [message for _, message in progress]
    assert messages[:2] == ["calling look_up", "look_up answered"]
    assert "".join(messages[2:]) == _text(result)  # the answer's deltas, in order, as they were stored
    values = [value for value, _ in progress]
    assert values == sorted(set(values))
    run_id = _run_id(result)
    mine = _run(server.url, run_id, AUTH_A)
    assert mine.status_code == 200
    assert mine.json()["status"] == "completed"
    assert mine.json()["agent"] == "storyteller"
    theirs = _run(server.url, run_id, AUTH_B)  # another tenant's run: exactly a missing one
    missing = _run(server.url, "0" * 32, AUTH_B)
    assert (
        (theirs.status_code, theirs.content)
        == (missing.status_code, missing.content)
        == (404, missing.content)
    )


@pytest.mark.parametrize("modern", [False, True], ids=["session", "2026-07-28"])
async def test_structured_answers_are_structured_content(server: LiveServer, modern: bool) -> None:
    async with session_of(server.url, KEY_B, modern=modern) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        judged = await session.call_tool("judge", {"input": "dovetails"})
        counted = await session.call_tool("counter", {"input": "go"})
        relayed = await session.call_tool("relay", {"input": "composite"})
    assert judged.structured_content == {"topic": "dovetails", "score": 7}
    jsonschema.validate(judged.structured_content, listed["judge"].output_schema or {})
    assert json.loads(_text(judged)) == {"topic": "dovetails", "score": 7}
    assert counted.structured_content == {"result": [1, 2, 3]}
    jsonschema.validate(counted.structured_content, listed["counter"].output_schema or {})
    assert _text(relayed).endswith(":COMPOSITE")  # the composite ran through the run manager
    assert relayed.structured_content is None


async def test_failures_are_error_results_and_bad_calls_never_run(server: LiveServer) -> None:
    async with session_of(server.url, KEY_A) as session:
        broken = await session.call_tool("broken", {"input": "anything"})
        refused = await session.call_tool("judge", {"input": 42})
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("nobody", {"input": "hi"})
        after = await session.call_tool("judge", {"input": "still up"})
    assert broken.is_error
    assert _text(broken).startswith(EXECUTION_ERROR_MESSAGE)
    assert SECRET not in broken.model_dump_json()
    assert _run(server.url, _run_id(broken), AUTH_A).json()["status"] == "failed"
    assert refused.is_error
    assert _text(refused).startswith("tool argument validation error:")
    assert refused.meta is None  # refused before a run was started
    assert unknown.value.code == types.INVALID_PARAMS
    assert after.structured_content == {"topic": "still up", "score": 7}


def _forget(path: Path) -> None:
    path.unlink(missing_ok=True)


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _runs(url: str, auth: dict[str, str]) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = httpx.get(f"{url}/v1/runs", headers=auth, timeout=30).json()["runs"]
    return runs


@pytest.mark.parametrize("modern", [False, True], ids=["session", "2026-07-28"])
async def test_cancelling_the_call_cancels_the_run(server: LiveServer, marker: Path, modern: bool) -> None:
    _forget(marker)
    async with session_of(server.url, KEY_A, modern=modern) as session:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await session.call_tool("waiter", {"input": "wait"})

            group.start_soon(call)
            deadline = time.monotonic() + 60
            while _read(marker) != "started":  # the run is in its tool, waiting
                assert time.monotonic() < deadline, "the waiter's tool never started"
                await anyio.sleep(0.05)
            group.cancel_scope.cancel()  # notifications/cancelled; on 2026-07-28 the stream closes
        deadline = time.monotonic() + 60
        while True:
            waiting = [run for run in _runs(server.url, AUTH_A) if run["agent"] == "waiter"]
            if waiting and waiting[0]["status"] == "cancelled" and _read(marker) == "cancelled":
                break
            assert time.monotonic() < deadline, f"the run was not cancelled: {waiting[:1]}"
            await anyio.sleep(0.05)
        still_up = await session.call_tool("judge", {"input": "after"})
    assert still_up.structured_content == {"topic": "after", "score": 7}


def _initialize(url: str, auth: dict[str, str]) -> str:
    """A session opened by hand (the raw exchange the official client makes): its id."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    opened = httpx.post(f"{url}/mcp", json=body, headers={**auth, "Accept": ACCEPT}, timeout=30)
    assert opened.status_code == 200
    session_id = opened.headers["mcp-session-id"]
    assert isinstance(session_id, str)
    return session_id


def _list_in(url: str, session_id: str, auth: dict[str, str]) -> httpx.Response:
    headers = {**auth, "Accept": ACCEPT, "mcp-session-id": session_id, "mcp-protocol-version": PROTOCOL}
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    return httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30)


def test_another_tenants_session_is_exactly_a_missing_one(server: LiveServer) -> None:
    session_id = _initialize(server.url, AUTH_A)
    theirs = _list_in(server.url, session_id, AUTH_B)
    missing = _list_in(server.url, "f" * 32, AUTH_B)
    assert theirs.status_code == missing.status_code == 404
    assert theirs.content == missing.content
    assert theirs.headers.get("content-type") == missing.headers.get("content-type")
    gone = httpx.delete(f"{server.url}/mcp", headers={**AUTH_B, "mcp-session-id": session_id}, timeout=30)
    assert gone.status_code == 404  # nor can it end the session
    assert _list_in(server.url, session_id, AUTH_A).status_code == 200  # the owner's still works


def test_requests_without_a_valid_key_are_refused(server: LiveServer) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-key"}, {"Authorization": f"Basic {KEY_A}"}):
        answer = httpx.post(
            f"{server.url}/mcp",
            content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            headers={**headers, "Accept": ACCEPT, "Content-Type": "application/json"},
            timeout=30,
        )
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == "Bearer"
    session_id = _initialize(server.url, AUTH_A)
    stolen = httpx.post(  # a session id alone is no credential
        f"{server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={"Accept": ACCEPT, "mcp-session-id": session_id},
        timeout=30,
    )
    assert stolen.status_code == 401


async def test_the_official_client_gets_no_session_with_a_wrong_key(server: LiveServer) -> None:
    with pytest.raises(BaseExceptionGroup) as caught:  # its initialize is answered with the 401
        async with session_of(server.url, "kw-wrong-key-0123456789"):
            pass
    assert caught.group_contains(MCPError, match="error response")


def test_the_body_limit_applies(server: LiveServer) -> None:
    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "x" * 100_000}}
    answer = httpx.post(f"{server.url}/mcp", json=big, headers={**AUTH_A, "Accept": ACCEPT}, timeout=30)
    assert answer.status_code == 413


@pytest.fixture(scope="module")
def limited_server() -> Iterator[LiveServer]:
    settings = settings_for("embedded", None, tenant_max_requests=2, max_runs=1)
    live = LiveServer(create_app(agents=served_agents(), settings=settings)).start()
    try:
        yield live
    finally:
        live.stop()


async def test_the_tenants_budget_holds_for_mcp_calls(limited_server: LiveServer) -> None:
    async with session_of(limited_server.url, KEY_A) as session:
        first = await session.call_tool("judge", {"input": "one"})
        second = await session.call_tool("judge", {"input": "two"})
        over = await session.call_tool("judge", {"input": "three"})
    assert first.structured_content == {"topic": "one", "score": 7}
    assert second.structured_content == {"topic": "two", "score": 7}
    assert over.is_error
    assert "BudgetExceeded" in _text(over)
    async with session_of(limited_server.url, KEY_B) as other:  # another tenant's budget is its own
        assert (await other.call_tool("judge", {"input": "mine"})).structured_content == {
            "topic": "mine",
            "score": 7,
        }


def test_the_documented_client_example_runs(server: LiveServer) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "mcp_http_client.py"
    ran = subprocess.run(
        [sys.executable, str(example), f"{server.url}/mcp", KEY_A, "storyteller", "tell me"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == "agents: storyteller, judge, counter, broken, waiter, relay"
    assert lines[1:3] == ["  … calling look_up", "  … look_up answered"]
    assert f"answer: {STORY} (notes on joinery; you asked: tell me)" in lines
    assert lines[-1].startswith("run: ")
    assert len(lines[-1]) == len("run: ") + 32


class CuttingProxy:
    """A TCP proxy in front of the server that drops a connection right after the SSE event holding
    ``cut_on`` — whatever the server sent after it on that connection is lost, as when a network
    drops it — and notes what clients send."""

    def __init__(self, upstream: int, cut_on: bytes) -> None:
        self.upstream = upstream
        self.cut_on: bytes | None = cut_on
        self.sent = bytearray()
        self.cuts = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.upstream)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, *, downstream: bool) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    if not downstream:
                        self.sent.extend(data)
                    at = data.find(self.cut_on) if downstream and self.cut_on is not None else -1
                    if at >= 0:  # up to the end of that event, then the connection is gone
                        end = data.find(b"\n\n", at)
                        dst.write(data if end < 0 else data[: end + 2])
                        await dst.drain()
                        self.cut_on = None
                        self.cuts += 1
                        break
                    dst.write(data)
                    await dst.drain()
            for writer in (client_w, server_w):
                writer.close()

        await asyncio.gather(
            pipe(client_r, server_w, downstream=False), pipe(server_r, client_w, downstream=True)
        )


async def test_a_stream_cut_mid_answer_resumes_without_a_loss(server: LiveServer) -> None:
    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    proxy = CuttingProxy(server.port, b'"look_up answered"')
    async with proxy, session_of(f"http://127.0.0.1:{proxy.port}", KEY_A) as session:
        result = await session.call_tool("storyteller", {"input": "cut"}, progress_callback=on_progress)
    assert proxy.cuts == 1
    # the client came back for what it missed: with Last-Event-ID, unless the server already sent
    # the rest on the session's GET stream (it does once it sees the call's stream gone)
    assert not result.is_error
    assert _text(result) == f"{STORY} (notes on joinery; you asked: cut)"
    assert progress[:2] == ["calling look_up", "look_up answered"]
    assert "".join(message or "" for message in progress[2:]) == _text(result)  # nothing lost, nothing twice
