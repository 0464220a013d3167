"""Seed 002 §3-1 "ハンドオフ": handoffs as ``transfer_to_<agent>`` tools, nested events carrying the
target's name, depth counted across nested handoffs (MAX=3 → ``HandoffDepthExceeded``),
``on_handoff_return()`` and ``handoff_start``/``handoff_end`` trace events."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from kanawa import Agent, RunContext, tool
from kanawa.agents.handoffs import Handoff, transfer_tool_name
from kanawa.llm.testing import FunctionLLM, ModelRequest, ScriptedLLM
from kanawa.loop.errors import HandoffDepthExceeded
from kanawa.loop.events import (
    FinalResponse,
    HandoffEnded,
    HandoffStarted,
    NestedEvent,
    ToolCallStep,
    ToolResultStep,
)
from kanawa.loop.result import RunResult
from kanawa.trace.events import Tracer
from kanawa.trace.memory import InMemoryTraceSink
from kanawa.types import AssistantMessage, SystemMessage, TextDelta, ToolCall, ToolMessage, UserMessage


def transfer(target: str, message: str = "", call_id: str = "h1") -> AssistantMessage:
    arguments = json.dumps({"message": message}) if message else "{}"
    return AssistantMessage(tool_calls=(ToolCall(call_id, transfer_tool_name(target), arguments),))


def specialist(name: str, answer: str, seen: list[ModelRequest] | None = None) -> Agent[str]:
    def respond(request: ModelRequest) -> str:
        if seen is not None:
            seen.append(request)
        return answer

    return Agent(name, instructions=f"You are {name}.", model=FunctionLLM(respond))


async def test_a_handoff_is_a_transfer_tool_and_the_target_answers_for_the_source() -> None:
    seen: list[ModelRequest] = []
    evaluator = specialist("EvalAgent", "score: 8/10", seen)
    coordinator = Agent(
        "Coordinator",
        instructions="Route essays.",
        model=ScriptedLLM(
            [transfer("EvalAgent", "grade this essay"), "The evaluator says 8/10."],
            checks=[
                lambda req: transfer_tool_name("EvalAgent") in req.tool_names,
                lambda req: req.tool_results[-1].text == "score: 8/10",
            ],
        ),
        handoffs=[evaluator],
    )
    result = await coordinator.arun("Here is my essay.")
    assert result.output == "The evaluator says 8/10."
    assert [t.name for t in coordinator.tools] == ["transfer_to_evalagent"]
    # the target saw the conversation without the source's system message or its unanswered turn
    (request,) = seen
    assert isinstance(request.messages[0], SystemMessage)
    assert request.messages[0].content == "You are EvalAgent."
    assert [type(m) for m in request.messages[1:]] == [UserMessage, UserMessage]
    assert [m.text for m in request.messages[1:] if isinstance(m, UserMessage)] == [
        "Here is my essay.",
        "grade this essay",
    ]
    kinds = [step.kind for step in result.steps]
    assert kinds == ["handoff_start", "handoff_end", "tool_call", "tool_result", "final_response"]


async def test_the_targets_events_carry_its_own_agent_name_between_start_and_end() -> None:
    evaluator = specialist("EvalAgent", "fine")
    coordinator = Agent(
        "Coordinator", model=ScriptedLLM([transfer("EvalAgent"), "done"]), handoffs=[evaluator]
    )
    events = [event async for event in coordinator.stream("essay")]
    kinds = [event.kind for event in events if not isinstance(event, TextDelta)]
    start = kinds.index("handoff_start")
    end = kinds.index("handoff_end")
    nested = [e for e in events[start + 1 : end] if isinstance(e, NestedEvent)]
    assert nested, "the target's events are inside the handoff"
    assert {e.agent for e in nested} == {"EvalAgent"}
    assert {e.depth for e in nested} == {1}
    assert any(isinstance(e.event, FinalResponse) and e.event.output == "fine" for e in nested)
    # the target streams because the source streams: its text deltas come wrapped too
    assert any(isinstance(e.event, TextDelta) for e in nested)
    started = next(e for e in events if isinstance(e, HandoffStarted))
    ended = next(e for e in events if isinstance(e, HandoffEnded))
    assert (started.source, started.target, started.depth, started.call_id) == (
        "Coordinator",
        "EvalAgent",
        1,
        "h1",
    )
    assert (ended.text, ended.call_id) == ("fine", "h1")
    # the source's own events are not wrapped; the transfer call/result pair follows the handoff
    assert isinstance(events[end + 1], ToolCallStep)
    assert isinstance(events[end + 2], ToolResultStep)


def chain_of(length: int, *, max_depth: int = 3, answered: list[str]) -> Agent[str]:
    """agent0 → agent1 → … → agent{length-1}: each hands off to the next; the last answers."""
    agents: list[Agent[str]] = []
    for index in reversed(range(length)):
        name = f"agent{index}"
        if index == length - 1:

            def last(request: ModelRequest, name: str = name) -> str:
                answered.append(name)
                return f"answer from {name}"

            agents.append(Agent(name, model=FunctionLLM(last), max_handoff_depth=max_depth))
        else:
            target = agents[-1]

            def hand(
                request: ModelRequest, name: str = name, target: str = target.name
            ) -> AssistantMessage | str:
                answered.append(name)
                if request.tool_results:
                    return request.tool_results[-1].text
                return transfer(target, call_id=f"to_{target}")

            agents.append(
                Agent(name, model=FunctionLLM(hand), handoffs=[target], max_handoff_depth=max_depth)
            )
    return agents[-1]


async def test_three_nested_handoffs_are_allowed_and_the_answer_comes_back_up() -> None:
    answered: list[str] = []
    result = await chain_of(4, answered=answered).arun("go")
    assert result.output == "answer from agent3"
    assert answered[:4] == ["agent0", "agent1", "agent2", "agent3"]


async def test_the_fourth_nested_handoff_raises_handoff_depth_exceeded_and_aborts_the_run() -> None:
    answered: list[str] = []
    with pytest.raises(HandoffDepthExceeded) as caught:
        await chain_of(5, answered=answered).arun("go")
    error = caught.value
    assert (error.depth, error.limit) == (4, 3)
    assert error.chain == ("agent0", "agent1", "agent2", "agent3", "agent4")
    assert "agent4" not in answered, "the agent past the limit never ran"
    assert answered == ["agent0", "agent1", "agent2", "agent3"], "nothing ran after the abort"
    assert error.partial_result is not None
    assert error.partial_result.termination_reason == "error"


async def test_the_depth_limit_is_configurable() -> None:
    answered: list[str] = []
    with pytest.raises(HandoffDepthExceeded) as caught:
        await chain_of(3, max_depth=1, answered=answered).arun("go")
    assert (caught.value.depth, caught.value.limit) == (2, 1)
    with pytest.raises(ValueError, match="max_handoff_depth"):
        Agent("a", model=FunctionLLM(lambda r: "x"), max_handoff_depth=-1)


async def test_on_handoff_return_lets_the_source_merge_the_result() -> None:
    class Merging(Agent[str]):
        async def on_handoff_return(
            self, target: Agent[Any, Any], result: RunResult[Any], context: RunContext[None]
        ) -> str:
            return f"[{target.name} used {result.usage.requests} request(s)] {result.text.upper()}"

    coordinator = Merging(
        "Coordinator",
        model=ScriptedLLM(
            [transfer("Style"), "ok"],
            checks=[None, lambda req: req.tool_results[-1].text == "[Style used 1 request(s)] LOOKS GOOD"],
        ),
        handoffs=[specialist("Style", "looks good")],
    )
    assert (await coordinator.arun("essay")).output == "ok"

    def shorten(target: Agent[Any, Any], result: RunResult[Any], context: RunContext[Any]) -> str:
        return result.text[:5]

    per_handoff = Agent(
        "Coordinator",
        model=ScriptedLLM(
            [transfer("Style"), "ok"], checks=[None, lambda req: req.tool_results[-1].text == "looks"]
        ),
        handoffs=[Handoff(specialist("Style", "looks good"), on_return=shorten)],
    )
    assert (await per_handoff.arun("essay")).output == "ok"


async def test_handoff_trace_events_and_the_nested_run_names_its_parent_call() -> None:
    sink = InMemoryTraceSink()
    coordinator = Agent(
        "Coordinator",
        model=ScriptedLLM([transfer("EvalAgent"), "done"]),
        handoffs=[specialist("EvalAgent", "8")],
        tracer=Tracer(sinks=[sink]),
    )
    await coordinator.arun("essay")
    names = [(e.event, e.agent) for e in sink.events]
    assert ("handoff_start", "Coordinator") in names
    assert ("handoff_end", "Coordinator") in names
    start = next(e for e in sink.events if e.event == "handoff_start")
    assert start.data == {"target": "EvalAgent", "depth": 1}
    assert start.call_id == "h1"
    nested_start = next(e for e in sink.events if e.event == "agent_start" and e.agent == "EvalAgent")
    assert nested_start.data["parent_call_id"] == "h1"
    order = [e.event for e in sink.events if e.event.startswith("handoff") or e.agent == "EvalAgent"]
    assert order[0] == "handoff_start"
    assert order[-1] == "handoff_end"


async def test_every_tool_safety_rule_applies_to_a_handoff() -> None:
    # a transfer to an agent this one cannot hand off to is an unknown tool, and nothing runs
    coordinator = Agent(
        "Coordinator",
        model=ScriptedLLM([transfer("Ghost"), "sorry"]),
        handoffs=[specialist("EvalAgent", "8")],
    )
    result = await coordinator.arun("essay")
    answer = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert answer.is_error
    assert "there is not a tool named" in answer.text
    assert not any(step.kind == "handoff_start" for step in result.steps)
    # bad arguments are a validation error; the target never runs
    seen: list[ModelRequest] = []
    bad = Agent(
        "Coordinator",
        model=ScriptedLLM(
            [AssistantMessage(tool_calls=(ToolCall("h1", "transfer_to_evalagent", '{"message": 5}'),)), "x"]
        ),
        handoffs=[specialist("EvalAgent", "8", seen)],
    )
    result = await bad.arun("essay")
    answer = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert answer.is_error
    assert not seen


async def test_two_handoffs_in_one_turn_both_run_and_keep_their_names() -> None:
    coordinator = Agent(
        "Coordinator",
        model=ScriptedLLM(
            [
                AssistantMessage(
                    tool_calls=(
                        ToolCall("a", "transfer_to_style", "{}"),
                        ToolCall("b", "transfer_to_ref", "{}"),
                    )
                ),
                "merged",
            ],
            checks=[None, lambda req: [m.text for m in req.tool_results] == ["style ok", "refs ok"]],
        ),
        handoffs=[specialist("Style", "style ok"), specialist("Ref", "refs ok")],
    )
    events = [event async for event in coordinator.stream("essay")]
    agents = {e.agent for e in events if isinstance(e, NestedEvent)}
    assert agents == {"Style", "Ref"}
    assert sum(isinstance(e, HandoffEnded) for e in events) == 2


@dataclass
class Deps:
    user: str
    lookups: list[str] = field(default_factory=list)


async def test_the_target_gets_the_source_runs_deps() -> None:
    @tool
    def whoami(ctx: RunContext[Deps]) -> str:
        """Who is asking."""
        ctx.deps.lookups.append(ctx.agent_name)
        return ctx.deps.user

    target = Agent(
        "Ref",
        model=ScriptedLLM([AssistantMessage(tool_calls=(ToolCall("w", "whoami", "{}"),)), "it is alice"]),
        tools=[whoami],
        deps_type=Deps,
    )
    source = Agent(
        "Coordinator", model=ScriptedLLM([transfer("Ref"), "done"]), handoffs=[target], deps_type=Deps
    )
    deps = Deps("alice")
    await source.arun("who?", deps=deps)
    assert deps.lookups == ["Ref"]


def test_transfer_tool_names_are_valid_tool_names() -> None:
    assert transfer_tool_name("Eval Agent (v2)") == "transfer_to_eval_agent_v2"
    assert transfer_tool_name("  ") == "transfer_to_agent"
    assert len(transfer_tool_name("x" * 100)) == 64
    with pytest.raises(ValueError, match="two tools are named"):
        Agent("a", model=FunctionLLM(lambda r: "x"), handoffs=[specialist("b", "1"), specialist("B", "2")])


async def test_stopping_the_stream_during_a_handoff_closes_the_target_run() -> None:
    started = asyncio.Event()
    finished: list[str] = []

    async def slow(request: ModelRequest) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            finished.append("target model call ended")
        return "never"

    target = Agent("Slow", model=FunctionLLM(slow))
    source = Agent("Coordinator", model=ScriptedLLM([transfer("Slow"), "never"]), handoffs=[target])
    runner = source.stream("go")
    async for event in runner:
        if isinstance(event, HandoffStarted):
            await asyncio.wait_for(started.wait(), 5)
            break
    await asyncio.wait_for(runner.aclose(), 5)
    assert finished == ["target model call ended"]


async def test_a_blocking_guardrail_of_the_target_aborts_the_whole_run() -> None:
    from kanawa.agents.guardrails import Guardrail
    from kanawa.loop.errors import GuardrailViolation

    target = Agent(
        "Ref", model=FunctionLLM(lambda r: "secret: 1234"), guardrails=[Guardrail(regex_blocks=["secret"])]
    )
    source = Agent("Coordinator", model=ScriptedLLM([transfer("Ref"), "never"]), handoffs=[target])
    with pytest.raises(GuardrailViolation) as caught:
        await source.arun("go")
    assert caught.value.stage == "output"
    assert caught.value.partial_result is not None
