"""The same hostile values through every door (issue 30, "a fuzz pass over every door"): each
protocol's run-opening request (:mod:`.doors`: kanawa SSE, OpenAI Responses and Chat, AG-UI, the AI
SDK, A2A 1.0 and 0.3, MCP) with ``NaN``, ``±Infinity``, ``1e999``, lone surrogates, a 5,000-digit
integer, JSON nested past the parser's depth, a body past the size limit, and values of the wrong
type — in its text, its ids, its metadata and as the whole body — against a real server on loopback,
in memory and with Redis; then unknown ids on every door that takes one.

For every request: never a 5xx; nothing of a traceback or a Python exception in the body; no
traceback in the log. A value no protocol can carry (every one of :data:`REFUSED`) is refused: a 4xx,
or a JSON-RPC error (A2A, MCP; an MCP tool's error result counts), and no run starts. After each
door's table the tenant holds nothing: no stream slot, no run going, no MCP session beyond those it
opened and closed. A fixed table, not a search: the same values through every door, in seconds.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kanawa.server.http.app import create_app
from tests.server.agents import server_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.doors import (
    BODY,
    DOORS,
    Counts,
    Door,
    mcp_headers,
    mcp_session,
    request_headers,
    tenant_counts,
)
from tests.server.protocols.log_watch import watched_logs
from tests.server.sse import AUTH_A

TENANT = "alpha"
REFUSED: dict[str, str] = {
    "nan": "NaN",
    "infinity": "Infinity",
    "-infinity": "-Infinity",
    "1e999": "1e999",
    "lone-high-surrogate": '"a\\ud800"',
    "lone-low-surrogate": '"\\udc00z"',
    "5000-digit-integer": "9" * 5000,
    "nested-past-depth": "[" * 3000 + "]" * 3000,
    "past-the-size-limit": '"' + "x" * 70_000 + '"',
}
"""Raw JSON no door may take (the test servers' body limit is 64 KiB)."""
WRONG_TYPES: dict[str, str] = {
    "object": '{"k": [1, {"z": null}]}',
    "list": '[1, "a"]',
    "number": "12",
    "true": "true",
    "null": "null",
    "empty-string": '""',
}
"""Raw JSON of the wrong type for most slots: refused or taken, but never a fault."""
EVERY_SLOT = ("nan", "1e999", "lone-high-surrogate", "object")
"""The values tried in every slot of a door (all of them go in its text)."""
AS_BODY = ("nan", "lone-high-surrogate", "nested-past-depth", "5000-digit-integer", "list", "number", "null")
"""The values tried as a whole body."""
LEAKS = (
    "Traceback",
    'File "',
    "surrogates not allowed",
    "codec can't",
    "Fail to serialize",
    "RecursionError",
    "maximum recursion depth",
    "Exceeds the limit",
    "ValueError",
    "TypeError",
    "KeyError",
    "AttributeError",
)
"""What a body must never hold: the marks of a Python exception's text."""


@pytest.fixture(scope="module", params=["embedded", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    settings = settings_for(request.param, redis, max_streams=8)
    server = LiveServer(create_app(agents=server_agents(), settings=settings)).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def http(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=httpx.Timeout(60)) as client:
        yield client


def cases(d: Door) -> list[tuple[str, str, str]]:
    """``(slot, value name, raw JSON)`` for door ``d``."""
    made = [("text", name, raw) for name, raw in {**REFUSED, **WRONG_TYPES}.items()]
    every = {name: REFUSED.get(name) or WRONG_TYPES[name] for name in EVERY_SLOT}
    made += [(slot, name, raw) for slot in d.slots if slot != "text" for name, raw in every.items()]
    made += [(BODY, name, REFUSED.get(name) or WRONG_TYPES[name]) for name in AS_BODY]
    return made


def newest_run(http: httpx.Client) -> str | None:
    runs = http.get("/v1/runs", headers=AUTH_A).json()["runs"]
    return runs[0]["id"] if runs else None


def refused(d: Door, status: int, body: bytes) -> bool:
    """Is this answer a refusal in ``d``'s own shape?"""
    if 400 <= status < 500:
        return True
    if not d.rpc or status != 200:
        return False
    for line in [body, *(line[5:] for line in body.splitlines() if line.startswith(b"data:"))]:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and (
            "error" in message or (d.mcp and (message.get("result") or {}).get("isError") is True)
        ):
            return True
    return False


def probe(http: httpx.Client, d: Door, session: str | None, slot: str, name: str, raw: str) -> list[str]:
    """Send one hostile request through ``d``; what went wrong (empty: nothing)."""
    before = newest_run(http)
    content = d.request("echo", slot, raw)
    with http.stream(
        "POST", d.path.format(agent="echo"), content=content, headers=request_headers(d, session)
    ) as answer:
        body = answer.read()
    where = f"{d.name} {slot}={name}: {answer.status_code}"
    problems = []
    if answer.status_code >= 500:
        problems.append(f"{where} (a server error) {body[:200]!r}")
    problems += [f"{where} body holds {leak!r}: {body[:300]!r}" for leak in LEAKS if leak.encode() in body]
    if name in REFUSED:
        if not refused(d, answer.status_code, body):
            problems.append(f"{where} was not refused: {body[:200]!r}")
        if newest_run(http) != before:
            problems.append(f"{where} started a run")
    return problems


def settled(live: LiveServer, expected: Counts) -> Counts:
    """The tenant's counts once they reach ``expected`` (runs that were taken end on their own), or
    as they are when they have not after a while."""
    counts = tenant_counts(live.app, TENANT)
    for _ in range(600):
        if counts == expected:
            break
        time.sleep(0.05)
        counts = tenant_counts(live.app, TENANT)
    return counts


@pytest.mark.parametrize("d", DOORS, ids=[d.name for d in DOORS])
def test_hostile_values_through_every_door(live: LiveServer, http: httpx.Client, d: Door) -> None:
    sessions_before = tenant_counts(live.app, TENANT).mcp_sessions
    session = mcp_session(http) if d.mcp else None
    problems: list[str] = []
    with watched_logs() as logs:
        for slot, name, raw in cases(d):
            problems += probe(http, d, session, slot, name, raw)
    if session is not None:
        assert http.delete("/mcp", headers={**AUTH_A, **mcp_headers(session)}).status_code < 300
    problems += [f"{d.name}: a traceback in the log: {text}" for text in logs.tracebacks()]
    assert problems == [], "\n".join(problems)
    assert settled(live, Counts(0, 0, sessions_before)) == Counts(0, 0, sessions_before)


def unknown_id_requests(session: str) -> list[tuple[str, str, str, Any, dict[str, str]]]:
    """``(door, method, path, JSON body or None, extra headers)`` naming ids no one has. (An MCP
    session's ``GET`` with an unknown ``Last-Event-ID`` is answered as one without it, by design:
    ``tests/mcp_server``'s replay tests hold that.)"""
    hex32 = uuid.uuid4().hex
    a2a = lambda method, params: {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}  # noqa: E731
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}], "taskId": hex32}
    return [
        ("kanawa-sse", "GET", f"/v1/runs/{hex32}/events", None, {}),
        ("kanawa-sse", "GET", "/v1/runs/not-a-run/events", None, {}),
        ("kanawa-sse", "POST", f"/v1/runs/{hex32}/cancel", None, {}),
        ("kanawa-sse", "POST", f"/v1/runs/{hex32}/approvals", {"approved": ["x"]}, {}),
        ("openai-responses", "GET", f"/v1/responses/resp_{hex32}", None, {}),
        ("openai-responses", "POST", f"/v1/responses/resp_{hex32}/cancel", None, {}),
        (
            "openai-responses",
            "POST",
            "/v1/responses",
            {"model": "echo", "input": "hi", "stream": True, "previous_response_id": f"resp_{hex32}"},
            {},
        ),
        ("ag-ui", "GET", f"/ag-ui/echo/threads/{hex32}/runs/{hex32}", None, {}),
        (
            "ag-ui",
            "POST",
            "/ag-ui/echo",
            {
                "threadId": hex32,
                "runId": "r1",
                "messages": [{"id": "t1", "role": "tool", "toolCallId": "no-such-call", "content": "x"}],
            },
            {},
        ),
        ("ai-sdk", "GET", f"/ai-sdk/echo/{hex32}/stream", None, {}),
        ("a2a-1.0", "POST", "/a2a/echo", a2a("GetTask", {"id": hex32}), {}),
        ("a2a-1.0", "POST", "/a2a/echo", a2a("CancelTask", {"id": hex32}), {}),
        ("a2a-1.0", "POST", "/a2a/echo", a2a("SubscribeToTask", {"id": hex32}), {}),
        ("a2a-1.0", "POST", "/a2a/echo", a2a("SendStreamingMessage", {"message": message}), {}),
        ("a2a-1.0", "POST", "/a2a/echo", a2a("SendMessage", {"message": message}), {}),
        ("a2a-0.3", "POST", "/a2a/echo", a2a("tasks/get", {"id": hex32}), {}),
        ("a2a-0.3", "POST", "/a2a/echo", a2a("tasks/resubscribe", {"id": hex32}), {}),
        (
            "mcp",
            "POST",
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"input": "hi"}},
            },
            mcp_headers(hex32),
        ),
        ("mcp", "GET", "/mcp", None, {**mcp_headers(hex32), "Last-Event-ID": f"{hex32}_1"}),
        (
            "mcp",
            "POST",
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "nobody", "arguments": {}},
            },
            mcp_headers(session),
        ),
    ]


