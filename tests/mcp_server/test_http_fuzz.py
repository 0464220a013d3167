"""Nothing a client sends to ``/mcp`` makes a 5xx: hypothesis-generated JSON-RPC — well-formed and not,
single and batched, every MCP method and made-up ones, arguments of any shape — with and without a
session (a live one, an unknown one), with the protocol-version header of the handshake era, of
protocol 2026-07-28 or of nonsense, over ``POST``, ``GET`` and ``DELETE``; and the server still
answers a real client afterwards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kanawa.server.http.app import create_app
from tests.mcp_server.agents import agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A

pytestmark = pytest.mark.timeout(600)

ACCEPTS = ["application/json, text/event-stream", "application/json", "text/event-stream", "*/*", ""]
VERSIONS = [None, "2025-11-25", "2025-06-18", "2025-03-26", "2026-07-28", "1999-01-01", "x"]
METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "resources/list",
    "prompts/list",
    "logging/setLevel",
    "completion/complete",
    "server/discover",
]
TOOLS = ["storyteller", "judge", "counter", "broken", "nobody"]

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
params = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(TOOLS) | st.text(max_size=10),
        "arguments": st.fixed_dictionaries({}, optional={"input": values}) | values,
        "protocolVersion": st.sampled_from([v for v in VERSIONS if v]) | st.text(max_size=10),
        "capabilities": values,
        "clientInfo": st.fixed_dictionaries({}, optional={"name": values, "version": values}),
        "requestId": values,
        "progressToken": values,
        "_meta": values,
        "cursor": values,
    },
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | values,
        "id": st.integers() | st.text(max_size=8) | values,
        "method": st.sampled_from(METHODS) | st.text(max_size=12),
        "params": params | values,
        "result": values,
        "error": values,
    },
)
bodies = (
    messages.map(json.dumps)
    | st.lists(messages, max_size=3).map(json.dumps)
    | values.map(json.dumps)
    | st.binary(max_size=48).map(lambda raw: raw.decode("latin-1"))
)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    offered = {agent.name: agent for agent in agents if agent.name != "waiter"}  # every call ends
    live = LiveServer(create_app(agents=offered, settings=settings_for("embedded", None))).start()
    try:
        yield live
    finally:
        live.stop()


def _open_session(client: httpx.Client) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "f", "version": "1"},
        },
    }
    opened = client.post("/mcp", json=body, headers={**AUTH_A, "Accept": ACCEPTS[0]})
    assert opened.status_code == 200
    return opened.headers["mcp-session-id"]


def test_no_input_makes_a_5xx(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=httpx.Timeout(60, read=60)) as client:
        live_session = _open_session(client)

        @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
        @given(
            method=st.sampled_from(["POST", "POST", "POST", "GET", "DELETE"]),
            body=bodies,
            session=st.sampled_from([None, "live", "f" * 32]) | st.text(max_size=8),
            version=st.sampled_from(VERSIONS),
            accept=st.sampled_from(ACCEPTS),
            content_type=st.sampled_from(["application/json", "text/plain", ""]),
        )
        def probe(
            method: str, body: str, session: str | None, version: str | None, accept: str, content_type: str
        ) -> None:
            headers: dict[str, str] = {**AUTH_A, "Accept": accept, "Content-Type": content_type}
            if session is not None:
                sent = live_session if session == "live" else session
                if sent == sent.strip() and sent.isprintable() and sent.isascii():  # sendable
                    headers["mcp-session-id"] = sent
            if version is not None:
                headers["mcp-protocol-version"] = version
            content: Any = body.encode("utf-8", "surrogatepass") if method == "POST" else None
            # the status is all that is checked: a GET of a live session is an open-ended stream
            with client.stream(method, "/mcp", content=content, headers=headers) as answer:
                assert answer.status_code < 500, (method, body, headers, answer.read())

        probe()
        listed = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
            headers={
                **AUTH_A,
                "Accept": ACCEPTS[0],
                "mcp-session-id": _open_session(client),
                "mcp-protocol-version": "2025-11-25",
            },
        )
    assert listed.status_code == 200
    assert "storyteller" in listed.text
