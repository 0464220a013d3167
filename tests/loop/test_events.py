"""Seed 003 "イベントキューイング" and streaming: event order, concurrency, deltas, chat == stream."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from kanawa.llm.testing import ModelRequest, ScriptedLLM
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.events import ToolCallStep, ToolResultStep
from kanawa.loop.runner import AgentLoopRunner
from kanawa.loop.spec import RunSpec
from kanawa.tools.base import Tool
from kanawa.tools.decorator import tool
from kanawa.types import (
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStarted,
    ToolMessage,
)
from tests.loop.helpers import call, conversation, drain, kinds, tools_response


def meeting_tools(*, patience: float) -> tuple[Tool, Tool]:
    """Two tools that can only both succeed if they run at the same time: each announces itself and
    waits (up to ``patience`` seconds) for the other. Run one after another, the first times out."""
    a_here, b_here = asyncio.Event(), asyncio.Event()

    @tool
    async def alpha() -> str:
        """First half of the meeting."""
        a_here.set()
        await asyncio.wait_for(b_here.wait(), patience)
        return "alpha met beta"

    @tool
    async def beta() -> str:
        """Second half of the meeting; finishes before alpha does."""
        b_here.set()
        await asyncio.wait_for(a_here.wait(), patience)
        return "beta met alpha"

    return alpha, beta


async def test_parallel_tool_calls_run_concurrently_and_events_come_in_call_order() -> None:
    alpha, beta = meeting_tools(patience=5.0)
    c1, c2 = call("alpha", "{}", "c1"), call("beta", "{}", "c2")

    def sees_results_in_call_order(request: ModelRequest) -> None:
        results = [m for m in request.messages if isinstance(m, ToolMessage)]
        assert [(m.tool_call_id, m.is_error) for m in results] == [("c1", False), ("c2", False)]

    llm = ScriptedLLM([tools_response(c1, c2), "both met"], checks=[None, sees_results_in_call_order])
    events, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[alpha, beta]), conversation()))
    assert kinds(events) == ["tool_call", "tool_result", "tool_call", "tool_result", "final_response"]
    assert isinstance(events[0], ToolCallStep)
    assert events[0].call == c1
    assert isinstance(events[1], ToolResultStep)
    assert events[1].result.call_id == "c1"
    assert isinstance(events[2], ToolCallStep)
    assert events[2].call == c2
    assert isinstance(events[3], ToolResultStep)
    assert events[3].result.call_id == "c2"
    assert not events[1].result.is_error
    assert not events[3].result.is_error
    assert result.output == "both met"


async def test_parallel_tool_calls_false_runs_calls_one_after_another() -> None:
    alpha, beta = meeting_tools(patience=0.05)
    llm = ScriptedLLM([tools_response(call("alpha", "{}", "c1"), call("beta", "{}", "c2")), "done"])
    config = AgentConfiguration(parallel_tool_calls=False)
    events, _ = await drain(AgentLoopRunner(RunSpec(llm, tools=[alpha, beta], config=config), conversation()))
    first = events[1]
    assert isinstance(first, ToolResultStep)
    assert first.result.is_error  # alpha waited alone: beta had not started


@tool
def weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: the city
    """
    return f"sunny in {city}"


def _script() -> list[object]:
    from kanawa.types import AssistantMessage

    thinking = AssistantMessage(
        text="Checking.",
        reasoning=(ReasoningPart(text="need the weather"),),
        tool_calls=(call("weather", '{"city": "Kyoto, Japan"}', "w1"),),
    )
    return [thinking, "Draft: sunny.", '{"city": "Kyoto", "sky": "sunny"}']


class Report(BaseModel):
    city: str
    sky: str


async def test_streaming_yields_text_reasoning_and_tool_argument_deltas_before_the_steps() -> None:
    llm = ScriptedLLM(_script())  # type: ignore[arg-type]
    runner = AgentLoopRunner(RunSpec(llm, tools=[weather], output_type=Report, stream=True), conversation())
    events, result = await drain(runner)
    names = kinds(events)
    assert names[0] == "reasoning_delta"
    assert "tool_call_started" in names
    assert names.index("tool_call_args_delta") < names.index("tool_call")
    args = "".join(e.delta for e in events if isinstance(e, ToolCallArgsDelta))
    assert args == '{"city": "Kyoto, Japan"}'
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(s.id, s.name) for s in started] == [("w1", "weather")]
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "need the weather"
    assert any(isinstance(e, TextDelta) for e in events)
    assert result.output == Report(city="Kyoto", sky="sunny")
    assert all(request.streamed for request in llm.requests)
    # deltas are yielded but not recorded as steps
    assert kinds(result.steps) == ["tool_call", "tool_result", "thinking", "final_response"]


async def test_chat_and_stream_give_identical_results() -> None:
    chat_llm, stream_llm = ScriptedLLM(_script()), ScriptedLLM(_script())  # type: ignore[arg-type]
    chat_runner = AgentLoopRunner(
        RunSpec(chat_llm, tools=[weather], output_type=Report), conversation(), run_id="r"
    )
    stream_runner = AgentLoopRunner(
        RunSpec(stream_llm, tools=[weather], output_type=Report, stream=True), conversation(), run_id="r"
    )
    _, from_chat = await drain(chat_runner)
    _, from_stream = await drain(stream_runner)
    assert not any(r.streamed for r in chat_llm.requests)
    assert from_chat.output == from_stream.output
    assert from_chat.text == from_stream.text
    assert from_chat.usage == from_stream.usage
    assert list(from_chat.messages) == list(from_stream.messages)
    assert kinds(from_chat.steps) == kinds(from_stream.steps)
    assert from_chat.termination_reason == from_stream.termination_reason


async def test_without_streaming_no_deltas_are_yielded() -> None:
    llm = ScriptedLLM(_script())  # type: ignore[arg-type]
    events, _ = await drain(
        AgentLoopRunner(RunSpec(llm, tools=[weather], output_type=Report), conversation())
    )
    assert kinds(events) == ["tool_call", "tool_result", "thinking", "final_response"]
