"""Seed 002 §3-1 ``BaseAgent``: construction, arun (joins stream), stream, run (sync), history, hooks."""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import dataclass
from typing import Any, Protocol

import pytest
from pydantic import BaseModel

import kanawa
from kanawa.agents import Agent
from kanawa.context import RunContext
from kanawa.llm.settings import ModelSettings
from kanawa.llm.testing import ModelRequest, ScriptedLLM, TestLLM
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.errors import MaxStepsExceeded
from kanawa.loop.events import FinalResponse
from kanawa.loop.result import RunResult
from kanawa.tools.decorator import tool
from kanawa.trace.events import Tracer
from kanawa.trace.memory import InMemoryTraceSink
from kanawa.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolMessage,
    UserMessage,
)


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


class Answer(BaseModel):
    value: int
    explanation: str


def _calc_script() -> list[object]:
    return [
        AssistantMessage(tool_calls=(ToolCall("c1", "add", '{"a": 2, "b": 3}'),)),
        "2 + 3 = 5",
        '{"value": 5, "explanation": "2 + 3"}',
    ]


def test_public_names_live_where_kanawa_maps_them() -> None:
    assert kanawa.Agent is Agent
    assert kanawa.RunResult is RunResult
    assert kanawa.AgentConfiguration is AgentConfiguration


def test_tools_accept_plain_functions_and_tool_objects() -> None:
    @tool
    def shout(text: str) -> str:
        """Shout.

        Args:
            text: what to shout
        """
        return text.upper()

    agent = Agent("a", "x", tools=[add, shout], model="test")
    assert [t.name for t in agent.tools] == ["add", "shout"]
    assert agent.tools[0].parameters["required"] == ["a", "b"]


def test_invalid_construction_fails_early() -> None:
    with pytest.raises(ValueError, match="name"):
        Agent("", model="test")
    with pytest.raises(ValueError, match="unique"):
        Agent("a", tools=[add, add], model="test")
    with pytest.raises(TypeError):
        Agent("a", tools=[42], model="test")  # type: ignore[list-item]


def test_name_and_instructions_are_immutable_model_is_mutable() -> None:
    agent = Agent("a", "be nice", model="test")
    with pytest.raises(AttributeError):
        agent.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        agent.instructions = "x"  # type: ignore[misc]
    replacement = ScriptedLLM(["hi"])
    agent.model = replacement
    assert agent.model is replacement


def test_model_string_is_resolved_lazily() -> None:
    agent = Agent("a", model="nonexistent-provider:model")
    with pytest.raises(Exception, match="unknown model string"):
        _ = agent.model
    assert isinstance(Agent("a", model="test").model, TestLLM)


async def test_run_with_tools_and_structured_output_model() -> None:
    llm = ScriptedLLM(_calc_script())  # type: ignore[arg-type]
    agent = Agent("calc", "Answer with arithmetic.", tools=[add], model=llm, output_type=Answer)
    result = await agent.arun("What is 2 + 3?")
    assert result.output == Answer(value=5, explanation="2 + 3")
    assert result.usage.requests == 3
    first = llm.requests[0].messages
    assert first == (SystemMessage("Answer with arithmetic."), UserMessage("What is 2 + 3?"))
    assert [s.kind for s in result.steps] == ["tool_call", "tool_result", "thinking", "final_response"]


async def test_stream_yields_deltas_and_steps_and_exposes_the_result() -> None:
    llm = ScriptedLLM(_calc_script())  # type: ignore[arg-type]
    agent = Agent("calc", tools=[add], model=llm, output_type=Answer)
    run = agent.stream("What is 2 + 3?")
    kinds = [event.kind async for event in run]
    assert "tool_call_args_delta" in kinds
    assert "text_delta" in kinds
    assert kinds[-1] == "final_response"
    assert run.result.output == Answer(value=5, explanation="2 + 3")
    assert all(r.streamed for r in llm.requests)


async def test_run_stream_flag_and_plain_run_give_the_same_result() -> None:
    plain = await Agent("c", tools=[add], model=ScriptedLLM(_calc_script()), output_type=Answer).arun("q")  # type: ignore[arg-type]
    streamed_llm = ScriptedLLM(_calc_script())  # type: ignore[arg-type]
    streamed = await Agent("c", tools=[add], model=streamed_llm, output_type=Answer).arun("q", stream=True)
    assert plain.output == streamed.output
    assert list(plain.messages) == list(streamed.messages)
    assert all(r.streamed for r in streamed_llm.requests)


