"""GPT-5.x labels assistant message items with ``phase`` (``commentary`` / ``final_answer``); OpenAI asks
clients to send it back unchanged. Checked over the wire, for ``chat()`` and ``stream()``."""

from __future__ import annotations

from typing import Any

import pytest

from kanawa import Agent, tool
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from tests.wire.server import WireServer, json_reply, sse_reply


def _message(text: str, phase: str, item_id: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "phase": phase,
        "content": content,
    }


FIRST_OUTPUT = [
    _message("Let me look that up. ", "commentary", "msg_1"),
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup", "arguments": "{}"},
]
SECOND_OUTPUT = [_message("It is 42.", "final_answer", "msg_2")]


def _body(output: list[dict[str, Any]], response_id: str) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "status": "completed",
        "model": "gpt-5.2",
        "output": output,
    }


@tool
def lookup() -> str:
    """Look the answer up."""
    return "42"


def _sent_assistant_items(wire_server: WireServer) -> list[dict[str, Any]]:
    return [i for i in wire_server.requests[1].json()["input"] if i.get("role") == "assistant"]


@pytest.mark.parametrize("streaming", [False, True], ids=["chat", "stream"])
async def test_the_phase_of_each_message_item_goes_back_unchanged(
    wire_server: WireServer, streaming: bool
) -> None:
    if streaming:
        wire_server.enqueue(
            sse_reply(
                [
                    (
                        "response.completed",
                        {"type": "response.completed", "response": _body(FIRST_OUTPUT, "r1")},
                    )
                ]
            ),
            sse_reply(
                [
                    (
                        "response.completed",
                        {"type": "response.completed", "response": _body(SECOND_OUTPUT, "r2")},
                    )
                ]
            ),
        )
    else:
        wire_server.enqueue(json_reply(_body(FIRST_OUTPUT, "r1")), json_reply(_body(SECOND_OUTPUT, "r2")))
    async with OpenAIResponsesAdapter("gpt-5.2", api_key="sk-test-1", base_url=wire_server.base_url) as llm:
        result = await Agent("a", "x", tools=[lookup], model=llm).arun("q", stream=streaming)
    assert result.output == "It is 42."
    assert _sent_assistant_items(wire_server) == [
        {"role": "assistant", "content": "Let me look that up. ", "phase": "commentary"}
    ]
    first = result.messages[2]
    assert first.provider_details == {  # type: ignore[union-attr]
        "openai_message_items": [{"text": "Let me look that up. ", "phase": "commentary"}]
    }


async def test_a_response_without_phase_sends_none(wire_server: WireServer) -> None:
    plain = [dict(FIRST_OUTPUT[0]), FIRST_OUTPUT[1]]
    del plain[0]["phase"]
    wire_server.enqueue(json_reply(_body(plain, "r1")), json_reply(_body(SECOND_OUTPUT, "r2")))
    async with OpenAIResponsesAdapter("gpt-5", api_key="sk-test-1", base_url=wire_server.base_url) as llm:
        await Agent("a", "x", tools=[lookup], model=llm).arun("q")
    assert _sent_assistant_items(wire_server) == [{"role": "assistant", "content": "Let me look that up. "}]
