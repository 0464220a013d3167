"""The service's limits hold on the OpenAI protocols as on kanawa's own: the tenant budget, the
key's rate limit and the stream caps, answered in OpenAI's error shape; and schemathesis over the
new operations — nothing a client sends makes a 5xx."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator

import openai
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from openai import OpenAI

from kanawa.server.http.app import create_app
from tests.server.agents import server_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A, KEY_A, KEY_B

OPENAI_OPERATIONS = ("/v1/responses", "/v1/chat/completions", "/v1/models")


def _serve(**overrides: object) -> LiveServer:
    return LiveServer(
        create_app(agents=server_agents(), settings=settings_for("embedded", None, **overrides))
    ).start()


@pytest.fixture(scope="module")
def budget_server() -> Iterator[LiveServer]:
    server = _serve(tenant_max_requests=3)
    try:
        yield server
    finally:
        server.stop()


def test_the_tenant_budget_counts_runs_of_every_protocol(budget_server: LiveServer) -> None:
    with OpenAI(base_url=f"{budget_server.url}/v1", api_key=KEY_A, max_retries=0) as client:
        first = client.responses.create(model="concierge", input="one")
        assert first.status == "completed"
        chat = client.chat.completions.create(
            model="concierge", messages=[{"role": "user", "content": "two"}]
        )
        assert chat.choices[0].finish_reason == "stop"
        third = client.responses.create(model="concierge", input="three")
        assert third.status == "completed"
        # a spent budget is the tenant's quota: 429 insufficient_quota, which the SDK does not retry
        with pytest.raises(openai.RateLimitError) as over:
            client.responses.create(model="concierge", input="four")
        assert over.value.body["type"] == "insufficient_quota"  # type: ignore[index]
        assert over.value.body["code"] == "insufficient_quota"  # type: ignore[index]
        assert "BudgetExceeded" in over.value.body["message"]  # type: ignore[index]
        failed = client.responses.retrieve(f"resp_{over.value.response.headers['X-Run-Id']}")
        assert failed.status == "failed"
        assert failed.error is not None
        assert "BudgetExceeded" in failed.error.message
        with pytest.raises(openai.RateLimitError) as refused:
            client.chat.completions.create(model="concierge", messages=[{"role": "user", "content": "five"}])
        assert refused.value.body["code"] == "insufficient_quota"  # type: ignore[index]
        assert "BudgetExceeded" in refused.value.body["message"]  # type: ignore[index]
        with client.responses.stream(model="concierge", input="six") as stream:
            assert [event.type for event in stream][-1] == "response.failed"
    with OpenAI(base_url=f"{budget_server.url}/v1", api_key=KEY_B, max_retries=0) as other:
        assert other.responses.create(model="concierge", input="mine").status == "completed"


def test_the_rate_limit_and_the_stream_caps_answer_429() -> None:
    server = _serve(rate_limit=3, max_streams=1)
    try:
        with OpenAI(base_url=f"{server.url}/v1", api_key=KEY_A, max_retries=0) as client:
            with client.responses.create(model="slow", input="5", stream=True) as held:
                assert next(iter(held)).type == "response.created"
                with pytest.raises(openai.RateLimitError) as capped:
                    client.chat.completions.create(
                        model="concierge", messages=[{"role": "user", "content": "x"}]
                    )
                assert capped.value.body["code"] == "rate_limit_exceeded"  # type: ignore[index]
                assert "streams open" in capped.value.body["message"]  # type: ignore[index]
            client.models.list()  # the 3rd request of the minute (after the stream and the chat)
            with pytest.raises(openai.RateLimitError) as limited:  # 3 a minute: the 4th is refused
                client.models.list()
            assert limited.value.response.headers["Retry-After"]
            assert limited.value.body["type"] == "requests"  # type: ignore[index]
    finally:
        server.stop()


@pytest.fixture(scope="module")
def spec_server() -> Iterator[LiveServer]:
    server = _serve()
    try:
        yield server
    finally:
        server.stop()


def test_no_input_to_the_openai_operations_gets_a_server_error(spec_server: LiveServer) -> None:
    schema = schemathesis.openapi.from_url(f"{spec_server.url}/openapi.json")
    operations = [
        result.ok()
        for result in schema.get_all_operations()
        if result.ok().path.startswith(OPENAI_OPERATIONS)
    ]
    assert len(operations) == 6
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=60,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        def no_5xx(case: schemathesis.Case) -> None:
            response = case.call(base_url=spec_server.url, headers=AUTH_A, timeout=30)
            assert response.status_code < 500, f"{case.method} {case.path}: {response.text[:300]}"
            if response.status_code >= 400:
                error = json.loads(response.text)["error"]
                assert set(error) == {"message", "type", "param", "code"}, error

        no_5xx()


def test_shutting_down_ends_the_open_streams() -> None:
    """A stream of a run that would go on for minutes ends when the server is told to exit (the
    signal uvicorn handles, as Ctrl+C sends it), so the server stops instead of waiting for the run."""
    from sse_starlette.sse import AppStatus

    server = _serve()
    assert server.server is not None
    try:
        with OpenAI(base_url=f"{server.url}/v1", api_key=KEY_A, max_retries=0) as client:
            responses = client.responses.create(model="slow", input="120", stream=True)
            chat = client.chat.completions.create(
                model="slow", messages=[{"role": "user", "content": "120"}], stream=True
            )
            assert next(iter(responses)).type == "response.created"
            server.server.handle_exit(signal.SIGINT, None)
            assert server.thread is not None
            server.thread.join(timeout=60)
            assert not server.thread.is_alive(), "the server waited for the streams"
            assert [event.type for event in responses] == ["response.in_progress"]
            assert list(chat) == []
    finally:
        AppStatus.should_exit = False  # process-wide: the next servers of the session serve on
