"""Run options (kanawa.loop.options): what a run's starter adds to one run — trace sinks, guardrails —
reaches the run and every run nested in it (a handoff target), and never changes an agent."""

from __future__ import annotations

import pytest

from kanawa import Agent, TokenGuard
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.loop.errors import BudgetExceeded
from kanawa.loop.options import NO_OPTIONS, RunOptions
from kanawa.trace.events import TraceEvent, Tracer
from kanawa.types import AssistantMessage, ToolCall


class Recorder:
    def __init__(self) -> None:
        self.events: list[TraceEvent] = []

    def emit(self, event: TraceEvent) -> None:
        self.events.append(event)

    async def aclose(self) -> None:
        return None


def _coordinator(request: ModelRequest) -> Script:
    if request.tool_results:
        return f"graded: {request.tool_results[-1].text}"
    return AssistantMessage(tool_calls=(ToolCall("h1", "transfer_to_evaluator", '{"message": "grade it"}'),))


def _team() -> tuple[Agent, Agent]:
    evaluator = Agent("evaluator", "Grade.", model=FunctionLLM(lambda r: "8/10"))
    return Agent("coordinator", "Route.", model=FunctionLLM(_coordinator), handoffs=[evaluator]), evaluator


async def test_trace_sinks_get_the_run_and_its_handoff_targets_events_and_the_agents_tracer_too() -> None:
    coordinator, evaluator = _team()
    own, evaluators = Recorder(), Recorder()
    tracer = coordinator.tracer = Tracer(sinks=[own])
    evaluator_tracer = evaluator.tracer = Tracer(sinks=[evaluators])  # a target with a tracer of its own
    extra = Recorder()
    result = await coordinator.arun("grade", options=RunOptions(trace_sinks=(extra,)))
    assert result.text == "graded: 8/10"
    starts = [e.agent for e in extra.events if e.event == "agent_start"]
    assert starts == ["coordinator", "evaluator"]  # the handoff target's run reached the run's sink
    # the agents' own sinks got the same events, each once (interleaved across the two runs)
    assert sorted(e.event for e in own.events + evaluators.events) == sorted(e.event for e in extra.events)
    assert coordinator.tracer is tracer
    assert evaluator.tracer is evaluator_tracer
    second = Recorder()
    await coordinator.arun("grade", options=RunOptions(trace_sinks=(second,)))
    assert len(extra.events) == len(second.events)  # the first run's sink got nothing of the second


async def test_guardrails_apply_to_the_run_and_its_handoff_targets_and_only_to_that_run() -> None:
    coordinator, evaluator = _team()
    guard = TokenGuard(max_requests=2, name="run_budget")
    options = RunOptions(guardrails=(guard,))
    with pytest.raises(BudgetExceeded):  # coordinator 1, evaluator 2, coordinator 3: over
        await coordinator.arun("grade", options=options)
    assert coordinator.guardrails == ()
    assert evaluator.guardrails == ()
    assert (await coordinator.arun("grade")).text == "graded: 8/10"  # a run without the option is free


def test_a_nested_run_inherits_sinks_and_guardrails_only() -> None:
    sink, guard = Recorder(), TokenGuard(max_requests=5)
    options = RunOptions(trace_sinks=(sink,), guardrails=(guard,))
    assert options.for_nested() == options
    assert RunOptions().for_nested() is NO_OPTIONS
    with pytest.raises(TypeError):
        RunOptions((sink,))  # type: ignore[misc]  # options are keyword-only
