"""A chat through ``/ai-sdk`` whose run lives on Celery workers: the answer, the client's tool
round trip (the run waits, the outputs go on with it on a worker) and the next question on the same
run — the web process only relays."""

from __future__ import annotations

import uuid

import pytest

from tests.server.conftest import LiveServer
from tests.server.protocols.test_ai_sdk import chat, user

TOOLS = [
    {"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
]


@pytest.fixture(scope="module")
def mode() -> str:
    return "celery"


def test_a_chat_with_a_client_tool_runs_on_the_workers(live: LiveServer) -> None:
    chat_id = uuid.uuid4().hex
    asked = chat(live, "concierge", {"id": chat_id, "messages": [user("weather?")], "tools": TOOLS})
    assert asked.chunks[-1] == {"type": "finish", "finishReason": "tool-calls"}
    parts = [
        {
            "type": "tool-tick",
            "toolCallId": "own_1",
            "state": "output-available",
            "input": {"n": 1},
            "output": "tick 1",
        },
        {"type": "tool-get_weather", "toolCallId": "cw_1", "state": "output-available", "output": "snowy"},
    ]
    said = {"id": asked.chunks[0]["messageId"], "role": "assistant", "parts": parts}
    went_on = chat(live, "concierge", {"id": chat_id, "messages": [user("weather?"), said], "tools": TOOLS})
    assert went_on.headers["x-run-id"] == asked.headers["x-run-id"]
    assert went_on.text() == "Kyoto is snowy"
    answered = {"id": "a2", "role": "assistant", "parts": [{"type": "text", "text": went_on.text()}]}
    history = [user("weather?"), said, answered, user("thanks", "u2")]
    last = chat(live, "concierge", {"id": chat_id, "messages": history})
    assert last.headers["x-run-id"] == asked.headers["x-run-id"]
    assert last.chunks[0]["messageId"].startswith(f"msg_{asked.headers['x-run-id']}_")  # a new message
    assert last.chunks[-1] == {"type": "finish", "finishReason": "stop"}