def test_unknown_ids_on_every_door_are_client_errors(live: LiveServer, http: httpx.Client) -> None:
    """An id no one has is the client's mistake on every door: a 4xx or the protocol's own error
    (the AI SDK's resume of no stream: its 204), nothing started, nothing held, nothing logged as a
    fault."""
    sessions_before = tenant_counts(live.app, TENANT).mcp_sessions
    session = mcp_session(http)
    problems: list[str] = []
    with watched_logs() as logs:
        for name, method, path, body, extra in unknown_id_requests(session):
            before = newest_run(http)
            headers = {**AUTH_A, "Content-Type": "application/json", **extra}
            content = None if body is None else json.dumps(body).encode()
            with http.stream(method, path, content=content, headers=headers) as answer:
                text = answer.read()
            where = f"{name} {method} {path}: {answer.status_code}"
            if answer.status_code >= 500:
                problems.append(f"{where} (a server error) {text[:200]!r}")
            problems += [f"{where} body holds {leak!r}" for leak in LEAKS if leak.encode() in text]
            door_of = next(d for d in DOORS if d.name == name)
            if answer.status_code != 204 and not refused(door_of, answer.status_code, text):
                problems.append(f"{where} was not refused: {text[:200]!r}")
            if newest_run(http) != before:
                problems.append(f"{where} started a run")
    assert http.delete("/mcp", headers={**AUTH_A, **mcp_headers(session)}).status_code < 300
    problems += [f"a traceback in the log: {text}" for text in logs.tracebacks()]
    assert problems == [], "\n".join(problems)
    assert settled(live, Counts(0, 0, sessions_before)) == Counts(0, 0, sessions_before)
