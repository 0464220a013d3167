"""Values A2A cannot carry (issue 30, finding 10): a lone surrogate in text, an id, a context id or
metadata (key or value), or ``NaN``/``Infinity``/``1e999`` in a data part or metadata, sent as raw
JSON-RPC to a real server (in memory and with Redis) on every method that takes them, 1.0's and
0.3's, unary and streamed. Each is answered ``-32602`` naming the field, with nothing of a Python
exception in the body, no traceback in the log, no run started and no stream slot kept. (The official
``a2a-sdk`` client cannot send them: its protobuf types refuse them before they leave; a hostile
client writes the JSON itself.) Before, these answered ``-32603`` with Python's exception text and a
logged traceback, or a plain-text 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.conftest import LiveServer
from tests.server.protocols.a2a_support import a2a_client, ask, serve, text_of
from tests.server.protocols.log_watch import watched_logs
from tests.server.sse import AUTH_A

LONE = "\ud800"
NAN = float("nan")
EXCEPTION_TEXT = ("Traceback", "codec can't", "surrogates not allowed", "Fail to serialize", "Error:")


def _message(**fields: Any) -> dict[str, Any]:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}], **fields}


def _message03(**fields: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
        **fields,
    }


SENDS = ["SendMessage", "SendStreamingMessage"]
STREAMED = {"SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"}
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    *(
        (f"{method}-{name}", method, params, field)
        for method in SENDS
        for name, params, field in [
            ("text", {"message": _message(parts=[{"text": "a" + LONE}])}, "params.message.parts[0].text"),
            ("message-id", {"message": _message(messageId=LONE)}, "params.message.messageId"),
            ("context-id", {"message": _message(contextId="c" + LONE)}, "params.message.contextId"),
            ("task-id", {"message": _message(taskId=LONE * 32)}, "params.message.taskId"),
            ("metadata-value", {"message": _message(metadata={"k": LONE})}, "params.message.metadata.k"),
            ("metadata-key", {"message": _message(metadata={LONE: 1})}, "params.message.metadata"),
            (
                "data-nan",
                {"message": _message(parts=[{"data": {"k": NAN}}])},
                "params.message.parts[0].data.k",
            ),
            (
                "data-inf",
                {"message": _message(parts=[{"data": [float("-inf")]}])},
                "params.message.parts[0].data[0]",
            ),
            ("metadata-nan", {"message": _message(metadata={"k": NAN})}, "params.message.metadata.k"),
            ("params-metadata-nan", {"message": _message(), "metadata": {"k": NAN}}, "params.metadata.k"),
        ]
    ),
    ("GetTask-id", "GetTask", {"id": LONE}, "params.id"),
    ("CancelTask-id", "CancelTask", {"id": "a" + LONE}, "params.id"),
    ("SubscribeToTask-id", "SubscribeToTask", {"id": LONE}, "params.id"),
    ("ListTasks-context", "ListTasks", {"contextId": LONE}, "params.contextId"),
    ("ListTasks-token", "ListTasks", {"pageToken": LONE}, "params.pageToken"),
    (
        "message/send-text",
        "message/send",
        {"message": _message03(parts=[{"kind": "text", "text": LONE}])},
        "params.message.parts[0].text",
    ),
    (
        "message/send-data",
        "message/send",
        {"message": _message03(parts=[{"kind": "data", "data": {"k": NAN}}])},
        "params.message.parts[0].data.k",
    ),
    (
        "message/stream-text",
        "message/stream",
        {"message": _message03(parts=[{"kind": "text", "text": LONE}])},
        "params.message.parts[0].text",
    ),
    ("tasks/get-id", "tasks/get", {"id": LONE}, "params.id"),
    ("tasks/resubscribe-id", "tasks/resubscribe", {"id": LONE}, "params.id"),
]


@pytest.fixture(scope="module", params=["embedded", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    yield from serve(request.param, redis, max_streams=4)


def _post(live: LiveServer, content: bytes) -> httpx.Response:
    return httpx.post(
        f"{live.url}/a2a/echo",
        content=content,
        headers={**AUTH_A, "Content-Type": "application/json"},
        timeout=30,
    )


def _runs(live: LiveServer) -> int:
    listed = httpx.get(f"{live.url}/v1/runs", headers=AUTH_A, timeout=30)
    assert listed.status_code == 200
    return len(listed.json()["runs"])


@pytest.mark.parametrize(
    ("method", "params", "field"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
def test_a_value_a2a_cannot_carry_is_invalid_params_naming_the_field(
    live: LiveServer, method: str, params: dict[str, Any], field: str
) -> None:
    before = _runs(live)
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).encode()
    with watched_logs() as logs:
        # a streamed method's request, more times than the tenant has stream slots (4): none is kept
        answers = [_post(live, body) for _ in range(5 if method in STREAMED else 1)]
    for answer in answers:
        assert answer.status_code == 200, answer.text[:300]
        assert answer.headers["content-type"].startswith("application/json")
        error = answer.json()["error"]
        assert answer.json()["id"] == 7
        assert error["code"] == -32602, error
        assert error["message"].startswith(field), error["message"]
        assert not any(text in answer.text for text in EXCEPTION_TEXT), answer.text[:500]
    assert logs.tracebacks() == []
    assert _runs(live) == before


def test_a_bad_value_in_the_request_id_is_invalid_request_with_a_null_id(live: LiveServer) -> None:
    for rpc_id in (LONE, NAN):
        body = json.dumps(
            {"jsonrpc": "2.0", "id": rpc_id, "method": "GetTask", "params": {"id": "x"}}
        ).encode()
        with watched_logs() as logs:
            answer = _post(live, body)
        assert answer.status_code == 200
        assert answer.json()["id"] is None
        assert answer.json()["error"]["code"] == -32600
        assert logs.tracebacks() == []


async def test_the_tenant_still_streams_afterwards(live: LiveServer) -> None:
    """Every refusal above gave back what it took: the tenant's streams (4) all open."""
    async with a2a_client(live.url, "echo") as client:
        events = [event async for event in client.send_message(ask("still here"))]
    assert "still here" in text_of(events)
