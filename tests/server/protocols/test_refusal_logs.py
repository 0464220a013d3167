"""A refused request writes at most one log line and never a traceback; a server fault keeps its
traceback (issue 30, finding 12).

A battery of refusals against a served app (loopback): the run cap's 429 on A2A 1.0 and 0.3, unary
and streamed, and on the OpenAI, AG-UI and AI SDK doors; params that do not parse, an unknown
method, an unknown task, ``NaN`` in params, a message without text, broken JSON. The ``a2a-sdk``'s
dispatcher once logged most of them with ``logger.exception`` (a traceback each)."""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kanawa.server.http.protocols.a2a.errors import SDK_LOGGERS, a2a_refusal
from kanawa.server.http.protocols.refusal_log import RefusalLog
from tests.server.conftest import LiveServer
from tests.server.protocols.a2a_agents import GATES
from tests.server.protocols.a2a_support import serve
from tests.server.sse import AUTH_A


@pytest.fixture(scope="module")
def capped() -> Iterator[LiveServer]:
    yield from serve("embedded", None, max_runs=1)


def _a2a(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _message(text: str) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}


def _message03(text: str) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }


def _battery() -> list[tuple[str, str, dict[str, Any] | bytes]]:
    """(name, path, body) of each refused request: the tenant's one run is held while they go."""
    return [
        ("a2a 429 unary", "/a2a/concierge", _a2a("SendMessage", {"message": _message("x")})),
        ("a2a 429 stream", "/a2a/concierge", _a2a("SendStreamingMessage", {"message": _message("x")})),
        ("a2a 0.3 429 unary", "/a2a/concierge", _a2a("message/send", {"message": _message03("x")})),
        ("a2a 0.3 429 stream", "/a2a/concierge", _a2a("message/stream", {"message": _message03("x")})),
        ("a2a bad params", "/a2a/concierge", _a2a("SendMessage", {"message": 5})),
        ("a2a 0.3 bad params", "/a2a/concierge", _a2a("message/send", {"message": "no"})),
        ("a2a bad method", "/a2a/concierge", _a2a("NoSuchMethod", {})),
        ("a2a unknown task", "/a2a/concierge", _a2a("GetTask", {"id": "nope"})),
        ("a2a no text", "/a2a/concierge", _a2a("SendMessage", {"message": _message("")})),
        (
            "a2a NaN",
            "/a2a/concierge",
            b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","n":NaN}}',
        ),
        (
            "a2a NaN stream",
            "/a2a/concierge",
            b'{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m",'
            b'"role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"k":NaN}}}}',
        ),
        ("a2a broken JSON", "/a2a/concierge", b'{"jsonrpc": "2.0", "id": 1, "meth'),
        (
            "openai 429",
            "/v1/chat/completions",
            {"model": "concierge", "messages": [{"role": "user", "content": "x"}]},
        ),
        ("responses 429", "/v1/responses", {"model": "concierge", "input": "x"}),
        (
            "ag-ui 429",
            "/ag-ui/concierge",
            {
                "threadId": uuid.uuid4().hex,
                "runId": "r",
                "messages": [{"id": "m", "role": "user", "content": "x"}],
            },
        ),
        (
            "ai-sdk 429",
            "/ai-sdk/concierge",
            {
                "id": uuid.uuid4().hex,
                "messages": [{"id": "m", "role": "user", "parts": [{"type": "text", "text": "x"}]}],
            },
        ),
        ("kanawa 429", "/v1/runs", {"agent": "concierge", "input": "x"}),
    ]


def test_each_refusal_writes_at_most_one_line_and_no_traceback(
    capped: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    held = f"hold {uuid.uuid4().hex}"
    with httpx.Client(base_url=capped.url, timeout=60) as http:
        hold = _a2a("SendMessage", {"message": _message(held), "configuration": {"returnImmediately": True}})
        assert http.post("/a2a/teller", json=hold, headers=AUTH_A).status_code == 200
        try:
            for name, path, body in _battery():
                caplog.clear()
                with caplog.at_level(logging.INFO):
                    if isinstance(body, bytes):
                        headers = {**AUTH_A, "Content-Type": "application/json"}
                        answer = http.post(path, content=body, headers=headers)
                    else:
                        answer = http.post(path, json=body, headers=AUTH_A)
                assert answer.status_code < 500, (name, answer.status_code, answer.text[:200])
                if "429" in name:
                    assert answer.status_code == 429, (name, answer.status_code, answer.text[:200])
                assert "Traceback" not in answer.text, name
                server_lines = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]
                loud = [r for r in server_lines if r.levelno >= logging.WARNING]
                assert [r for r in server_lines if r.exc_info] == [], (name, [r.getMessage() for r in loud])
                assert len(loud) <= 1, (name, [r.getMessage() for r in loud])
        finally:
            GATES[held].set()


def _record(exc: BaseException) -> logging.LogRecord:
    try:
        raise exc
    except BaseException:
        info = sys.exc_info()
    return logging.LogRecord(SDK_LOGGERS[0], logging.ERROR, __file__, 1, "Unhandled exception", None, info)


def test_a_server_fault_keeps_its_traceback_and_a_refusal_loses_it() -> None:
    refusals = RefusalLog(is_refusal=a2a_refusal, dropped=("Failed to parse request params",))
    fault = _record(RuntimeError("the store is gone"))
    assert refusals.filter(fault)
    assert fault.exc_info is not None
    assert fault.levelno == logging.ERROR
    from fastapi import HTTPException

    refused = _record(HTTPException(429, "tenant has 1 runs going (limit 1)"))
    assert refused.exc_info is not None
    assert refusals.filter(refused)
    assert refused.exc_info is None
    assert refused.levelno == logging.WARNING
    assert refused.getMessage() == (
        "Unhandled exception (refused: HTTPException: 429: tenant has 1 runs going (limit 1))"
    )
