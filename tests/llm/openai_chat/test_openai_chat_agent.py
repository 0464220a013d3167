"""End to end: ``kanawa.Agent`` drives OpenAIChatAdapter over the wire (an OpenAI-compatible local server)
through a two-tool conversation and a structured final answer (seed 003 phases)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from kanawa import Agent, tool
from kanawa.llm.openai.chat import OpenAIChatAdapter
from tests.llm.openai_chat.wire import chunk, completion, stream, tool_delta, usage_chunk
from tests.wire.server import Reply, WireServer

CALLS: list[tuple[str, str]] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: the city name
    """
    CALLS.append(("get_weather", city))
    return f"22°C and sunny in {city}"


@tool
async def get_time(tz: str) -> str:
    """Current local time in a time zone.

    Args:
        tz: an IANA time zone name
    """
    CALLS.append(("get_time", tz))
    return "09:30"


class Report(BaseModel):
    weather: str
    time: str


ANSWER = {"weather": "22°C and sunny in Rome", "time": "09:30"}


def streamed_script() -> list[Reply]:
    return [
        stream(
            chunk({"role": "assistant", "content": ""}),
            chunk(tool_delta(0, call_id="call_w", name="get_weather", arguments="")),
            chunk(tool_delta(0, arguments='{"city": "Rome"}')),
            chunk(tool_delta(1, call_id="call_t", name="get_time", arguments='{"tz": ')),
            chunk(tool_delta(1, arguments='"Europe/Rome"}')),
            chunk(finish="tool_calls"),
            usage_chunk(100, 30),
        ),
        stream(chunk({"content": "Got both."}, finish="stop"), usage_chunk(150, 5)),
        stream(chunk({"content": json.dumps(ANSWER)}, finish="stop"), usage_chunk(170, 20)),
    ]


def whole_script() -> list[Reply]:
    calls = [
        {
            "id": "call_w",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        },
        {
            "id": "call_t",
            "type": "function",
            "function": {"name": "get_time", "arguments": '{"tz": "Europe/Rome"}'},
        },
    ]
    return [
        completion({"content": None, "tool_calls": calls}, finish="tool_calls"),
        completion({"content": "Got both."}),
        completion({"content": json.dumps(ANSWER)}),
    ]


@pytest.mark.parametrize("streaming", [True, False])
async def test_agent_runs_two_tools_and_a_structured_answer_over_the_wire(
    adapter: OpenAIChatAdapter, wire_server: WireServer, streaming: bool
) -> None:
    CALLS.clear()
    wire_server.enqueue(*(streamed_script() if streaming else whole_script()))
    agent = Agent(
        "concierge",
        "Answer with the weather and time.",
        tools=[get_weather, get_time],
        model=adapter,
        output_type=Report,
    )
    result = await agent.arun("Weather and time in Rome?", stream=streaming)

    assert result.output == Report(**ANSWER)
    assert sorted(CALLS) == [("get_time", "Europe/Rome"), ("get_weather", "Rome")]  # run concurrently
    assert result.usage.requests == 3

    first, second, third = (r.json() for r in wire_server.requests)
    assert first["messages"][0] == {"role": "system", "content": "Answer with the weather and time."}
    assert {t["function"]["name"] for t in first["tools"]} == {"get_weather", "get_time"}
    assert "response_format" not in first
    assert second["messages"][2]["tool_calls"][1]["function"] == {
        "name": "get_time",
        "arguments": '{"tz": "Europe/Rome"}',
    }
    assert second["messages"][3:5] == [
        {"role": "tool", "tool_call_id": "call_w", "content": "22°C and sunny in Rome"},
        {"role": "tool", "tool_call_id": "call_t", "content": "09:30"},
    ]
    assert "tools" not in third
    assert third["response_format"]["type"] == "json_schema"
    assert set(third["response_format"]["json_schema"]["schema"]["properties"]) == {"weather", "time"}
    if streaming:
        assert result.usage.input_tokens == 100 + 150 + 170
        assert all(r.json()["stream_options"] == {"include_usage": True} for r in wire_server.requests)
