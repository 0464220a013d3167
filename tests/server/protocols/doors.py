"""Every door of the server as the door-wide tests drive it: each protocol's request that opens a
run (kanawa SSE, OpenAI Responses and Chat, AG-UI, the AI SDK UI stream, A2A 1.0 and 0.3, MCP), with
a named place in its body where a test puts a value of its own — written as raw JSON text, so that
values Python's ``json`` will not write (``1e999``, a lone ``\\ud800``, a 5,000-digit integer, an
array nested past the parser's depth) reach the server as a hostile client sends them.

:func:`tenant_counts` reads what a tenant holds in the server (open streams, runs going, MCP
sessions) from the app itself: the tests serve it in their own process, and a count read there is
exact where probing from outside would only say "some" or "none".
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import httpx

from tests.server.sse import AUTH_A

MARK: Final = "\x00door-value\x00"
"""Where a test's raw JSON value goes in a body template."""
BODY: Final = "body"
"""The slot that is the whole body (a body of the wrong type)."""
MCP_VERSION: Final = "2025-11-25"
MCP_ACCEPT: Final = "application/json, text/event-stream"


def put(template: Any, path: tuple[str | int, ...]) -> Any:
    """``template`` with :data:`MARK` at ``path`` (dict keys made as needed)."""
    if not path:
        return MARK
    head, rest = path[0], path[1:]
    if isinstance(template, list):
        copy = list(template)
        copy[int(head)] = put(copy[int(head)], rest)
        return copy
    made = dict(template)
    made[head] = put(made.get(head, {}), rest)
    return made


def render(template: Any, path: tuple[str | int, ...], raw: str) -> bytes:
    """The body ``template`` with the raw JSON text ``raw`` at ``path``."""
    return json.dumps(put(template, path)).replace(json.dumps(MARK), raw).encode()


@dataclass(frozen=True)
class Door:
    """One protocol's run-opening request: where it goes, its body, and the places a value may go."""

    name: str
    path: str
    template: Callable[[str], Any]
    """The body asking ``agent`` (a fresh thread, chat or context each time)."""
    slots: dict[str, tuple[str | int, ...]]
    rpc: bool = False
    """Errors come in JSON-RPC's shape (A2A, MCP): a refusal may have status 200."""
    mcp: bool = False
    wrappers: dict[str, str] | None = None
    """Per slot, the JSON around the value (``%s``): a data part holding it, say."""

    def request(self, agent: str, slot: str | None = None, raw: str = "") -> bytes:
        template = self.template(agent)
        if slot is None:
            return json.dumps(template).encode()
        if slot == BODY:
            return raw.encode()
        wrapper = (self.wrappers or {}).get(slot, "%s")
        return render(template, self.slots[slot], wrapper.replace("%s", raw))


def _kanawa(agent: str) -> Any:
    return {"agent": agent, "input": "hello", "session_id": uuid.uuid4().hex}


def _responses(agent: str) -> Any:
    return {"model": agent, "input": "hello", "stream": True}


def _chat(agent: str) -> Any:
    return {"model": agent, "messages": [{"role": "user", "content": "hello"}], "stream": True}


def _agui(agent: str) -> Any:
    return {
        "threadId": uuid.uuid4().hex,
        "runId": uuid.uuid4().hex,
        "messages": [{"id": "u1", "role": "user", "content": "hello"}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def _ai_sdk(agent: str) -> Any:
    return {
        "id": uuid.uuid4().hex,
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello"}]}],
    }


def _a2a(agent: str) -> Any:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}


def _a2a03(agent: str) -> Any:
    message = {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": "hello"}],
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {"message": message}}


def _mcp(agent: str) -> Any:
    call = {"name": agent, "arguments": {"input": "hello"}}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}


