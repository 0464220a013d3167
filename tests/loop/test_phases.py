"""Seed 003 "構造化出力フェーズ管理": phases, the request table and decode retries.

| phase              | tools | response schema |
| tool_use + tools   | sent  | not sent        |
| tool_use, no tools | none  | sent            |
| final_output       | none  | sent            |
| completed          | InvalidLoopState            |
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from kanawa.llm.testing import ModelRequest, ScriptedLLM
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.errors import AgentError, InvalidLoopState, OutputDecodingFailed
from kanawa.loop.events import FinalResponse, Thinking
from kanawa.loop.runner import AgentLoopRunner
from kanawa.loop.spec import RunSpec
from kanawa.loop.state import COMPLETED, FinalOutputPhase
from kanawa.tools.decorator import tool
from kanawa.types import UserMessage
from tests.loop.helpers import call, conversation, drain, kinds, text_response, tools_response


class Answer(BaseModel):
    value: int


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: what to look up
    """
    return f"value-of-{key}"


def offers_tools_without_schema(request: ModelRequest) -> None:
    assert [t.name for t in request.tools] == ["lookup"]
    assert request.response_schema is None


def sends_schema_without_tools(request: ModelRequest) -> None:
    assert request.tools == ()
    assert request.response_schema is not None
    assert request.response_schema.name == "Answer"


def sends_neither(request: ModelRequest) -> None:
    assert request.tools == ()
    assert request.response_schema is None


async def test_tool_use_with_tools_sends_tools_and_no_schema_then_final_output_sends_schema_only() -> None:
    llm = ScriptedLLM(
        [tools_response(call("lookup", '{"key": "k"}')), text_response("The value is 7."), '{"value": 7}'],
        checks=[offers_tools_without_schema, offers_tools_without_schema, sends_schema_without_tools],
    )
    runner = AgentLoopRunner(RunSpec(llm, tools=[lookup], output_type=Answer), conversation())
    events, result = await drain(runner)
    assert kinds(events) == ["tool_call", "tool_result", "thinking", "final_response"]
    thinking = events[2]
    assert isinstance(thinking, Thinking)
    assert thinking.reason == "final_output_request"
    assert thinking.text == "The value is 7."
    assert result.output == Answer(value=7)
    assert llm.remaining == 0
    # the final-output request message carries the schema
    request_message = llm.requests[2].messages[-1]
    assert isinstance(request_message, UserMessage)
    assert '"value"' in request_message.text


async def test_tool_use_without_tools_sends_the_schema_and_decodes_directly() -> None:
    llm = ScriptedLLM(['{"value": 3}'], checks=[sends_schema_without_tools])
    result = await drain(AgentLoopRunner(RunSpec(llm, output_type=Answer), conversation()))
    assert result[1].output == Answer(value=3)
    assert kinds(result[0]) == ["final_response"]


async def test_tool_use_without_tools_decode_failure_raises_output_decoding_failed_without_retry() -> None:
    llm = ScriptedLLM(["not json", '{"value": 1}'])
    runner = AgentLoopRunner(RunSpec(llm, output_type=Answer), conversation())
    with pytest.raises(OutputDecodingFailed) as info:
        await drain(runner)
    assert info.value.attempts == 1
    assert info.value.text == "not json"
    assert "not json" not in str(info.value)
    assert llm.remaining == 1


async def test_str_output_has_no_final_output_phase_and_no_schema() -> None:
    llm = ScriptedLLM(
        [tools_response(call("lookup", '{"key": "a"}')), "plain answer"],
        checks=[offers_tools_without_schema, offers_tools_without_schema],
    )
    events, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[lookup]), conversation()))
    assert kinds(events) == ["tool_call", "tool_result", "final_response"]
    assert result.output == "plain answer"
    assert result.text == "plain answer"


async def test_str_output_without_tools_sends_neither_tools_nor_schema() -> None:
    llm = ScriptedLLM(["hello"], checks=[sends_neither])
    _, result = await drain(AgentLoopRunner(RunSpec(llm), conversation()))
    assert result.output == "hello"


