"""A bad A2A stream request is refused before anything starts, and never costs its tenant a stream
place or a run (issue 30, finding 1).

``message/stream`` / ``SendStreamingMessage`` with a number JSON cannot carry (``NaN``, ``Infinity``,
``1e999``, which Python's parser reads as floats) in its metadata once answered a plain-text 500 —
after it had started a run and taken one of the tenant's stream places, which it never gave back:
after ``max_streams`` such requests every request of the tenant got 429 until the process restarted.
Now each is a JSON-RPC ``-32602`` without exception text, and the tenant's counters stay at zero.
The official ``a2a-sdk`` client cannot send such a request (protobuf refuses to write the number), so
the bad requests are raw JSON-RPC; the follow-up that proves the tenant is not locked out is the SDK's.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kanawa.server.http.event_stream import OpenStreams
from tests.server.conftest import LiveServer
from tests.server.protocols.a2a_support import a2a_client, ask, serve, text_of
from tests.server.sse import AUTH_A

MAX_STREAMS = 2
BAD_NUMBERS = ("NaN", "Infinity", "-Infinity", "1e999")
_MARK = "__not_a_json_number__"


@pytest.fixture(scope="module", params=["embedded", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    yield from serve(request.param, redis, max_streams=MAX_STREAMS)


def _stream_request(method: str, where: str, number: str) -> bytes:
    """A streaming call whose metadata (the params' or the message's) holds ``number`` as written."""
    if method == "message/stream":
        message: dict[str, Any] = {
            "kind": "message",
            "messageId": uuid.uuid4().hex,
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}],
        }
    else:
        message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    params: dict[str, Any] = {"message": message}
    (params if where == "params" else message)["metadata"] = {"k": _MARK, "deep": [{"x": _MARK}]}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    return body.replace(f'"{_MARK}"', number).encode()


def _open_streams(server: LiveServer) -> int:
    """The stream places the server's tenants hold (admitted, not yet given back)."""
    streams: OpenStreams = server.app.state.streams
    return streams.held()


async def _streams_closed(server: LiveServer) -> int:
    """The open streams once the server has finished the last answer's (it gives the place back
    just after the client read the end): waits on the count, for at most 10 s."""
    for _ in range(200):
        if _open_streams(server) == 0:
            break
        await asyncio.sleep(0.05)
    return _open_streams(server)


async def _runs(http: httpx.AsyncClient) -> set[str]:
    """The ids of the tenant's runs."""
    listed = await http.get("/v1/runs", headers=AUTH_A)
    listed.raise_for_status()
    return {run["id"] for run in listed.json()["runs"]}


@pytest.mark.parametrize("method", ["SendStreamingMessage", "message/stream"])
async def test_bad_numbers_in_a_stream_requests_metadata_are_refused_and_cost_nothing(
    live: LiveServer, method: str
) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        runs_before = await _runs(http)
        for n in range(10):
            number = BAD_NUMBERS[n % len(BAD_NUMBERS)]
            where = "params" if n % 2 == 0 else "message"
            answer = await http.post(
                "/a2a/concierge",
                content=_stream_request(method, where, number),
                headers={**AUTH_A, "Content-Type": "application/json"},
            )
            assert answer.status_code == 200, (number, where, answer.text[:300])
            error = answer.json()["error"]
            assert error["code"] == -32602, (number, where, error)
            assert "Traceback" not in answer.text
            assert "ValueError" not in answer.text
            assert "metadata" in error["message"]
        assert _open_streams(live) == 0, "every refused request gave its stream place back"
        assert await _runs(http) == runs_before, "no run started"
    async with a2a_client(live.url, "concierge") as client:
        events = [event async for event in client.send_message(ask("still here"))]
    assert text_of(events) == "Hello! You said: still here"
    assert await _streams_closed(live) == 0
