"""One rule for every door: the same bad value gets the same class of answer — a 4xx, in the
protocol's own error shape (issue 30, finding 13).

- a tool result answering no call, on a new AG-UI thread (and on the OpenAI doors): 400 — once it
  started a run whose conversation no provider takes;
- ``NaN``/``Infinity``/``1e999`` in A2A params or metadata, unary or streamed: ``-32602``, as the
  native routes answer them ``422``;
- an MCP request whose ``id`` is an object (or a list, ``true``, a fraction): ``400`` with JSON-RPC's
  ``-32600`` — once ``202`` with an empty body (the SDK read it as a notification); ``NaN`` in its
  params: ``-32602``. The official ``mcp`` client is served as before afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from kanawa.server.http.app import create_app
from tests.mcp_server.test_http import served_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.a2a_support import serve
from tests.server.sse import AUTH_A, KEY_A

JSON = {**AUTH_A, "Content-Type": "application/json"}


@pytest.fixture(scope="module", params=["embedded", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    yield from serve(request.param, redis)


@pytest.fixture(scope="module")
def mcp_server() -> Iterator[LiveServer]:
    server = LiveServer(create_app(agents=served_agents(), settings=settings_for("embedded", None))).start()
    try:
        yield server
    finally:
        server.stop()


def _runs(http: httpx.Client) -> set[str]:
    listed = http.get("/v1/runs", headers=AUTH_A)
    listed.raise_for_status()
    return {run["id"] for run in listed.json()["runs"]}


def test_a_tool_result_for_no_call_on_a_new_thread_is_400_on_every_door(live: LiveServer) -> None:
    with httpx.Client(base_url=live.url, timeout=60) as http:
        before = _runs(http)
        agui = http.post(
            "/ag-ui/concierge",
            json={
                "threadId": uuid.uuid4().hex,
                "runId": "r1",
                "messages": [
                    {"id": "u1", "role": "user", "content": "hi"},
                    {"id": "t1", "role": "tool", "toolCallId": "call_nobody_made", "content": "42"},
                ],
            },
            headers=AUTH_A,
        )
        assert agui.status_code == 400, agui.text[:300]
        assert "call_nobody_made" in agui.json()["detail"]
        chat = http.post(
            "/v1/chat/completions",
            json={
                "model": "concierge",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "tool", "tool_call_id": "call_nobody_made", "content": "42"},
                ],
            },
            headers=AUTH_A,
        )
        assert chat.status_code == 400, chat.text[:300]
        assert chat.json()["error"]["type"] == "invalid_request_error"
        responses = http.post(
            "/v1/responses",
            json={
                "model": "concierge",
                "input": [
                    {"role": "user", "content": "hi"},
                    {"type": "function_call_output", "call_id": "call_nobody_made", "output": "42"},
                ],
            },
            headers=AUTH_A,
        )
        assert responses.status_code == 400, responses.text[:300]
        assert _runs(http) == before, "no run was started"


def _bad(body: str, number: str) -> bytes:
    return body.replace('"BAD"', number).encode()


A2A_BODIES = {
    "SendMessage metadata": '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
    '{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"k":"BAD"}}}',
    "SendMessage message metadata": '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
    '{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"k":["BAD"]}}}}',
    "message/send (0.3)": '{"jsonrpc":"2.0","id":"a","method":"message/send","params":{"message":'
    '{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]},'
    '"metadata":{"k":"BAD"}}}',
    "data part": '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1",'
    '"role":"ROLE_USER","parts":[{"text":"hi"},{"data":{"x":"BAD"}}]}}}',
    "GetTask": '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","historyLength":"BAD"}}',
    "SendStreamingMessage": '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":'
    '{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"k":"BAD"}}}',
}


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("case", list(A2A_BODIES))
def test_a2a_refuses_numbers_json_cannot_carry_as_invalid_params(
    live: LiveServer, case: str, number: str
) -> None:
    with httpx.Client(base_url=live.url, timeout=60) as http:
        before = _runs(http)
        answer = http.post("/a2a/concierge", content=_bad(A2A_BODIES[case], number), headers=JSON)
        assert answer.status_code == 200, answer.text[:300]
        error = answer.json()["error"]
        assert error["code"] == -32602, error
        assert "finite" in error["message"]
        assert _runs(http) == before
        native = http.post(
            "/v1/runs", content=_bad('{"agent":"concierge","input":"BAD"}', number), headers=JSON
        )
        assert native.status_code == 422, "the native route's answer to the same value"


MCP_HEADERS = {**JSON, "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.mark.parametrize("rpc_id", ['{"a": 1}', "{}", "[1]", "true", "1.5", "null"])
async def test_mcp_refuses_an_id_that_is_not_a_string_or_an_integer(
    mcp_server: LiveServer, rpc_id: str
) -> None:
    async with httpx.AsyncClient(base_url=mcp_server.url, timeout=60) as http:
        opened = await http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        assert opened.status_code == 200
        session = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post("/mcp", json=ready, headers=session)).status_code == 202
        body = f'{{"jsonrpc":"2.0","id":{rpc_id},"method":"tools/list","params":{{}}}}'
        answer = await http.post("/mcp", content=body.encode(), headers=session)
        assert answer.status_code == 400, (answer.status_code, answer.text[:300])
        refused: dict[str, Any] = answer.json()
        assert refused["error"]["code"] == -32600
        assert refused["id"] is None
        nan = (
            '{"jsonrpc":"2.0","id":7,"method":"tools/call",'
            '"params":{"name":"storyteller","arguments":{"x":NaN}}}'
        )
        answer = await http.post("/mcp", content=nan.encode(), headers=session)
        assert answer.status_code == 400, (answer.status_code, answer.text[:300])
        assert answer.json()["error"]["code"] == -32602
        listed = await http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session
        )
        assert listed.status_code == 200, "a good request of the same session is answered"
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {KEY_A}"}) as client,
        streamable_http_client(f"{mcp_server.url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
    assert "storyteller" in {tool.name for tool in listed.tools}
