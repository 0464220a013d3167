"""The service's limits hold on the A2A endpoint as on every protocol: the tenant's budget (a run
over it is a failed task), the run cap and the stream caps (HTTP 429 with ``Retry-After``), the
request size limit (413) and the key's rate limit — for A2A 1.0's method names and 0.3's alike."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.conftest import LiveServer
from tests.server.protocols.a2a_agents import GATES
from tests.server.protocols.a2a_support import serve
from tests.server.sse import AUTH_A, AUTH_B


def _send(text: str, *, method: str = "SendMessage") -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}


@pytest.fixture(scope="module")
def budget() -> Iterator[LiveServer]:
    yield from serve("embedded", None, tenant_max_requests=2)


def test_a_run_over_the_tenants_budget_is_a_failed_task(budget: LiveServer) -> None:
    with httpx.Client(base_url=budget.url, timeout=60) as http:
        states = [
            http.post("/a2a/concierge", json=_send(f"q{n}"), headers=AUTH_A).json()["result"]["task"][
                "status"
            ]
            for n in range(3)
        ]
        assert [s["state"] for s in states] == ["TASK_STATE_COMPLETED"] * 2 + ["TASK_STATE_FAILED"]
        assert "request budget is spent" in states[2]["message"]["parts"][0]["text"]
        other = http.post("/a2a/concierge", json=_send("mine"), headers=AUTH_B).json()
        assert other["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def _send03(text: str, *, method: str = "message/send") -> dict[str, Any]:
    message = {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}


def test_a_0_3_run_over_the_tenants_budget_is_a_failed_task() -> None:
    gen = serve("embedded", None, tenant_max_requests=1)
    server = next(gen)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            tasks = [
                http.post("/a2a/concierge", json=_send03(f"q{n}"), headers=AUTH_A).json()["result"]
                for n in range(2)
            ]
        assert [t["status"]["state"] for t in tasks] == ["completed", "failed"]
        assert "request budget is spent" in tasks[1]["status"]["message"]["parts"][0]["text"]
    finally:
        next(gen, None)


@pytest.fixture(scope="module")
def capped() -> Iterator[LiveServer]:
    yield from serve("embedded", None, max_runs=1, max_streams=1, max_request_bytes=4096)


def test_the_run_and_stream_caps_and_the_size_limit_answer_before_any_run(capped: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    with httpx.Client(base_url=capped.url, timeout=60) as http:
        with http.stream(
            "POST", "/a2a/teller", json=_send(question, method="SendStreamingMessage"), headers=AUTH_A
        ) as held:
            assert held.status_code == 200
            lines = held.iter_lines()
            assert next(lines).startswith("data: ")
            streamed = http.post(
                "/a2a/teller", json=_send("x", method="SendStreamingMessage"), headers=AUTH_A
            )
            assert streamed.status_code == 429
            assert streamed.headers["Retry-After"]
            unary = http.post("/a2a/teller", json=_send("x"), headers=AUTH_A)
            assert unary.status_code == 429, "the tenant's one run is going"
            GATES[question].set()
            assert any("TASK_STATE_COMPLETED" in line for line in lines)
        big = http.post("/a2a/teller", json=_send("x" * 8000), headers=AUTH_A)
        assert big.status_code == 413


def test_the_caps_hold_for_the_0_3_methods(capped: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    with httpx.Client(base_url=capped.url, timeout=60) as http:
        with http.stream(
            "POST", "/a2a/teller", json=_send03(question, method="message/stream"), headers=AUTH_A
        ) as held:
            assert held.status_code == 200
            lines = held.iter_lines()
            assert next(lines).startswith("data: ")
            streamed = http.post("/a2a/teller", json=_send03("x", method="message/stream"), headers=AUTH_A)
            assert streamed.status_code == 429
            assert streamed.headers["Retry-After"]
            unary = http.post("/a2a/teller", json=_send03("x"), headers=AUTH_A)
            assert unary.status_code == 429, "the tenant's one run is going"
            assert unary.headers["Retry-After"]
            GATES[question].set()
            assert any('"final":true' in line for line in lines)
        big = http.post("/a2a/teller", json=_send03("x" * 8000), headers=AUTH_A)
        assert big.status_code == 413


def test_the_keys_rate_limit_holds() -> None:
    gen = serve("embedded", None, rate_limit=2)
    server = next(gen)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": uuid.uuid4().hex}}
            codes = [http.post("/a2a/echo", json=body, headers=AUTH_A).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
    finally:
        next(gen, None)
