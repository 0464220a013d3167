"""Seed 000 §6.1: tool arguments that are not a string are a parse error, not ``{}``. OpenAI-compatible
servers do send objects; the tool must not run and the model must see the parse error."""

from __future__ import annotations

from typing import Any

import pytest

from kanawa import Agent, tool
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.tools.messages import PARSE_ERROR_MESSAGE
from kanawa.types import ToolMessage
from tests.llm.openai_chat.wire import chunk, tool_delta
from tests.wire.server import WireServer, json_reply, sse_reply

NON_STRINGS: list[Any] = [{"a": 1}, [1, 2], 7, None, True]


def _completion(arguments: Any) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "c",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }


def _answer(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {"id": "c2", "model": "m", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def _add_tool(ran: list[int]):  # type: ignore[no-untyped-def]
    @tool
    def add(a: int = 0) -> int:
        """Add.

        Args:
            a: a number
        """
        ran.append(a)
        return a

    return add


@pytest.mark.parametrize("arguments", NON_STRINGS, ids=lambda v: type(v).__name__)
async def test_a_chat_server_sending_non_string_arguments_gets_a_parse_error_and_the_tool_never_runs(
    wire_server: WireServer, arguments: Any
) -> None:
    wire_server.enqueue(json_reply(_completion(arguments)), json_reply(_answer("sorry")))
    ran: list[int] = []
    async with OpenAIChatAdapter("m", api_key="sk-x-1", base_url=f"{wire_server.base_url}/v1") as llm:
        result = await Agent("a", "x", tools=[_add_tool(ran)], model=llm).arun("go")
    assert ran == []
    answer = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert answer.is_error
    assert answer.text.startswith(PARSE_ERROR_MESSAGE)
    assert f"not {'null' if arguments is None else type(arguments).__name__}" in answer.text
    sent = wire_server.requests[1].json()["messages"]
    assert sent[-1]["role"] == "tool"
    assert PARSE_ERROR_MESSAGE in sent[-1]["content"]


async def test_a_streamed_object_as_arguments_is_a_parse_error_too(wire_server: WireServer) -> None:
    fragment = tool_delta(0, call_id="call_1", name="add")
    fragment["tool_calls"][0]["function"]["arguments"] = {"a": 1}
    wire_server.enqueue(
        sse_reply([chunk(fragment), chunk(finish="tool_calls")], done=True),
        sse_reply([chunk({"content": "ok"}), chunk(finish="stop")], done=True),
    )
    ran: list[int] = []
    async with OpenAIChatAdapter("m", api_key="sk-x-1", base_url=f"{wire_server.base_url}/v1") as llm:
        agent = Agent("a", "x", tools=[_add_tool(ran)], model=llm)
        result = await agent.arun("go", stream=True)
    assert ran == []
    answer = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert answer.text.startswith(PARSE_ERROR_MESSAGE)


async def test_a_responses_function_call_with_object_arguments_is_a_parse_error(
    wire_server: WireServer,
) -> None:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": {"a": 1}}
    wire_server.enqueue(json_reply({"id": "r", "status": "completed", "output": [item]}))
    async with OpenAIResponsesAdapter("gpt-5", api_key="sk-x-1", base_url=wire_server.base_url) as llm:
        response = await llm.chat([])
    (call,) = response.message.tool_calls
    assert call.invalid_arguments == "tool arguments must be a JSON object string, not dict"
    assert call.arguments == '{"a":1}'
