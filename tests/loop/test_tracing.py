"""Seed 002 §3-6 / App. C: the trace events a run emits, in order, with durations and usage."""

from __future__ import annotations

import pytest

from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.testing import ScriptedLLM
from kanawa.llm.tokens import count_text_tokens
from kanawa.loop import tracing
from kanawa.loop.errors import LLMCallFailed
from kanawa.loop.runner import AgentLoopRunner
from kanawa.loop.spec import RunSpec
from kanawa.tools.decorator import tool
from kanawa.trace.events import Tracer
from kanawa.trace.memory import InMemoryTraceSink
from kanawa.types import text_of
from tests.loop.helpers import call, conversation, drain, text_response, tools_response


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: what to look up
    """
    return f"value-of-{key}"


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("hidden failure detail")


async def test_trace_events_are_emitted_in_order_with_durations_and_tokens() -> None:
    sink = InMemoryTraceSink()
    tracer = Tracer(sinks=[sink], session="s1")
    llm = ScriptedLLM(
        [tools_response(call("lookup", '{"key": "a"}', "c1"), call("explode", "{}", "c2")), "done"]
    )
    runner = AgentLoopRunner(
        RunSpec(llm, tools=[lookup, explode], tracer=tracer, agent_name="Calc"), conversation()
    )
    await drain(runner)
    assert [e.event for e in sink.events] == [
        "agent_start",
        "llm_start",
        "llm_end",
        "tool_start",
        "tool_start",
        "tool_end",
        "tool_end",
        "llm_start",
        "llm_end",
        "agent_end",
    ]
    assert {e.session for e in sink.events} == {"s1"}
    assert {e.agent for e in sink.events} == {"Calc"}
    assert {e.run_id for e in sink.events} == {runner.run_id}

    llm_end = sink.named("llm_end")[0]
    assert (llm_end.step, llm_end.model, llm_end.tok_prompt, llm_end.tok_completion) == (1, "m", 10, 5)
    assert llm_end.duration_ms is not None
    assert llm_end.duration_ms >= 0
    assert llm_end.data["stop_reason"] == "tool_use"

    ok, failed = sink.named("tool_end")
    assert (ok.tool, ok.call_id, ok.result, ok.error) == ("lookup", "c1", "value-of-a", None)
    assert ok.duration_ms is not None
    assert ok.duration_ms >= 0
    assert (failed.tool, failed.call_id, failed.result) == ("explode", "c2", None)
    assert failed.error is not None
    assert "hidden failure detail" in failed.error
    assert failed.data["error_kind"] == "execution_error"
    assert "hidden failure detail" not in runner.result.messages[4].text  # type: ignore[union-attr]
    # seed 002 App. C: tool_end carries the tool's I/O in tokens (arguments in, result out)
    assert ok.tok_prompt is not None
    assert ok.tok_prompt > 0
    assert ok.tok_completion == count_text_tokens("value-of-a", model="m")
    assert failed.tok_completion == count_text_tokens(text_of(runner.result.messages[4].parts), model="m")  # type: ignore[union-attr]

    end = sink.named("agent_end")[0]
    usage = runner.result.usage
    assert (end.tok_prompt, end.tok_completion) == (usage.input_tokens, usage.output_tokens)
    assert end.data["termination_reason"] == "completed"
    assert end.data["requests"] == 2
    assert end.duration_ms is not None
    assert end.error is None


async def test_tool_arguments_are_not_traced() -> None:
    sink = InMemoryTraceSink()
    llm = ScriptedLLM([tools_response(call("lookup", '{"key": "SECRET-ARG"}')), "ok"])
    await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup], tracer=Tracer(sinks=[sink])), conversation()))
    for record in sink.records():
        if record["event"] != "tool_end":
            assert "SECRET-ARG" not in str(record)


async def test_llm_error_emits_llm_error_and_agent_end_with_the_error() -> None:
    sink = InMemoryTraceSink()
    llm = ScriptedLLM([LLMConnectionError("boom", status_code=502)])
    with pytest.raises(LLMCallFailed):
        await drain(AgentLoopRunner(RunSpec(llm, tracer=Tracer(sinks=[sink])), conversation()))
    assert [e.event for e in sink.events] == ["agent_start", "llm_start", "llm_error", "agent_end"]
    error = sink.named("llm_error")[0]
    assert error.data["status_code"] == 502
    assert error.data["retryable"] is True
    assert error.duration_ms is not None
    assert sink.named("agent_end")[0].error is not None


async def test_no_trace_events_are_built_when_the_tracer_has_no_sinks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a trace event was built without a sink")

    monkeypatch.setattr(tracing, "TraceEvent", refuse)
    llm = ScriptedLLM([tools_response(call("lookup", '{"key": "a"}')), text_response("ok")])
    _, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup], tracer=Tracer()), conversation()))
    assert result.output == "ok"


async def test_agent_end_is_emitted_once_even_if_the_consumer_stops_at_the_final_response() -> None:
    sink = InMemoryTraceSink()
    runner = AgentLoopRunner(RunSpec(ScriptedLLM(["done"]), tracer=Tracer(sinks=[sink])), conversation())
    async for _ in runner:
        break
    await runner.aclose()
    ends = sink.named("agent_end")
    assert len(ends) == 1
    assert ends[0].error is None


async def test_a_run_started_inside_a_tool_call_names_that_call_as_its_parent() -> None:
    from kanawa import Agent
    from kanawa.llm.testing import ScriptedLLM
    from kanawa.trace import InMemoryTraceSink, Tracer
    from kanawa.types import AssistantMessage, ToolCall

    sink = InMemoryTraceSink()
    tracer = Tracer(sinks=[sink])
    inner = Agent("inner", model=ScriptedLLM(["a", "b"]), tracer=tracer)

    async def delegate(question: str) -> str:
        """Ask the inner agent."""
        return (await inner.arun(question)).text

    calls = (ToolCall("c1", "delegate", '{"question": "x"}'), ToolCall("c2", "delegate", '{"question": "y"}'))
    outer = Agent("outer", tools=[delegate], model=ScriptedLLM([AssistantMessage(tool_calls=calls), "done"]))
    outer.tracer = tracer
    result = await outer.arun("go")
    starts = {e.run_id: e for e in sink.named("agent_start")}
    outer_start = starts.pop(result.run_id)
    assert "parent_run_id" not in outer_start.data
    parents = sorted(
        (e.data["parent_run_id"], e.data["parent_step"], e.data["parent_call_id"]) for e in starts.values()
    )
    assert parents == [(result.run_id, 1, "c1"), (result.run_id, 1, "c2")]
