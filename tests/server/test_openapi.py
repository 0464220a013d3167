"""The published OpenAPI spec, exercised by schemathesis against the live server: no input a client
can send gets a 5xx (examples bounded: each one is a real HTTP request)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from kanawa.server.http.app import create_app
from kanawa.server.runs.demo_agents import demo_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A


@pytest.fixture(scope="module")
def spec_server() -> Iterator[LiveServer]:
    server = LiveServer(create_app(agents=demo_agents(), settings=settings_for("embedded", None))).start()
    try:
        yield server
    finally:
        server.stop()


def test_no_input_gets_a_server_error(spec_server: LiveServer) -> None:
    schema = schemathesis.openapi.from_url(f"{spec_server.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 7
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        def no_5xx(case: schemathesis.Case) -> None:
            response = case.call(base_url=spec_server.url, headers=AUTH_A, timeout=20)
            assert response.status_code < 500, f"{case.method} {case.path}: {response.text[:300]}"
            response = case.call(base_url=spec_server.url, timeout=20)  # and without a key
            assert response.status_code < 500, f"{case.method} {case.path}: {response.text[:300]}"
            if case.path.startswith("/v1/"):
                assert response.status_code in (401, 404, 405, 413, 422), response.text[:300]

        no_5xx()
