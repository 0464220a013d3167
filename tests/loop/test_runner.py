"""Seed 003 "メインループフロー" and "無限ループ防止メカニズム": the runner end to end."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Literal

import pytest

from kanawa.agents.guardrails import Guardrail
from kanawa.llm.errors import LLMConnectionError, LLMRateLimitError, LLMStreamInterruptedError
from kanawa.llm.testing import FunctionLLM, ModelRequest, ScriptedLLM
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.errors import (
    AgentError,
    GuardrailViolation,
    LLMCallFailed,
    MaxStepsExceeded,
    StrictToolNotFound,
    ToolExecutionFailed,
)
from kanawa.loop.events import FinalResponse, Thinking, ToolResultStep
from kanawa.loop.policies import ContinueWithThinking, TerminationDecision, TerminationReason
from kanawa.loop.runner import AgentLoopRunner
from kanawa.loop.spec import RunSpec
from kanawa.loop.state import AgentLoopState
from kanawa.tools.base import ToolErrorKind
from kanawa.tools.decorator import tool
from kanawa.tools.errors import ToolNotFound
from kanawa.types import (
    AssistantMessage,
    LLMResponse,
    Message,
    StopReason,
    StreamEvent,
    SystemMessage,
    TextDelta,
    ToolMessage,
    Usage,
    UserMessage,
)
from tests.loop.helpers import call, conversation, drain, kinds, text_response, tools_response


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: what to look up
    """
    return f"value-of-{key}"


@tool
def paint(color: Literal["red", "blue"]) -> str:
    """Paint.

    Args:
        color: the colour
    """
    return color


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("secret internal detail")


def _looping_llm() -> FunctionLLM:
    counter = iter(range(1_000))
    return FunctionLLM(lambda req: tools_response(call("lookup", json.dumps({"key": f"k{next(counter)}"}))))


# ----------------------------------------------------------------------------------- step budget


async def test_max_steps_exceeded_when_the_budget_is_spent_on_error() -> None:
    config = AgentConfiguration(max_steps=3, max_tool_calls_per_tool=None)
    llm = _looping_llm()
    runner = AgentLoopRunner(RunSpec(llm, tools=[lookup], config=config), conversation())
    with pytest.raises(MaxStepsExceeded) as info:
        await drain(runner)
    assert info.value.steps == 3
    assert len(llm.requests) == 3
    partial = info.value.partial_result
    assert partial is not None
    assert partial.usage.requests == 3
    assert kinds(partial.steps) == ["tool_call", "tool_result"] * 3


async def test_on_max_steps_finalize_offers_no_tools_in_the_last_request_and_answers() -> None:
    config = AgentConfiguration(max_steps=3, on_max_steps="finalize", max_tool_calls_per_tool=None)

    def respond(request: ModelRequest) -> LLMResponse | str:
        if request.tools:
            return tools_response(call("lookup", json.dumps({"key": str(len(request.messages))})))
        return "best effort answer"

    llm = FunctionLLM(respond)
    events, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup], config=config), conversation()))
    assert [bool(r.tools) for r in llm.requests] == [True, True, False]
    last = llm.requests[-1].messages[-1]
    assert isinstance(last, UserMessage)
    assert "no more tools" in last.text
    assert result.output == "best effort answer"
    assert result.termination_reason == TerminationReason.MAX_STEPS_FINALIZED
    assert isinstance(events[-1], FinalResponse)


async def test_finalize_round_with_structured_output_sends_the_schema() -> None:
    from pydantic import BaseModel

    class Out(BaseModel):
        n: int

    config = AgentConfiguration(max_steps=2, on_max_steps="finalize")
    llm = ScriptedLLM(
        [tools_response(call("lookup", '{"key": "a"}')), '{"n": 4}'],
        checks=[None, lambda r: (r.tools == () and r.response_schema is not None) or pytest.fail("shape")],
    )
    _, result = await drain(
        AgentLoopRunner(RunSpec(llm, tools=[lookup], output_type=Out, config=config), conversation())
    )
    assert result.output == Out(n=4)


# ------------------------------------------------------------------------------ runaway guards


