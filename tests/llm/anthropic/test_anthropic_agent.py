"""End to end: ``kanawa.Agent`` drives AnthropicAdapter over the wire through a two-tool conversation and
a structured final answer (seed 003 phases: tool use → final output with the schema, no tools)."""

from __future__ import annotations

from pydantic import BaseModel

from kanawa import Agent, tool
from kanawa.llm.anthropic.adapter import AnthropicAdapter
from tests.llm.anthropic.wire import (
    message_end,
    message_start,
    stream,
    text_block,
    thinking_block,
    tool_block,
)
from tests.wire.server import WireServer

SIGNATURE = "EqQBCkgIARABGAIiQE2e+/agent-sig=="
CALLS: list[tuple[str, str]] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: the city name
    """
    CALLS.append(("get_weather", city))
    return f"18°C and cloudy in {city}"


@tool
async def get_time(tz: str) -> str:
    """Current local time in a time zone.

    Args:
        tz: an IANA time zone name
    """
    CALLS.append(("get_time", tz))
    return "12:00"


class Report(BaseModel):
    weather: str
    time: str


async def test_agent_runs_two_tools_and_a_structured_answer_over_the_wire(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    CALLS.clear()
    wire_server.enqueue(
        stream(
            message_start(input_tokens=120),
            *thinking_block(0, ["Weather and time: two tools."], SIGNATURE),
            *tool_block(1, "toolu_W", "get_weather", '{"city": ', '"Paris"}'),
            *tool_block(2, "toolu_T", "get_time", '{"tz": "Europe/Paris"}'),
            *message_end("tool_use", output_tokens=60),
        ),
        stream(message_start(input_tokens=200), *text_block(0, "I have both."), *message_end("end_turn")),
        stream(
            message_start(input_tokens=230),
            *text_block(0, '{"weather": "18°C and cloudy in Paris", ', '"time": "12:00"}'),
            *message_end("end_turn"),
        ),
    )
    agent = Agent(
        "concierge",
        "Answer with the weather and time.",
        tools=[get_weather, get_time],
        model=adapter,
        output_type=Report,
    )
    result = await agent.arun("Weather and time in Paris?", stream=True)

    assert result.output == Report(weather="18°C and cloudy in Paris", time="12:00")
    assert sorted(CALLS) == [("get_time", "Europe/Paris"), ("get_weather", "Paris")]  # run concurrently
    assert result.usage.requests == 3
    assert result.usage.input_tokens == 120 + 200 + 230

    first, second, third = (r.json() for r in wire_server.requests)
    assert first["system"] == "Answer with the weather and time."
    assert {t["name"] for t in first["tools"]} == {"get_weather", "get_time"}
    assert "output_config" not in first
    # the thinking block (with its signature) is replayed first; both results travel in ONE user turn
    assistant, results = second["messages"][1], second["messages"][2]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "Weather and time: two tools.",
        "signature": SIGNATURE,
    }
    assert [b["type"] for b in assistant["content"][1:]] == ["tool_use", "tool_use"]
    assert results["role"] == "user"
    assert [(b["tool_use_id"], b["content"][0]["text"]) for b in results["content"]] == [
        ("toolu_W", "18°C and cloudy in Paris"),
        ("toolu_T", "12:00"),
    ]
    # final-output phase: the schema is sent, the tools are not
    assert "tools" not in third
    assert third["output_config"]["format"]["type"] == "json_schema"
    assert set(third["output_config"]["format"]["schema"]["properties"]) == {"weather", "time"}
