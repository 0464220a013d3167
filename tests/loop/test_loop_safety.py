"""What model output can never do to a run: run a tool that was not offered, let a raw Python
exception out, or run one identical call three times in one response. Also: the model must be named,
and a hung tool ends at its timeout."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kanawa import Agent, AgentConfiguration, tool
from kanawa.llm.testing import FunctionLLM, ModelRequest, ScriptedLLM
from kanawa.loop.errors import AgentError, MaxStepsExceeded
from kanawa.loop.events import ToolResultStep
from kanawa.tools.base import ToolErrorKind
from kanawa.types import (
    AssistantMessage,
    LLMResponse,
    StopReason,
    ToolCall,
    ToolMessage,
    Usage,
)
from tests.loop.helpers import call, text_response, tools_response


class Counter:
    def __init__(self) -> None:
        self.calls = 0


def wipe_tool(counter: Counter):  # type: ignore[no-untyped-def]
    @tool
    def wipe(target: str = "all") -> str:
        """Delete everything.

        Args:
            target: what to delete
        """
        counter.calls += 1
        return f"wiped {target}"

    return wipe


class Report:
    pass


# ------------------------------------------------------------------ 4. only offered tools ever run


async def test_a_tool_called_in_the_final_output_phase_never_runs() -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        value: int

    counter = Counter()
    model = ScriptedLLM(
        [
            tools_response(call("wipe", "{}", "c1")),  # tool_use phase: runs (offered)
            text_response("done"),  # asks for the structured answer: final-output phase, no tools
            tools_response(call("wipe", '{"target":"db"}', "c2")),  # not offered: must not run
            text_response('{"value": 3}'),
        ]
    )
    agent = Agent("a", "x", tools=[wipe_tool(counter)], model=model, output_type=Answer)
    result = await agent.arun("go")
    assert result.output == Answer(value=3)
    assert counter.calls == 1
    answered = [m for m in result.messages if isinstance(m, ToolMessage) and m.tool_call_id == "c2"]
    assert len(answered) == 1
    assert answered[0].is_error
    assert "there is not a tool named wipe" in answered[0].text
    assert not model.requests[2].tools  # the request that produced c2 offered no tools


async def test_a_tool_called_in_the_finalize_round_never_runs() -> None:
    counter = Counter()
    model = ScriptedLLM(
        [tools_response(call("wipe", "{}", "c1")), tools_response(call("wipe", '{"target":"x"}'))]
    )
    agent = Agent(
        "a",
        "x",
        tools=[wipe_tool(counter)],
        model=model,
        config=AgentConfiguration(max_steps=2, on_max_steps="finalize"),
    )
    with pytest.raises(MaxStepsExceeded) as caught:
        await agent.arun("go")
    assert counter.calls == 1  # only the call made while tools were offered
    assert not model.requests[1].tools
    partial = caught.value.partial_result
    assert partial is not None
    last = partial.messages[-1]
    assert isinstance(last, ToolMessage)
    assert last.is_error


async def test_a_tool_that_was_never_registered_is_answered_as_unknown() -> None:
    counter = Counter()
    model = ScriptedLLM([tools_response(call("rm_rf", "{}", "c1")), text_response("ok")])
    result = await Agent("a", "x", tools=[wipe_tool(counter)], model=model).arun("go")
    step = next(s for s in result.steps if isinstance(s, ToolResultStep))
    assert step.result.error_kind is ToolErrorKind.UNKNOWN_TOOL
    assert counter.calls == 0


# ------------------------------------------------------- 9. identical calls inside one response


async def test_identical_calls_in_one_response_run_once_and_share_the_result() -> None:
    counter = Counter()
    copies = [
        call("wipe", '{"target": "a"}', "c1"),
        call("wipe", '{"target":"a"}', "c2"),
        call("wipe", '{ "target":"a"}', "c3"),
    ]
    model = ScriptedLLM([tools_response(*copies), text_response("done")])
    result = await Agent("a", "x", tools=[wipe_tool(counter)], model=model).arun("go")
    assert result.output == "done"
    assert counter.calls == 1
    answers = {m.tool_call_id: m.text for m in result.messages if isinstance(m, ToolMessage)}
    assert answers == {"c1": "wiped a", "c2": "wiped a", "c3": "wiped a"}


async def test_identical_calls_still_stop_when_earlier_history_is_at_the_limit() -> None:
    counter = Counter()
    same = '{"target":"a"}'
    model = ScriptedLLM(
        [
            tools_response(call("wipe", same, "c1")),
            tools_response(call("wipe", same, "c2")),
            tools_response(call("wipe", same, "c3"), call("wipe", same, "c4")),
        ]
    )
    result = await Agent("a", "x", tools=[wipe_tool(counter)], model=model).arun("go")
    assert result.termination_reason == "duplicate_tool_call_detected"
    assert counter.calls == 2


# ------------------------------------------------------------------------ 7. no silent fake model


def test_an_agent_without_a_model_is_an_error_naming_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KANAWA_MODEL", raising=False)
    with pytest.raises(ValueError, match="model=") as caught:
        Agent("a", "x")
    assert "KANAWA_MODEL" in str(caught.value)


def test_kanawa_model_names_the_model_when_none_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANAWA_MODEL", "test")
    assert Agent("a", "x").model.provider == "test"
    monkeypatch.setenv("KANAWA_MODEL", "  ")
    with pytest.raises(ValueError, match="KANAWA_MODEL"):
        Agent("a", "x")


# --------------------------------------------------------------------------- 8. a tool that hangs


def test_the_default_tool_timeout_is_a_minute() -> None:
    assert AgentConfiguration().tool_timeout == 60.0
    assert AgentConfiguration(tool_timeout=None).tool_timeout is None


async def test_hung_async_and_sync_tools_end_at_their_timeout_and_the_run_goes_on() -> None:
    release = threading.Event()

    @tool(timeout=0.2)
    async def hang_async() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "never"

    @tool(timeout=0.2)
    def hang_sync() -> str:
        """Blocks its thread until released."""
        release.wait(30)
        return "late"

    model = ScriptedLLM(
        [
            tools_response(call("hang_async", "{}", "a"), call("hang_sync", "{}", "b")),
            text_response("went on"),
        ]
    )
    try:
        result = await Agent("a", "x", tools=[hang_async, hang_sync], model=model).arun("go")
    finally:
        release.set()
    assert result.output == "went on"
    answers = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert [m.is_error for m in answers] == [True, True]
    assert all("0.2" in m.text for m in answers)


# ----------------------------------------------------- 6. nothing raw escapes from model output


async def test_arguments_nested_ten_thousand_deep_are_a_parse_error_not_a_recursion_error() -> None:
    counter = Counter()
    deep = "[" * 10_000 + "]" * 10_000
    deep_object = '{"target":' + deep + "}"
    for arguments in (deep, deep_object):
        model = ScriptedLLM([tools_response(call("wipe", arguments, "c1")), text_response("ok")])
        agent = Agent("a", "x", tools=[wipe_tool(counter)], model=model)
        result = await agent.arun("go")
        assert result.output == "ok"
        events = [
            e
            async for e in Agent(
                "a",
                "x",
                tools=[wipe_tool(counter)],
                model=ScriptedLLM([tools_response(call("wipe", arguments)), "ok"]),
            ).stream("go")
        ]
        assert events
    assert counter.calls == 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=12,
)
arguments = st.one_of(
    json_values.map(json.dumps),
    st.text(max_size=30),
    st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 3000).map(lambda n: '{"target":' + "[" * n + "]" * n + "}"),
    st.just('{"target": "x"}'),
    st.just(""),
)
names = st.one_of(
    st.sampled_from(["wipe", "echo", "", "transfer", "ワイプ", "wipe\x00"]), st.text(max_size=6)
)
calls = st.builds(ToolCall, id=st.text(max_size=6), name=names, arguments=arguments)
usages = st.builds(
    Usage,
    input_tokens=st.integers(-(10**12), 10**12),
    output_tokens=st.integers(-(10**12), 10**12),
    reasoning_tokens=st.integers(-5, 10**6),
    cached_tokens=st.integers(-5, 10**6),
    requests=st.integers(-1, 3),
)
responses = st.builds(
    LLMResponse,
    message=st.builds(
        AssistantMessage,
        text=st.one_of(st.just(""), st.text(max_size=20), st.just("   ")),
        tool_calls=st.lists(calls, max_size=4).map(tuple),
    ),
    stop_reason=st.one_of(st.none(), st.sampled_from(list(StopReason))),
    usage=usages,
    model=st.text(max_size=5),
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(script=st.lists(responses, min_size=1, max_size=6), streaming=st.booleans(), structured=st.booleans())
def test_fuzzed_model_output_ends_in_a_result_or_a_documented_agent_error(
    script: Sequence[LLMResponse], streaming: bool, structured: bool
) -> None:
    """Whatever the model sends, ``run()``/``stream()`` return a result or raise an ``AgentError``."""
    counter = Counter()

    @tool
    def echo(value: str = "") -> str:
        """Echo.

        Args:
            value: text
        """
        return value

    remaining = list(script)

    def respond(request: ModelRequest) -> LLMResponse:
        return remaining.pop(0) if remaining else text_response('{"value": 1}' if structured else "end")

    from pydantic import BaseModel

    class Out(BaseModel):
        value: int

    agent: Agent[object] = Agent(
        "fuzz",
        "x",
        tools=[wipe_tool(counter), echo],
        model=FunctionLLM(respond),
        output_type=Out if structured else str,  # type: ignore[arg-type]
        config=AgentConfiguration(max_steps=5),
    )

    async def go() -> None:
        try:
            if streaming:
                async for event in agent.stream("go"):
                    assert event is not None
            else:
                await agent.arun("go")
        except AgentError:
            pass

    asyncio.run(go())
    assert counter.calls <= 5  # the per-tool cap holds whatever the model asks