async def test_duplicate_tool_call_terminates_run_with_duplicate_tool_call_detected() -> None:
    same = call("lookup", '{"key": "x"}')
    llm = ScriptedLLM([tools_response(same), tools_response(same), tools_response(same), "never"])
    events, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup]), conversation()))
    assert result.termination_reason == "duplicate_tool_call_detected"
    assert result.output is None
    assert not result.completed
    assert kinds(events) == ["tool_call", "tool_result"] * 2  # ran twice, the third request stopped it
    assert llm.remaining == 1
    # every tool call in the conversation has an answer, so the history can be continued
    last = result.messages[-1]
    assert isinstance(last, ToolMessage)
    assert last.is_error
    assert last.tool_call_id == same.id


async def test_max_tool_calls_per_tool_terminates_with_its_own_reason() -> None:
    config = AgentConfiguration(max_tool_calls_per_tool=2, max_steps=10)
    events, result = await drain(
        AgentLoopRunner(RunSpec(_looping_llm(), tools=[lookup], config=config), conversation())
    )
    assert result.termination_reason == TerminationReason.MAX_TOOL_CALLS_PER_TOOL_EXCEEDED
    assert kinds(events).count("tool_result") == 2


# --------------------------------------------------------------------------- bad model output


@pytest.mark.parametrize(
    ("bad_call", "kind"),
    [
        (call("lookup", '{"key": '), ToolErrorKind.PARSE_ERROR),
        (call("lookup", '["not", "an", "object"]'), ToolErrorKind.PARSE_ERROR),
        (call("nonexistent", "{}"), ToolErrorKind.UNKNOWN_TOOL),
        (call("lookup", '{"key": 5, "extra": true}'), ToolErrorKind.VALIDATION_ERROR),
        (call("explode", "{}"), ToolErrorKind.EXECUTION_ERROR),
    ],
)
async def test_bad_model_output_keeps_the_run_going_and_the_model_sees_is_error(
    bad_call: object, kind: ToolErrorKind
) -> None:
    def answer_after_error(request: ModelRequest) -> None:
        tool_message = request.messages[-1]
        assert isinstance(tool_message, ToolMessage)
        assert tool_message.is_error
        assert "secret internal detail" not in tool_message.text

    llm = ScriptedLLM([tools_response(bad_call), "recovered"], checks=[None, answer_after_error])  # type: ignore[arg-type]
    events, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup, explode]), conversation()))
    tool_result = events[1]
    assert isinstance(tool_result, ToolResultStep)
    assert tool_result.result.is_error
    assert tool_result.result.error_kind is kind
    assert result.output == "recovered"


async def test_wrong_option_value_is_a_validation_error_result() -> None:
    llm = ScriptedLLM([tools_response(call("paint", '{"color": "green"}')), "ok"])
    events, _ = await drain(AgentLoopRunner(RunSpec(llm, tools=[paint]), conversation()))
    result = events[1]
    assert isinstance(result, ToolResultStep)
    assert result.result.error_kind is ToolErrorKind.VALIDATION_ERROR
    assert "option" in result.result.content[0].text  # type: ignore[union-attr]


async def test_strict_tools_raises_tool_not_found_and_tool_execution_failed() -> None:
    strict = AgentConfiguration(strict_tools=True)
    llm = ScriptedLLM([tools_response(call("missing"))])
    with pytest.raises(ToolNotFound) as missing:
        await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup], config=strict), conversation()))
    assert missing.value.name == "missing"
    # seed 003's AgentError.toolNotFound: the tool layer's error, and a run error with the run so far
    assert isinstance(missing.value, AgentError)
    assert type(missing.value) is StrictToolNotFound
    assert missing.value.partial_result is not None
    llm = ScriptedLLM([tools_response(call("explode"))])
    with pytest.raises(ToolExecutionFailed) as failed:
        await drain(AgentLoopRunner(RunSpec(llm, tools=[explode], config=strict), conversation()))
    assert failed.value.detail is not None
    assert "secret internal detail" in failed.value.detail
    assert "secret" not in str(failed.value)


# ------------------------------------------------------------------------------ pending tools


async def test_auto_execute_tools_false_ends_with_tools_pending_and_the_calls() -> None:
    c1, c2 = call("lookup", '{"key": "a"}', "c1"), call("lookup", '{"key": "b"}', "c2")
    llm = ScriptedLLM([tools_response(c1, c2)])
    config = AgentConfiguration(auto_execute_tools=False)
    events, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup], config=config), conversation()))
    assert kinds(events) == ["tool_call", "tool_call"]
    assert result.termination_reason == TerminationReason.TOOLS_PENDING
    assert result.pending_tool_calls == (c1, c2)
    assert isinstance(result.messages[-1], AssistantMessage)  # the caller answers the calls


