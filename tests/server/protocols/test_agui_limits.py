"""The service's limits hold on AG-UI as on kanawa's own protocol — the body limit, the key's rate
limit, the stream caps, the tenant's runs going and its budget — and schemathesis over the AG-UI
operations: nothing a client sends makes a 5xx."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from kanawa.server.http.app import create_app
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.agui_agents import agents
from tests.server.protocols.agui_sse import parse, run_input, user
from tests.server.sse import AUTH_A, AUTH_B

AGUI_PATHS = ("/ag-ui/",)


def _serve(**overrides: object) -> LiveServer:
    return LiveServer(
        create_app(agents=agents(), settings=settings_for("embedded", None, **overrides))
    ).start()


def _thread(n: int, question: str = "go") -> dict[str, object]:
    return run_input(f"limits-{n}", "r", user(question))


def test_a_body_over_the_limit_is_refused_before_it_is_read() -> None:
    server = _serve(max_request_bytes=2048)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            big = run_input("big", "r", user("x" * 4096))
            assert client.post("/ag-ui/helper", json=big, headers=AUTH_A).status_code == 413
            assert client.post("/ag-ui/helper", json=_thread(0), headers=AUTH_A).status_code == 200
    finally:
        server.stop()


def test_the_rate_limit_and_the_stream_caps_answer_429() -> None:
    server = _serve(rate_limit=3, max_streams=1)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            with client.stream("POST", "/ag-ui/slow", json=_thread(1, "5"), headers=AUTH_A) as held:
                pieces = held.iter_raw()  # kept: a dropped iterator closes the connection
                assert parse(next(pieces))[0][0].type == "RUN_STARTED"
                capped = client.post("/ag-ui/helper", json=_thread(2), headers=AUTH_A)
                assert capped.status_code == 429
                assert "streams open" in capped.json()["detail"]
            # the 3rd request of the minute (a resume of a thread there is none of: no stream opens)
            resume = {**AUTH_A, "Last-Event-ID": "0:0:0"}
            assert client.get("/ag-ui/helper/threads/none/runs/r", headers=resume).status_code == 404
            limited = client.post("/ag-ui/helper", json=_thread(4), headers=AUTH_A)  # 4th of the minute
            assert limited.status_code == 429
            assert limited.json()["detail"] == "rate limit exceeded for this API key"
            assert limited.headers["Retry-After"]
    finally:
        server.stop()


@pytest.fixture(scope="module")
def budget_server() -> Iterator[LiveServer]:
    server = _serve(tenant_max_requests=2)
    try:
        yield server
    finally:
        server.stop()


def test_the_tenant_budget_counts_ag_ui_runs(budget_server: LiveServer) -> None:
    with httpx.Client(base_url=budget_server.url, timeout=30) as client:
        for n in range(2):
            done = client.post("/ag-ui/teller", json=_thread(10 + n), headers=AUTH_A)
            assert parse(done.content)[0][-1].type == "RUN_FINISHED"
        over = client.post("/ag-ui/teller", json=_thread(12), headers=AUTH_A)
        last = parse(over.content)[0][-1]
        assert last.type == "RUN_ERROR"
        assert last.event["code"] == "BudgetExceeded"
        other = client.post("/ag-ui/teller", json=_thread(12), headers=AUTH_B)  # another tenant's budget
        assert parse(other.content)[0][-1].type == "RUN_FINISHED"


def test_the_tenants_runs_going_are_capped() -> None:
    server = _serve(max_runs=1, max_streams=10)
    try:
        with (
            httpx.Client(base_url=server.url, timeout=30) as client,
            client.stream("POST", "/ag-ui/slow", json=_thread(20, "5"), headers=AUTH_A) as held,
        ):
            pieces = held.iter_raw()  # kept: a dropped iterator closes the connection
            assert parse(next(pieces))[0][0].type == "RUN_STARTED"
            capped = client.post("/ag-ui/helper", json=_thread(21), headers=AUTH_A)
            assert capped.status_code == 429
            assert capped.headers["Retry-After"] == "1"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def spec_server() -> Iterator[LiveServer]:
    server = _serve()
    try:
        yield server
    finally:
        server.stop()


def test_no_input_to_the_ag_ui_operations_gets_a_server_error(spec_server: LiveServer) -> None:
    schema = schemathesis.openapi.from_url(f"{spec_server.url}/openapi.json")
    operations = [
        result.ok() for result in schema.get_all_operations() if result.ok().path.startswith(AGUI_PATHS)
    ]
    assert len(operations) == 2
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=80,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        def no_5xx(case: schemathesis.Case) -> None:
            response = case.call(base_url=spec_server.url, headers=AUTH_A, timeout=30)
            assert response.status_code < 500, f"{case.method} {case.path}: {response.text[:300]}"

        no_5xx()