DOORS: Final = (
    Door(
        "kanawa-sse",
        "/v1/runs",
        _kanawa,
        {"text": ("input",), "session": ("session_id",), "agent": ("agent",), "extra": ("metadata", "k")},
    ),
    Door(
        "openai-responses",
        "/v1/responses",
        _responses,
        {
            "text": ("input",),
            "model": ("model",),
            "metadata": ("metadata", "k"),
            "previous": ("previous_response_id",),
        },
    ),
    Door(
        "openai-chat",
        "/v1/chat/completions",
        _chat,
        {"text": ("messages", 0, "content"), "model": ("model",), "metadata": ("metadata", "k")},
    ),
    Door(
        "ag-ui",
        "/ag-ui/{agent}",
        _agui,
        {
            "text": ("messages", 0, "content"),
            "thread": ("threadId",),
            "state": ("state", "k"),
            "forwarded": ("forwardedProps", "k"),
        },
    ),
    Door(
        "ai-sdk",
        "/ai-sdk/{agent}",
        _ai_sdk,
        {
            "text": ("messages", 0, "parts", 0, "text"),
            "chat": ("id",),
            "message-id": ("messages", 0, "id"),
            "metadata": ("messages", 0, "metadata", "k"),
        },
    ),
    Door(
        "a2a-1.0",
        "/a2a/{agent}",
        _a2a,
        {
            "text": ("params", "message", "parts", 0, "text"),
            "context": ("params", "message", "contextId"),
            "metadata": ("params", "message", "metadata", "k"),
            "data": ("params", "message", "parts"),
        },
        rpc=True,
        wrappers={"data": '[{"data": {"k": %s}}]'},
    ),
    Door(
        "a2a-0.3",
        "/a2a/{agent}",
        _a2a03,
        {
            "text": ("params", "message", "parts", 0, "text"),
            "metadata": ("params", "metadata", "k"),
            "data": ("params", "message", "parts"),
        },
        rpc=True,
        wrappers={"data": '[{"kind": "data", "data": {"k": %s}}]'},
    ),
    Door(
        "mcp",
        "/mcp",
        _mcp,
        {
            "text": ("params", "arguments", "input"),
            "name": ("params", "name"),
            "id": ("id",),
            "meta": ("params", "_meta", "progressToken"),
        },
        rpc=True,
        mcp=True,
    ),
)
"""Every door (the A2A ``data`` slot is the message's parts: one data part, ``{"k": value}``)."""


def door(name: str) -> Door:
    return next(d for d in DOORS if d.name == name)


def mcp_session(http: httpx.Client, headers: dict[str, str] = AUTH_A) -> str:
    """A fresh MCP session of the key's tenant (initialised), its id."""
    opened = http.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": MCP_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "doors", "version": "1"},
            },
        },
        headers={**headers, "Accept": MCP_ACCEPT},
    )
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    done = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**headers, **mcp_headers(session)},
    )
    assert done.status_code == 202, done.text
    return session


def mcp_headers(session: str) -> dict[str, str]:
    return {"Accept": MCP_ACCEPT, "mcp-session-id": session, "mcp-protocol-version": MCP_VERSION}


def request_headers(d: Door, session: str | None, headers: dict[str, str] = AUTH_A) -> dict[str, str]:
    """The headers ``d``'s request goes with (an MCP call: its session's)."""
    made = {**headers, "Content-Type": "application/json"}
    if d.mcp:
        assert session is not None
        made.update(mcp_headers(session))
    return made


@dataclass(frozen=True)
class Counts:
    """What one tenant holds in a server."""

    streams: int
    runs: int
    mcp_sessions: int


def tenant_counts(app: Any, tenant: str) -> Counts:
    """``tenant``'s open streams, runs going and MCP sessions in ``app`` (module docstring). The
    attributes read are the server's own bookkeeping; should one move, this fails loudly rather than
    count nothing."""
    streams = app.state.streams._tenants.get(tenant, 0)
    runs = len(app.state.manager._by_tenant.get(tenant, ()))
    return Counts(streams, runs, mcp_session_count(app))


def mcp_session_count(app: Any) -> int:
    """The MCP sessions the app's session manager holds (``0`` before the first ``/mcp`` request)."""
    sessions = getattr(app.state, "mcp", None)
    manager = None if sessions is None else sessions._manager
    return 0 if manager is None else len(manager._server_instances)


__all__ = [
    "BODY",
    "DOORS",
    "MARK",
    "Counts",
    "Door",
    "door",
    "mcp_headers",
    "mcp_session",
    "render",
    "request_headers",
    "tenant_counts",
]
