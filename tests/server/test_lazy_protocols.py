"""The A2A and MCP SDKs are imported by the first request that needs them, not with the app: a server
whose clients never speak those protocols does not pay their ~44 MiB. Proven on a fresh interpreter
(the suite's own has them imported already); then what the lazy start must still do — answer 503 when
the MCP SDK cannot start, and cancel the MCP calls still going when the app stops."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.server.http.app import create_app
from kanawa.server.http.protocols.mcp import transport as mcp_transport
from kanawa.server.store.memory import MemoryRunStore
from kanawa.types import AssistantMessage, ToolCall
from tests.server.conftest import settings_for
from tests.server.sse import AUTH_A

MODERN = "2026-07-28"
"""MCP's protocol without sessions: one POST per call, so one plain ASGI request is a whole call."""

FRESH_PROCESS = textwrap.dedent(
    """
    import asyncio, json, sys
    import httpx
    from kanawa import Agent
    from kanawa.llm.testing import FunctionLLM
    from kanawa.server import ServerSettings, create_app

    def loaded(name):
        return any(module == name or module.startswith(name + ".") for module in sys.modules)

    async def main():
        agent = Agent("echo", "Echo.", model=FunctionLLM(lambda request: "hi"))
        settings = ServerSettings(api_keys="k" * 24 + ":alpha", gc_freeze=False, gc_threshold=0)
        app = create_app(agents={"echo": agent}, settings=settings)
        seen = {}
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
                auth = {"Authorization": "Bearer " + "k" * 24}
                ran = await http.post("/v1/runs", json={"agent": "echo", "input": "x"}, headers=auth)
                seen["after_a_run"] = {"a2a": loaded("a2a"), "mcp": loaded("mcp"), "status": ran.status_code}
                card = await http.get("/a2a/echo/.well-known/agent-card.json")
                seen["after_a2a"] = {"a2a": loaded("a2a"), "mcp": loaded("mcp"), "status": card.status_code}
                mcp_body, mcp_headers = json.loads(sys.argv[1]), json.loads(sys.argv[2])
                listed = await http.post("/mcp", json=mcp_body, headers={**auth, **mcp_headers})
                seen["after_mcp"] = {"mcp": loaded("mcp"), "status": listed.status_code}
                seen["after_mcp"]["body"] = listed.text
        print(json.dumps(seen))

    asyncio.run(main())
    """
)


def _mcp_request(
    method: str, params: dict[str, Any], *, name: str | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "MCP-Method": method,
    }
    if name is not None:
        headers["MCP-Name"] = name
    return body, headers


def test_a_fresh_server_imports_the_a2a_and_mcp_sdks_only_when_asked() -> None:
    body, headers = _mcp_request("tools/list", {})
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, json.dumps(body), json.dumps(headers)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["after_a_run"] == {"a2a": False, "mcp": False, "status": 200}
    assert seen["after_a2a"] == {"a2a": True, "mcp": False, "status": 200}
    assert seen["after_mcp"]["mcp"] is True
    assert seen["after_mcp"]["status"] == 200, seen["after_mcp"]
    assert [tool["name"] for tool in json.loads(seen["after_mcp"]["body"])["result"]["tools"]] == ["echo"]


@asynccontextmanager
async def _serving(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield http


async def test_an_mcp_sdk_that_cannot_start_is_a_503_and_nothing_else_breaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(app: FastAPI) -> Any:
        raise RuntimeError("the SDK is broken")

    monkeypatch.setattr(mcp_transport, "session_manager", broken)
    agent = Agent("echo", "Echo.", model=FunctionLLM(lambda request: "hi"))
    app = create_app(agents={"echo": agent}, settings=settings_for("memory", None))
    async with _serving(app) as http:
        body, headers = _mcp_request("tools/list", {})
        for _ in range(2):  # the second request is not left waiting for a start that failed
            refused = await asyncio.wait_for(http.post("/mcp", json=body, headers={**AUTH_A, **headers}), 10)
            assert refused.status_code == 503
            assert refused.headers["retry-after"] == "1"
            assert "broken" not in refused.text
        ran = await http.post("/v1/runs", json={"agent": "echo", "input": "x"}, headers=AUTH_A)
        assert ran.status_code == 200
        assert '"type":"done"' in ran.text


async def test_stopping_the_app_cancels_the_mcp_calls_still_going() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    @tool
    async def hold(reason: str) -> str:
        """Hold until cancelled.

        Args:
            reason: why
        """
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    def holder(request: ModelRequest) -> Script:
        if not request.tool_results:
            return AssistantMessage(tool_calls=(ToolCall("call_1", "hold", '{"reason": "test"}'),))
        return "done"

    agent = Agent("holder", "Holds.", tools=[hold], model=FunctionLLM(holder))
    store = MemoryRunStore()  # the test's: the app's own would be closed with it
    app = create_app(agents={"holder": agent}, settings=settings_for("memory", None), store=store)
    body, headers = _mcp_request(
        "tools/call", {"name": "holder", "arguments": {"input": "go"}}, name="holder"
    )
    async with _serving(app) as http:
        call = asyncio.create_task(http.post("/mcp", json=body, headers={**AUTH_A, **headers}))
        await asyncio.wait_for(started.wait(), 30)
        (running,) = await store.list("alpha", limit=10)
        assert running.status == "running"
    # the lifespan has ended: the call's run was cancelled with it, not left running
    await asyncio.wait_for(cancelled.wait(), 10)
    await asyncio.wait_for(asyncio.gather(call, return_exceptions=True), 10)
    ended = await store.get("alpha", running.run_id)
    assert ended is not None
    assert ended.status == "cancelled"
