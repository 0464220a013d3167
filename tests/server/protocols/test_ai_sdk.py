"""``POST /ai-sdk/{agent}`` and its reconnect, over HTTP: the UI message stream's events, a chat as
one run, tenants, the service's limits, and schemathesis over both operations — in memory and on
Redis. The official clients (``ai``'s transport, ``useChat`` in Chromium) are
``test_ai_sdk_clients.py``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from kanawa.server.http.app import create_app
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.ai_sdk_agents import FIRST_HALF, GATE, SECOND_HALF, ai_sdk_agents
from tests.server.sse import AUTH_A, AUTH_B

OPERATIONS = ("/ai-sdk/",)


@pytest.fixture(scope="module", params=["embedded", "redis"])
def served(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    server = LiveServer(
        create_app(agents=ai_sdk_agents(), settings=settings_for(request.param, redis))
    ).start()
    try:
        yield server
    finally:
        server.stop()


def user(text: str, id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


class Answer:
    """One UI message stream as a client reads it: its headers and its chunks."""

    def __init__(self, response: httpx.Response, body: bytes) -> None:
        self.status = response.status_code
        self.headers = response.headers
        lines = [
            line[6:] for line in body.decode().replace("\r\n", "\n").split("\n") if line.startswith("data: ")
        ]
        self.done = bool(lines) and lines[-1] == "[DONE]"
        self.chunks: list[dict[str, Any]] = [json.loads(line) for line in lines if line != "[DONE]"]
        self.body = body

    @property
    def types(self) -> list[str]:
        return [chunk["type"] for chunk in self.chunks]

    def text(self) -> str:
        return "".join(chunk["delta"] for chunk in self.chunks if chunk["type"] == "text-delta")


def chat(server: LiveServer, agent: str, body: dict[str, Any], headers: dict[str, str] = AUTH_A) -> Answer:
    with (
        httpx.Client(base_url=server.url, headers=headers, timeout=60) as client,
        client.stream("POST", f"/ai-sdk/{agent}", json=body) as response,
    ):
        return Answer(response, response.read())


def resume(server: LiveServer, agent: str, chat_id: str, headers: dict[str, str] = AUTH_A) -> Answer:
    with (
        httpx.Client(base_url=server.url, headers=headers, timeout=60) as client,
        client.stream("GET", f"/ai-sdk/{agent}/{chat_id}/stream") as response,
    ):
        return Answer(response, response.read())


def test_an_answer_is_the_ui_message_stream(served: LiveServer) -> None:
    answer = chat(
        served, "concierge", {"id": uuid.uuid4().hex, "messages": [user("hi")], "trigger": "submit-message"}
    )
    assert answer.status == 200
    assert answer.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.done
    run_id = answer.headers["x-run-id"]
    assert answer.chunks[0] == {"type": "start", "messageId": f"msg_{run_id}"}
    assert answer.types[1] == "start-step"
    assert answer.types[-2:] == ["finish-step", "finish"]
    assert answer.chunks[-1]["finishReason"] == "stop"
    assert {"reasoning-start", "reasoning-delta", "reasoning-end", "text-start", "text-end"} <= set(
        answer.types
    )
    assert answer.text() == "Hello! You said: hi"
    reasoning = "".join(c["delta"] for c in answer.chunks if c["type"] == "reasoning-delta")
    assert reasoning == "A greeting is due."


def test_the_next_message_goes_on_with_the_chats_run(served: LiveServer) -> None:
    chat_id = uuid.uuid4().hex
    first = chat(served, "concierge", {"id": chat_id, "messages": [user("one")]})
    said = {
        "id": first.chunks[0]["messageId"],
        "role": "assistant",
        "parts": [{"type": "text", "text": first.text()}],
    }
    second = chat(served, "concierge", {"id": chat_id, "messages": [user("one"), said, user("two", "u2")]})
    assert second.headers["x-run-id"] == first.headers["x-run-id"]
    assert second.chunks[0]["messageId"] != first.chunks[0]["messageId"]
    assert second.text() == "Hello! You said: two"
    again = chat(
        served, "concierge", {"id": chat_id, "messages": [user("one")], "trigger": "regenerate-message"}
    )
    assert again.headers["x-run-id"] != first.headers["x-run-id"]  # a regeneration is the chat's next run
    assert again.text() == "Hello! You said: one"


def test_a_client_tool_ends_the_answer_and_its_output_continues_the_run(served: LiveServer) -> None:
    chat_id = uuid.uuid4().hex
    tools = [
        {"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    ]
    asked = chat(served, "concierge", {"id": chat_id, "messages": [user("weather?")], "tools": tools})
    assert asked.chunks[-1] == {"type": "finish", "finishReason": "tool-calls"}
    inputs = {c["toolName"]: c for c in asked.chunks if c["type"] == "tool-input-available"}
    assert inputs["get_weather"]["input"] == {"city": "Kyoto"}
    outputs = {c["toolCallId"]: c["output"] for c in asked.chunks if c["type"] == "tool-output-available"}
    assert outputs == {"own_1": "tick 1"}  # the agent's own tool ran on the server; the client's did not
    parts = [
        {"type": "step-start"},
        {"type": "text", "text": "Let me check.", "state": "done"},
        {
            "type": "tool-tick",
            "toolCallId": "own_1",
            "state": "output-available",
            "input": {"n": 1},
            "output": "tick 1",
        },
        {
            "type": "tool-get_weather",
            "toolCallId": "cw_1",
            "state": "output-available",
            "input": {"city": "Kyoto"},
            "output": "rainy",
        },
    ]
    message = {"id": asked.chunks[0]["messageId"], "role": "assistant", "parts": parts}
    went_on = chat(
        served, "concierge", {"id": chat_id, "messages": [user("weather?"), message], "tools": tools}
    )
    assert went_on.headers["x-run-id"] == asked.headers["x-run-id"]
    assert went_on.chunks[0] == {"type": "start"}  # no new message: the client's last one goes on
    assert went_on.text() == "Kyoto is rainy"
    assert went_on.chunks[-1] == {"type": "finish", "finishReason": "stop"}


def test_a_chat_whose_answer_is_going_refuses_another_and_resumes(served: LiveServer) -> None:
    GATE.clear()
    chat_id = uuid.uuid4().hex
    with httpx.Client(base_url=served.url, headers=AUTH_A, timeout=60) as client:
        with client.stream("POST", "/ai-sdk/gated", json={"id": chat_id, "messages": [user("go")]}) as live:
            seen = b""
            lines = live.iter_lines()
            while '"type":"tool-input-start","toolCallId":"hold_1"' not in seen.decode():
                seen += next(lines).encode() + b"\n"
            busy = client.post("/ai-sdk/gated", json={"id": chat_id, "messages": [user("go")]})
            assert busy.status_code == 409
        # the first connection is gone mid-answer; the reconnect replays it from its start, then goes on
        with client.stream("GET", f"/ai-sdk/gated/{chat_id}/stream") as again:
            assert again.status_code == 200
            assert again.headers["x-vercel-ai-ui-message-stream"] == "v1"
            GATE.set()
            replay = Answer(again, again.read())
    assert replay.done
    assert replay.text() == FIRST_HALF + SECOND_HALF
    assert replay.chunks[0]["messageId"] == f"msg_{replay.headers['x-run-id']}"
    assert replay.types.count("start-step") == 2
    assert resume(served, "gated", chat_id).status == 204  # nothing in progress any more


def test_another_tenants_chat_is_exactly_an_unknown_chat(served: LiveServer) -> None:
    chat_id = uuid.uuid4().hex
    mine = chat(served, "concierge", {"id": chat_id, "messages": [user("secret")]})
    assert mine.status == 200
    theirs = chat(served, "concierge", {"id": chat_id, "messages": [user("mine")]}, AUTH_B)
    unknown = chat(served, "concierge", {"id": uuid.uuid4().hex, "messages": [user("mine")]}, AUTH_B)
    assert theirs.headers["x-run-id"] != mine.headers["x-run-id"]
    assert theirs.text() == "Hello! You said: mine"
    # the same bytes as a chat never seen, but for the run's own id
    same = [a.body.replace(a.headers["x-run-id"].encode(), b"RUN") for a in (theirs, unknown)]
    assert same[0] == same[1]
    for chat_of in (chat_id, uuid.uuid4().hex):
        gone = resume(served, "concierge", chat_of, AUTH_B)
        assert (gone.status, gone.body) == (204, b"")


def test_requests_the_service_refuses(served: LiveServer) -> None:
    body = {"id": "c", "messages": [user("hi")]}
    assert chat(served, "concierge", body, {}).status == 401
    assert chat(served, "nobody", body).status == 404
    assert resume(served, "nobody", "c").status == 404
    assert chat(served, "concierge", {"id": "c", "messages": []}).status == 422
    file = {
        "id": "c",
        "messages": [
            {"id": "u", "role": "user", "parts": [{"type": "file", "url": "x", "mediaType": "image/png"}]}
        ],
    }
    assert chat(served, "concierge", file).status == 400
    huge = {"id": "c", "messages": [user("x" * 70_000)]}
    assert chat(served, "concierge", huge).status == 413


def _while_one_answer_is_held(**overrides: Any) -> httpx.Response:
    """What a second chat gets while the first (``gated``) holds its run and its stream."""
    GATE.clear()
    app = create_app(agents=ai_sdk_agents(), settings=settings_for("embedded", None, **overrides))
    server = LiveServer(app).start()
    try:
        with (
            httpx.Client(base_url=server.url, headers=AUTH_A, timeout=60) as client,
            client.stream("POST", "/ai-sdk/gated", json={"id": "one", "messages": [user("go")]}) as held,
        ):
            lines = held.iter_lines()
            next(lines)
            second = client.post("/ai-sdk/concierge", json={"id": "two", "messages": [user("hi")]})
            GATE.set()
            for _ in lines:  # the held answer ends
                pass
            return second
    finally:
        server.stop()


def test_the_run_and_stream_caps_answer_429() -> None:
    runs = _while_one_answer_is_held(max_runs=1)
    assert runs.status_code == 429
    assert runs.headers["Retry-After"]
    assert "runs going" in runs.text
    streams = _while_one_answer_is_held(max_streams=1)
    assert streams.status_code == 429
    assert "streams open" in streams.text


def test_the_tenant_budget_holds_for_chats() -> None:
    server = LiveServer(
        create_app(agents=ai_sdk_agents(), settings=settings_for("embedded", None, tenant_max_requests=1))
    ).start()
    try:
        assert (
            chat(server, "concierge", {"id": "a", "messages": [user("one")]}).text() == "Hello! You said: one"
        )
        over = chat(server, "concierge", {"id": "b", "messages": [user("two")]})
        assert over.chunks[-1] == {"type": "finish", "finishReason": "error"}
        errors = [c["errorText"] for c in over.chunks if c["type"] == "error"]
        assert errors
        assert "BudgetExceeded" in errors[0]
    finally:
        server.stop()


def test_no_input_to_the_ai_sdk_operations_gets_a_server_error(served: LiveServer) -> None:
    schema = schemathesis.openapi.from_url(f"{served.url}/openapi.json")
    operations = [r.ok() for r in schema.get_all_operations() if r.ok().path.startswith(OPERATIONS)]
    assert len(operations) == 2
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=60,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        def no_5xx(case: schemathesis.Case) -> None:
            response = case.call(base_url=served.url, headers=AUTH_A, timeout=30)
            assert response.status_code < 500, f"{case.method} {case.path}: {response.text[:300]}"

        no_5xx()