@pytest.mark.parametrize("retries", [0, 1, 2, 3])
async def test_decode_retry_count_is_exactly_max_decode_retries_then_output_decoding_failed(
    retries: int,
) -> None:
    bad = ['{"value": "x"}'] * (retries + 1)
    llm = ScriptedLLM([tools_response(call("lookup", '{"key": "a"}')), "draft", *bad, '{"value": 1}'])
    config = AgentConfiguration(max_decode_retries=retries, max_steps=20)
    runner = AgentLoopRunner(RunSpec(llm, tools=[lookup], output_type=Answer, config=config), conversation())
    with pytest.raises(OutputDecodingFailed) as info:
        await drain(runner)
    assert info.value.attempts == retries + 1
    assert llm.remaining == 1  # the good answer was never asked for
    partial = info.value.partial_result
    assert partial is not None
    retry_steps = [s for s in partial.steps if isinstance(s, Thinking) and s.reason == "decode_retry"]
    assert len(retry_steps) == retries
    assert all(not r.tools and r.response_schema is not None for r in llm.requests[2:])


async def test_decode_retry_succeeds_and_the_retry_message_carries_the_validation_error() -> None:
    llm = ScriptedLLM(
        [
            tools_response(call("lookup", '{"key": "a"}')),
            "draft",
            '{"valu": 1}',
            '```json\n{"value": 2}\n```',
        ],
        checks=[None, None, sends_schema_without_tools, sends_schema_without_tools],
    )
    runner = AgentLoopRunner(RunSpec(llm, tools=[lookup], output_type=Answer), conversation())
    events, result = await drain(runner)
    assert kinds(events) == ["tool_call", "tool_result", "thinking", "thinking", "final_response"]
    assert result.output == Answer(value=2)
    retry = llm.requests[3].messages[-1]
    assert isinstance(retry, UserMessage)
    assert "value" in retry.text
    assert "Field required" in retry.text
    assert runner.state.phase == COMPLETED


async def test_phase_moves_to_final_output_with_retry_count() -> None:
    seen: list[object] = []
    llm = ScriptedLLM([tools_response(call("lookup", '{"key": "a"}')), "draft", "bad", '{"value": 1}'])
    runner = AgentLoopRunner(RunSpec(llm, tools=[lookup], output_type=Answer), conversation())
    async for event in runner:
        seen.append((event.kind, runner.state.phase))
    assert ("thinking", FinalOutputPhase(retry_count=0)) in seen
    assert ("thinking", FinalOutputPhase(retry_count=1)) in seen
    assert isinstance(runner.result.steps[-1], FinalResponse)


async def test_completed_phase_refuses_a_request_with_invalid_loop_state() -> None:
    llm = ScriptedLLM(["never sent"])
    runner = AgentLoopRunner(RunSpec(llm), conversation())
    runner.state.mark_completed()
    with pytest.raises(InvalidLoopState):
        await drain(runner)
    assert llm.requests == []


async def test_result_before_completion_is_invalid_loop_state() -> None:
    runner = AgentLoopRunner(RunSpec(ScriptedLLM(["x"])), conversation())
    with pytest.raises(InvalidLoopState):
        _ = runner.result


@pytest.mark.parametrize(
    ("on_max_steps", "error"), [("error", "MaxStepsExceeded"), ("finalize", "OutputDecodingFailed")]
)
async def test_a_decode_retry_beyond_the_step_budget(on_max_steps: str, error: str) -> None:
    """The final-output request and its retries count as steps. With ``error`` the budget check raises
    MaxStepsExceeded; with ``finalize`` there is no step left to retry in, so the decode error stands."""
    llm = ScriptedLLM([tools_response(call("lookup", '{"key": "a"}')), "draft", "not json", '{"value": 1}'])
    config = AgentConfiguration(max_steps=3, on_max_steps=on_max_steps)  # type: ignore[arg-type]
    runner = AgentLoopRunner(RunSpec(llm, tools=[lookup], output_type=Answer, config=config), conversation())
    with pytest.raises(AgentError) as info:
        await drain(runner)
    assert type(info.value).__name__ == error
    assert len(llm.requests) == 3