def test_sync_run_runs_its_own_loop() -> None:
    result = Agent("a", model=ScriptedLLM(["hello"])).run("hi")
    assert result.output == "hello"


async def test_sync_run_inside_a_running_loop_names_its_async_twin() -> None:
    agent = Agent("a", model=ScriptedLLM(["hello"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no coroutine is made and left un-awaited
        with pytest.raises(
            RuntimeError, match=r"Agent\.run\(\) cannot be called .* use `await agent\.arun\(\.\.\.\)`"
        ):
            agent.run("hi")


async def test_history_continues_a_conversation_without_doubling_the_system_message() -> None:
    llm = ScriptedLLM(["first answer", "second answer"])
    agent = Agent("a", "sys", model=llm)
    first = await agent.arun("one")
    second = await agent.arun("two", history=first.messages)
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert llm.requests[1].messages[0] == SystemMessage("sys")
    assert second.output == "second answer"


async def test_user_input_as_messages_and_agent_without_instructions() -> None:
    llm = ScriptedLLM(["ok"])
    messages: list[Message] = [SystemMessage("custom system"), UserMessage("hello")]
    await Agent("a", model=llm).arun(messages)
    assert llm.requests[0].messages == tuple(messages)


async def test_instructions_are_plain_unless_prompt_policies_is_on() -> None:
    plain_llm, policy_llm = ScriptedLLM(["x"]), ScriptedLLM(["x"])
    await Agent("a", "Base.", model=plain_llm).arun("q")
    await Agent("a", "Base.", model=policy_llm, prompt_policies=True).arun("q")
    assert plain_llm.requests[0].messages[0] == SystemMessage("Base.")
    with_policies = policy_llm.requests[0].messages[0]
    assert isinstance(with_policies, SystemMessage)
    assert with_policies.content.startswith("Base.")
    assert len(with_policies.content) > len("Base.")


async def test_settings_are_merged_per_run() -> None:
    seen: list[ModelSettings | None] = []

    def check(request: ModelRequest) -> None:
        seen.append(request.settings)

    llm = ScriptedLLM(["a"], checks=[check])
    agent = Agent("a", model=llm, settings=ModelSettings(temperature=0.1, max_output_tokens=50))
    await agent.arun("q", settings=ModelSettings(max_output_tokens=99))
    assert seen[0] == ModelSettings(temperature=0.1, max_output_tokens=99)


async def test_config_and_tracer_reach_the_loop() -> None:
    sink = InMemoryTraceSink()
    llm = ScriptedLLM(
        [AssistantMessage(tool_calls=(ToolCall(f"c{i}", "add", f'{{"a": {i}, "b": 1}}'),)) for i in range(3)]
    )
    agent = Agent(
        "calc", tools=[add], model=llm, config=AgentConfiguration(max_steps=2), tracer=Tracer(sinks=[sink])
    )
    with pytest.raises(MaxStepsExceeded):
        await agent.arun("loop")
    assert sink.events[0].event == "agent_start"
    assert sink.events[0].agent == "calc"
    assert sink.events[-1].event == "agent_end"


async def test_subclass_hooks_preprocess_and_postprocess() -> None:
    class Polite(Agent[str]):
        async def _preprocess_messages(
            self, messages: list[Message], context: RunContext[None]
        ) -> list[Message]:
            return [*messages, UserMessage(f"Please be polite ({context.agent_name}).")]

        async def _postprocess_response(self, response: FinalResponse[str]) -> FinalResponse[str]:
            from dataclasses import replace

            return replace(response, output=response.output + " (checked)")

    llm = ScriptedLLM(["fine"])
    result = await Polite("p", model=llm).arun("hi")
    assert llm.requests[0].messages[-1] == UserMessage("Please be polite (p).")
    assert result.output == "fine (checked)"


# ------------------------------------------------------------------------- run context and deps


@dataclass
class Customer:
    name: str
    tier: str = "basic"


def discount(ctx: RunContext[Customer], price: int) -> str:
    """Price after the customer's discount.

    Args:
        price: the list price
    """
    rate = 10 if ctx.deps.tier == "gold" else 0
    return f"{ctx.agent_name}/{ctx.step}: {ctx.deps.name} pays {price * (100 - rate) // 100}"


def _discount_script() -> list[object]:
    return [AssistantMessage(tool_calls=(ToolCall("c1", "discount", '{"price": 200}'),)), "done"]


def _tool_texts(result: RunResult[Any]) -> list[str]:
    return [m.text for m in result.messages if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("how", ["run", "run_stream", "stream"])
async def test_run_and_stream_pass_deps_to_tools(how: str) -> None:
    llm = ScriptedLLM(_discount_script())  # type: ignore[arg-type]
    agent = Agent("shop", tools=[discount], model=llm, deps_type=Customer)
    deps = Customer("Aiko", "gold")
    if how == "stream":
        runner = agent.stream("price?", deps=deps)
        async for _ in runner:
            pass
        assert runner.context.deps is deps
        result = runner.result
    else:
        result = await agent.arun("price?", stream=how == "run_stream", deps=deps)
    assert _tool_texts(result) == ["shop/1: Aiko pays 180"]
    (spec,) = llm.requests[0].tools
    assert set(spec.parameters["properties"]) == {"price"}


def test_sync_run_passes_deps_to_tools() -> None:
    agent = Agent("shop", tools=[discount], model=ScriptedLLM(_discount_script()), deps_type=Customer)  # type: ignore[arg-type]
    result = agent.run("price?", deps=Customer("Ken"))
    assert _tool_texts(result) == ["shop/1: Ken pays 200"]


async def test_deps_that_do_not_fit_deps_type_are_a_clear_error_before_any_request() -> None:
    llm = ScriptedLLM(["never"])
    agent = Agent("shop", tools=[discount], model=llm, deps_type=Customer)
    with pytest.raises(TypeError, match=r"agent 'shop' declares deps_type=Customer; .* not a str"):
        await agent.arun("q", deps="Aiko")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not nothing"):
        await agent.arun("q")
    with pytest.raises(TypeError, match="deps_type=Customer"):
        agent.stream("q", deps=42)  # type: ignore[arg-type]
    assert llm.requests == []


async def test_deps_type_checks_unions_and_generic_origins_and_skips_what_isinstance_cannot() -> None:
    class HasName(Protocol):
        name: str

    optional = Agent("a", model=ScriptedLLM(["x", "y"]), deps_type=Customer | None)  # type: ignore[arg-type]
    await optional.arun("q")
    await optional.arun("q", deps=Customer("Aiko"))
    table = Agent("a", model=ScriptedLLM(["x"]), deps_type=dict[str, int])
    await table.arun("q", deps={"a": 1})
    with pytest.raises(TypeError, match=r"deps_type=dict; .* not a list"):
        await table.arun("q", deps=[1])  # type: ignore[arg-type]
    unchecked = Agent("a", model=ScriptedLLM(["x"]), deps_type=HasName)  # type: ignore[type-abstract]
    await unchecked.arun("q", deps=Customer("Aiko"))
    untyped = Agent("a", model=ScriptedLLM(["x"]))
    await untyped.arun("q", deps=Customer("Aiko"))  # type: ignore[arg-type]


async def test_dynamic_instructions_read_deps_once_per_run_before_the_first_request() -> None:
    calls: list[int] = []

    def instructions(ctx: RunContext[Customer]) -> str:
        calls.append(ctx.step)
        return f"You serve {ctx.deps.name} ({ctx.deps.tier})."

    llm = ScriptedLLM(_discount_script())  # type: ignore[arg-type]
    agent = Agent("shop", instructions, tools=[discount], model=llm, deps_type=Customer)
    result = await agent.arun("price?", deps=Customer("Aiko", "gold"))
    assert calls == [0]  # once, before the first request, over a two-request run
    assert [r.messages[0] for r in llm.requests] == [SystemMessage("You serve Aiko (gold).")] * 2
    assert result.messages[0] == SystemMessage("You serve Aiko (gold).")
    assert agent.instructions == ""


async def test_decorated_async_instructions_follow_the_static_ones_and_the_policies_wrap_them() -> None:
    llm = ScriptedLLM(["a", "b"])
    agent = Agent("shop", "Be brief.", model=llm, deps_type=Customer)

    @agent.add_instructions
    async def who(ctx: RunContext[Customer]) -> str:
        await asyncio.sleep(0)
        return f"The customer is {ctx.deps.name}."

    @agent.add_instructions
    def nothing(ctx: RunContext[Customer]) -> str:
        return "  "  # blank text adds nothing

    await agent.arun("q", deps=Customer("Ken"))
    assert llm.requests[0].messages[0] == SystemMessage("Be brief.\n\nThe customer is Ken.")
    assert agent.system_instruction == "Be brief."

    policy_llm = ScriptedLLM(["a"])
    with_policies = Agent("shop", who, model=policy_llm, prompt_policies=True, deps_type=Customer)
    await with_policies.arun("q", deps=Customer("Mei"))
    system = policy_llm.requests[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("The customer is Mei.\n\n")
    assert len(system.content) > 200  # the four GPT-5 policies follow


async def test_dynamic_instructions_own_the_system_slot_of_a_continued_conversation() -> None:
    llm = ScriptedLLM(["again", "silent"])
    agent = Agent("a", lambda ctx: f"Hello {ctx.deps}.", model=llm)
    history: list[Message] = [SystemMessage("old system"), UserMessage("hi"), AssistantMessage(text="hello")]
    await agent.arun("again", history=history, deps="Aiko")  # type: ignore[arg-type]
    assert [m.role for m in llm.requests[0].messages] == ["system", "user", "assistant", "user"]
    assert llm.requests[0].messages[0] == SystemMessage("Hello Aiko.")
    silent = Agent("a", lambda ctx: "", model=llm)
    await silent.arun("again", history=history)
    assert llm.requests[1].messages[0] == SystemMessage("old system")  # blank instructions keep it


async def test_instructions_that_fail_or_return_no_text_end_the_run_with_that_error() -> None:
    def broken(ctx: RunContext[None]) -> str:
        raise LookupError("no profile")

    llm = ScriptedLLM(["never"])
    with pytest.raises(LookupError, match="no profile"):
        await Agent("a", broken, model=llm).arun("q")
    with pytest.raises(TypeError, match=r"instructions function .* returned int, not str"):
        await Agent("a", lambda ctx: 42, model=llm).arun("q")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="function of the run context"):
        Agent("a", model=llm).add_instructions("not callable")  # type: ignore[arg-type]
    assert llm.requests == []


async def test_concurrent_runs_of_one_agent_with_different_deps_stay_apart() -> None:
    from kanawa.llm.testing import FunctionLLM

    async def answer(request: ModelRequest) -> AssistantMessage | str:
        await asyncio.sleep(0)
        if not request.tool_results:
            return AssistantMessage(tool_calls=(ToolCall("c1", "discount", '{"price": 100}'),))
        system = request.messages[0]
        assert isinstance(system, SystemMessage)
        return f"{system.content} | {request.tool_results[0].text}"

    agent = Agent(
        "shop",
        lambda ctx: f"for {ctx.deps.name}",
        tools=[discount],
        model=FunctionLLM(answer),
        deps_type=Customer,
    )
    names = [f"user{i}" for i in range(6)]
    results = await asyncio.gather(*(agent.arun("q", deps=Customer(name)) for name in names))
    assert [r.output for r in results] == [f"for {name} | shop/1: {name} pays 100" for name in names]


async def test_concurrent_runs_of_one_agent_are_independent() -> None:
    from kanawa.llm.testing import FunctionLLM

    async def echo(request: ModelRequest) -> str:
        await asyncio.sleep(0)
        return f"echo {request.last_user_text}"

    agent = Agent("a", model=FunctionLLM(echo))
    results = await asyncio.gather(*(agent.arun(f"q{i}") for i in range(5)))
    assert [r.output for r in results] == [f"echo q{i}" for i in range(5)]
    assert len({r.run_id for r in results}) == 5


async def test_stream_deltas_are_text_deltas_for_a_plain_answer() -> None:
    agent = Agent("a", model=ScriptedLLM(["a fairly long answer text"]))
    events = [e async for e in agent.stream("q")]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "a fairly long answer text"