# ----------------------------------------------------------------------------------- LLM errors


async def test_llm_error_becomes_llm_call_failed_with_cause_and_retry_info() -> None:
    error = LLMRateLimitError("slow down", provider="test", status_code=429, retry_after=3.0)

    async def fail(request: ModelRequest) -> str:
        raise error

    with pytest.raises(LLMCallFailed) as info:
        await drain(AgentLoopRunner(RunSpec(FunctionLLM(fail)), conversation()))
    assert info.value.__cause__ is error
    assert info.value.error is error
    assert info.value.status_code == 429
    assert info.value.retry_after == 3.0
    assert info.value.retryable is True
    assert info.value.step == 1


async def collect(runner: AgentLoopRunner[str], into: list[object]) -> None:
    async for event in runner:
        into.append(event)


class TruncatedStreamLLM:
    """An adapter whose stream stops without its ResponseCompleted (a provider bug or cut stream)."""

    provider = "test"
    model = "truncated"

    async def chat(self, messages: Sequence[Message], **_: object) -> LLMResponse:
        raise AssertionError("not used")

    async def stream(self, messages: Sequence[Message], **_: object) -> AsyncIterator[StreamEvent]:
        yield TextDelta("half an answ")

    def count_tokens(self, content: object) -> int:
        return 0

    def normalize_model_name(self, name: str | None = None) -> str:
        return "truncated"


async def test_a_stream_that_ends_without_a_completed_response_is_llm_call_failed() -> None:
    runner = AgentLoopRunner(RunSpec(TruncatedStreamLLM(), stream=True), conversation())
    seen: list[object] = []
    with pytest.raises(LLMCallFailed) as info:
        await collect(runner, seen)
    assert seen == [TextDelta("half an answ")]
    assert isinstance(info.value.__cause__, LLMConnectionError)


async def test_a_stream_interrupted_mid_way_is_llm_call_failed_after_the_deltas_already_yielded() -> None:
    cut = LLMStreamInterruptedError("connection reset", provider="test")
    llm = ScriptedLLM([[TextDelta("par"), cut]])
    seen: list[object] = []
    with pytest.raises(LLMCallFailed) as info:
        await collect(AgentLoopRunner(RunSpec(llm, stream=True), conversation()), seen)
    assert seen == [TextDelta("par")]
    assert info.value.__cause__ is cut
    assert info.value.retryable is False


# --------------------------------------------------------------------------- results and usage


