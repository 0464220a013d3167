"""Fuzzed JSON-RPC at the A2A endpoint (hypothesis): whatever a client sends — any JSON, any method
name (A2A 1.0's and 0.3's), messages with odd parts (in either version's shape), ids of every type,
headers naming either version or none, bytes that are not JSON — the answer is never a 5xx,
and every answer with status 200 is JSON-RPC: a response with ``result`` or an ``error`` whose
``code`` is an integer and ``message`` a string (in a plain body, or in each event of a stream)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.conftest import LiveServer
from tests.server.protocols.a2a_support import serve
from tests.server.sse import AUTH_A

METHODS = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "CancelTask",
    "ListTasks",
    "SubscribeToTask",
    "GetExtendedAgentCard",
    "CreateTaskPushNotificationConfig",
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "agent/getAuthenticatedExtendedCard",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
ids = st.none() | st.booleans() | st.integers() | st.text(max_size=10) | st.floats(allow_nan=False)
parts = st.lists(
    st.one_of(
        st.fixed_dictionaries({"text": st.text(max_size=30)}),
        st.fixed_dictionaries({"kind": st.just("text"), "text": st.text(max_size=30)}),
        st.fixed_dictionaries({"kind": st.just("data"), "data": json_values}),
        st.fixed_dictionaries(
            {
                "kind": st.just("file"),
                "file": st.fixed_dictionaries(
                    {},
                    optional={
                        "uri": st.text(max_size=20),
                        "bytes": st.text(max_size=20),
                        "mimeType": json_values,
                    },
                ),
            }
        ),
        st.fixed_dictionaries({"data": json_values}),
        st.fixed_dictionaries({"url": st.text(max_size=20)}),
        json_values,
    ),
    max_size=3,
)
messages = st.fixed_dictionaries(
    {"parts": parts},
    optional={
        "messageId": st.text(max_size=10) | json_values,
        "role": st.sampled_from(["ROLE_USER", "ROLE_AGENT", "user", "agent", "ROLE_UNSPECIFIED"])
        | json_values,
        "kind": st.just("message") | json_values,
        "taskId": st.text(alphabet="0123456789abcdef", min_size=32, max_size=32) | st.text(max_size=40),
        "contextId": st.text(max_size=300),
    },
)
params = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"message": messages},
        optional={
            "configuration": st.fixed_dictionaries(
                {},
                optional={
                    "returnImmediately": json_values,
                    "blocking": json_values,
                    "historyLength": json_values,
                },
            )
        },
    ),
    st.fixed_dictionaries(
        {"id": st.text(max_size=40) | json_values},
        optional={"historyLength": json_values, "metadata": json_values},
    ),
)
requests03 = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.integers() | st.text(max_size=10),
        "method": st.sampled_from([m for m in METHODS if "/" in m]),
        "params": params,
    }
)
"""Well-formed A2A 0.3 envelopes: the fuzz reaches the SDK's 0.3 models, its converters and the handler."""
versions = st.sampled_from([None, "0.3", "1.0", "0.3.0", "2", "x"])
requests = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | json_values,
        "id": ids,
        "method": st.sampled_from(METHODS) | st.text(max_size=20),
        "params": params,
    },
)


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    yield from serve("embedded", None)


@pytest.fixture(scope="module")
def http(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=60) as client:
        yield client


def _is_jsonrpc(body: Any) -> bool:
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        return False
    if "error" in body:
        error = body["error"]
        return (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
        )
    return "result" in body


def _check(http: httpx.Client, content: bytes, version: str | None = None) -> None:
    headers = {**AUTH_A, "Content-Type": "application/json"}
    if version is not None:
        headers["A2A-Version"] = version
    with http.stream("POST", "/a2a/echo", content=content, headers=headers) as response:
        body = response.read()
    assert response.status_code < 500, body[:300]
    if response.status_code != 200:
        return
    if response.headers["content-type"].startswith("text/event-stream"):
        events = [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]
        assert events, body[:300]
        for event in events:
            assert _is_jsonrpc(json.loads(event)), event[:300]
    else:
        assert _is_jsonrpc(json.loads(body)), body[:300]


SETTINGS = settings(
    max_examples=150,  # each example is a request to a live server (some start a run): seconds, not minutes
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@given(request=requests, version=versions)
@SETTINGS
def test_no_json_rpc_request_gets_a_server_error(
    http: httpx.Client, request: dict[str, Any], version: str | None
) -> None:
    _check(http, json.dumps(request).encode(), version)


@given(request=requests03, version=st.sampled_from([None, "0.3"]))
@SETTINGS
def test_no_0_3_request_gets_a_server_error(
    http: httpx.Client, request: dict[str, Any], version: str | None
) -> None:
    _check(http, json.dumps(request).encode(), version)


@given(raw=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
@SETTINGS
def test_no_body_gets_a_server_error(http: httpx.Client, raw: bytes) -> None:
    _check(http, raw)


def test_a_body_nested_beyond_the_parsers_depth_is_a_parse_error(http: httpx.Client) -> None:
    _check(http, b"[" * 20_000 + b"]" * 20_000)