async def test_usage_is_summed_over_requests_and_messages_hold_the_whole_conversation() -> None:
    first = tools_response(call("lookup", '{"key": "a"}', "c1"))
    second = LLMResponse(
        AssistantMessage(text="done"),
        StopReason.END_TURN,
        usage=Usage(input_tokens=7, output_tokens=3, reasoning_tokens=2, cached_tokens=4, requests=1),
        model="m",
    )
    llm = ScriptedLLM([first, second])
    _, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup]), conversation("question")))
    assert result.usage == Usage(
        input_tokens=17, output_tokens=8, reasoning_tokens=2, cached_tokens=4, requests=2
    )
    roles = [m.role for m in result.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert isinstance(result.messages[0], SystemMessage)
    tool_message = result.messages[3]
    assert isinstance(tool_message, ToolMessage)
    assert (tool_message.tool_call_id, tool_message.name, tool_message.text) == ("c1", "lookup", "value-of-a")
    assert result.run_id
    final = result.steps[-1]
    assert isinstance(final, FinalResponse)
    assert final.usage == result.usage


async def test_the_adapter_receives_one_growing_list_not_copies() -> None:
    seen: list[int] = []

    def respond(request: ModelRequest) -> LLMResponse | str:
        seen.append(len(request.messages))
        return tools_response(call("lookup", '{"key": "a"}')) if len(seen) == 1 else "ok"

    runner = AgentLoopRunner(RunSpec(FunctionLLM(respond), tools=[lookup]), conversation())
    await drain(runner)
    assert seen == [2, 4]
    assert runner.result.messages is runner.messages


async def test_custom_policy_continue_with_thinking_yields_thinking_and_asks_again() -> None:
    class ThinkOnce:
        def __init__(self) -> None:
            self.calls = 0

        def decide(self, response: LLMResponse, state: AgentLoopState) -> TerminationDecision:
            from kanawa.loop.policies import StandardTerminationPolicy

            self.calls += 1
            if self.calls == 1:
                return ContinueWithThinking()
            return StandardTerminationPolicy().decide(response, state)

    llm = ScriptedLLM([text_response("hmm"), "answer"])
    events, result = await drain(AgentLoopRunner(RunSpec(llm, policy=ThinkOnce()), conversation()))
    assert kinds(events) == ["thinking", "final_response"]
    first = events[0]
    assert isinstance(first, Thinking)
    assert (first.reason, first.text) == ("policy", "hmm")
    assert result.output == "answer"


async def test_empty_end_turn_completes_without_output() -> None:
    events, result = await drain(AgentLoopRunner(RunSpec(ScriptedLLM([text_response("")])), conversation()))
    assert events == []
    assert result.output is None
    assert result.termination_reason == "completed"


async def test_hooks_preprocess_messages_and_postprocess_response() -> None:
    from kanawa.context import RunContext

    async def pre(messages: list[object], context: RunContext[None]) -> list[object]:
        assert context.step == 0  # before the first request
        return [*messages, UserMessage(f"added by hook for {context.agent_name}")]

    async def post(final: FinalResponse[str]) -> FinalResponse[str]:
        from dataclasses import replace

        return replace(final, output=final.output.upper())

    llm = ScriptedLLM(["shout"])
    runner = AgentLoopRunner(RunSpec(llm, preprocess=pre, postprocess=post), conversation())  # type: ignore[arg-type]
    events, result = await drain(runner)
    assert llm.requests[0].messages[-1] == UserMessage("added by hook for agent")
    assert result.output == "SHOUT"
    assert events[-1] == result.steps[-1]


async def test_aclose_stops_an_unfinished_run() -> None:
    llm = ScriptedLLM([tools_response(call("lookup", '{"key": "a"}')), "never"])
    runner = AgentLoopRunner(RunSpec(llm, tools=[lookup]), conversation())
    first = await runner.__anext__()
    assert first.kind == "tool_call"
    await runner.aclose()
    with pytest.raises(StopAsyncIteration):
        await runner.__anext__()
    assert llm.remaining == 1


async def test_result_is_ready_when_the_consumer_stops_at_the_final_response() -> None:
    runner = AgentLoopRunner(RunSpec(ScriptedLLM(["the answer"])), conversation())
    async for event in runner:
        if isinstance(event, FinalResponse):
            break
    assert runner.result.output == "the answer"
    await runner.aclose()


class ClosableStreamLLM:
    """Streams two deltas and records whether its stream was closed before it finished."""

    provider = "test"
    model = "closable"

    def __init__(self) -> None:
        self.closed_early = False

    async def chat(self, messages: Sequence[Message], **_: object) -> LLMResponse:
        raise AssertionError("not used")

    async def stream(self, messages: Sequence[Message], **_: object) -> AsyncIterator[StreamEvent]:
        finished = False
        try:
            yield TextDelta("a")
            yield TextDelta("b")
            finished = True
        finally:
            self.closed_early = not finished

    def count_tokens(self, content: object) -> int:
        return 0

    def normalize_model_name(self, name: str | None = None) -> str:
        return "closable"


async def test_aclose_mid_stream_closes_the_model_stream_at_once() -> None:
    llm = ClosableStreamLLM()
    runner = AgentLoopRunner(RunSpec(llm, stream=True), conversation())
    assert await runner.__anext__() == TextDelta("a")
    await runner.aclose()
    assert llm.closed_early


async def test_the_runner_is_given_guardrails_as_the_agent_is() -> None:
    # one concept, one parameter name: AgentLoopRunner(guardrails=[...]) like Agent(guardrails=[...])
    guard = Guardrail(regex_blocks={"card number": r"\b(?:\d[ -]?){13,16}\b"}, name="pii")
    runner = AgentLoopRunner(
        RunSpec(ScriptedLLM(["card 4111 1111 1111 1111"]), guardrails=[guard]), conversation()
    )
    with pytest.raises(GuardrailViolation) as blocked:
        await drain(runner)
    assert blocked.value.guardrail == "pii"
    assert blocked.value.stage == "output"
