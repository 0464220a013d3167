"""The run context (``kanawa/context.py``) as the loop hands it to tools: deps, step, usage, messages,
agent name, run id and model name; never in the schema the model sees; one per run."""

from __future__ import annotations

import asyncio
from dataclasses import FrozenInstanceError, dataclass
from typing import Any

import pytest

import kanawa
from kanawa.context import MessagesView, RunContext
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.testing import ScriptedLLM
from kanawa.loop.runner import AgentLoopRunner
from kanawa.loop.spec import RunSpec
from kanawa.tools.decorator import tool
from kanawa.types import Message, ToolMessage, Usage, UserMessage
from tests.llm.openai_chat.wire import completion
from tests.loop.helpers import call, conversation, drain, text_response, tools_response
from tests.wire.server import WireServer


@dataclass
class Deps:
    user_id: str
    seen: list[str]


@dataclass(frozen=True)
class Seen:
    deps: object
    step: int
    usage: Usage
    agent_name: str
    run_id: str
    model_name: str
    messages: int


SEEN: list[Seen] = []


def _record(ctx: RunContext[Any]) -> None:
    SEEN.append(
        Seen(ctx.deps, ctx.step, ctx.usage, ctx.agent_name, ctx.run_id, ctx.model_name, len(ctx.messages))
    )


@tool
def whoami(ctx: RunContext[Deps], greeting: str) -> str:
    """Greet the current user.

    Args:
        ctx: the run context (never sent to the model)
        greeting: how to greet
    """
    _record(ctx)
    return f"{greeting}, {ctx.deps.user_id}"


@tool
async def whoami_async(ctx: RunContext[Deps], greeting: str) -> str:
    """Greet the current user, asynchronously.

    Args:
        ctx: the run context
        greeting: how to greet
    """
    await asyncio.sleep(0)
    _record(ctx)
    return f"{greeting}, {ctx.deps.user_id}"


@pytest.fixture(autouse=True)
def _clear_seen() -> None:
    SEEN.clear()


def test_run_context_is_exported_as_kanawa_run_context() -> None:
    assert kanawa.RunContext is RunContext


@pytest.mark.parametrize("streaming", [False, True])
async def test_sync_and_async_tools_receive_deps_step_usage_and_names(streaming: bool) -> None:
    deps = Deps("u-42", [])
    llm = ScriptedLLM(
        [
            tools_response(call("whoami", '{"greeting": "hi"}', "c1")),
            tools_response(call("whoami_async", '{"greeting": "hello"}', "c2")),
            text_response("done"),
        ]
    )
    runner = AgentLoopRunner(
        RunSpec(llm, tools=[whoami, whoami_async], stream=streaming, agent_name="greeter"),
        conversation(),
        run_id="run-1",
        deps=deps,
    )
    _, result = await drain(runner)
    assert result.output == "done"
    first, second = SEEN
    assert first.deps is deps
    assert second.deps is deps
    assert (first.step, second.step) == (1, 2)
    assert (first.usage.requests, second.usage.requests) == (1, 2)  # the request that asked is counted
    assert second.usage.input_tokens == 20
    assert {(s.agent_name, s.run_id, s.model_name) for s in SEEN} == {("greeter", "run-1", "scripted")}
    # system, user, assistant(call) when the first tool runs; two more messages before the second
    assert (first.messages, second.messages) == (3, 5)
    tool_texts = [m.text for m in result.messages if isinstance(m, ToolMessage)]
    assert tool_texts == ["hi, u-42", "hello, u-42"]


async def test_the_context_parameter_is_not_in_the_schema_the_model_is_sent() -> None:
    llm = ScriptedLLM([tools_response(call("whoami", '{"greeting": "hi"}')), text_response("ok")])
    await drain(AgentLoopRunner(RunSpec(llm, tools=[whoami]), conversation(), deps=Deps("u", [])))
    (spec,) = llm.requests[0].tools
    assert spec.parameters["properties"] == {"greeting": {"type": "string", "description": "how to greet"}}
    assert spec.parameters["required"] == ["greeting"]
    assert "ctx" not in repr(spec.parameters)


async def test_the_context_parameter_is_not_on_the_wire(wire_server: WireServer) -> None:
    adapter = OpenAIChatAdapter(
        "qwen2.5-7b-instruct", api_key="sk-local", base_url=f"{wire_server.base_url}/v1", timeout=5.0
    )
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "whoami", "arguments": '{"greeting":"hi"}'}}
    ]
    wire_server.enqueue(
        completion({"content": None, "tool_calls": calls}, finish="tool_calls"),
        completion({"content": "done"}),
    )
    runner = AgentLoopRunner(RunSpec(adapter, tools=[whoami]), conversation(), deps=Deps("u-7", []))
    _, result = await drain(runner)
    assert result.output == "done"
    first, second = (r.json() for r in wire_server.requests)
    (sent,) = first["tools"]
    assert sent["function"]["name"] == "whoami"
    assert set(sent["function"]["parameters"]["properties"]) == {"greeting"}
    assert "ctx" not in str(first)
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "hi, u-7"}
    assert SEEN[0].model_name == "qwen2.5-7b-instruct"


async def test_a_run_without_deps_gives_a_context_with_deps_none() -> None:
    @tool
    def step_of(ctx: RunContext) -> str:  # type: ignore[type-arg]
        """Which step is this."""
        return f"deps={ctx.deps} step={ctx.step}"

    llm = ScriptedLLM([tools_response(call("step_of")), text_response("ok")])
    _, result = await drain(AgentLoopRunner(RunSpec(llm, tools=[step_of]), conversation()))
    assert [m.text for m in result.messages if isinstance(m, ToolMessage)] == ["deps=None step=1"]


async def test_one_context_per_run_whose_messages_view_is_live_and_read_only() -> None:
    contexts: list[RunContext[Any]] = []
    views: list[object] = []

    @tool
    def grab(ctx: RunContext[None]) -> str:
        """Keep the context."""
        contexts.append(ctx)
        views.append(ctx.messages)
        return str(len(ctx.messages))

    llm = ScriptedLLM(
        [
            tools_response(call("grab", "{}", "a"), call("grab", '{"x": 1}', "b")),
            tools_response(call("grab", "{}", "c")),
            text_response("ok"),
        ]
    )
    runner = AgentLoopRunner(RunSpec(llm, tools=[grab]), conversation())
    _, result = await drain(runner)
    assert len(contexts) == 2  # call "b" has an unknown argument: it failed validation and never ran
    assert all(ctx is runner.context for ctx in contexts)
    assert all(view is views[0] for view in views)  # no new view (and no copy) per step
    view = contexts[0].messages
    assert isinstance(view, MessagesView)
    assert len(view) == len(result.messages)  # live: it follows the run to its end
    assert list(view) == list(result.messages)
    assert view[-1] == result.messages[-1]
    assert view[:2] == tuple(result.messages[:2])
    assert not hasattr(view, "append")
    assert not hasattr(view, "__setitem__")
    with pytest.raises(FrozenInstanceError):
        contexts[0].deps = "other"  # type: ignore[misc]


async def test_the_context_follows_a_conversation_replaced_by_preprocessing() -> None:
    async def replace_all(messages: list[Message], ctx: RunContext[Any]) -> list[Message]:
        return [UserMessage(f"rewritten for {ctx.deps}")]

    lengths: list[int] = []

    @tool
    def count(ctx: RunContext[str]) -> str:
        """Count the messages."""
        lengths.append(len(ctx.messages))
        return ctx.messages[0].text

    llm = ScriptedLLM([tools_response(call("count")), text_response("ok")])
    runner = AgentLoopRunner(
        RunSpec(llm, tools=[count], preprocess=replace_all), conversation(), deps="alice"
    )
    _, result = await drain(runner)
    assert lengths == [2]
    assert result.messages[2].text == "rewritten for alice"


async def test_concurrent_runs_never_see_each_others_deps() -> None:
    @tool
    async def remember(ctx: RunContext[Deps], note: str) -> str:
        """Remember a note for the current user.

        Args:
            note: the note
        """
        for _ in range(3):
            await asyncio.sleep(0)  # interleave with the other runs
        ctx.deps.seen.append(f"{ctx.deps.user_id}:{note}:{ctx.run_id}")
        return ctx.deps.user_id

    def runner_for(index: int, deps: Deps) -> AgentLoopRunner[str]:
        script = [tools_response(call("remember", f'{{"note": "n{step}"}}', f"c{step}")) for step in range(3)]
        llm = ScriptedLLM([*script, text_response("ok")])
        return AgentLoopRunner(RunSpec(llm, tools=[remember]), conversation(), run_id=f"r{index}", deps=deps)

    all_deps = [Deps(f"user{i}", []) for i in range(8)]
    runners = [runner_for(i, deps) for i, deps in enumerate(all_deps)]
    await asyncio.gather(*(drain(r) for r in runners))
    for index, deps in enumerate(all_deps):
        assert deps.seen == [f"user{index}:n{step}:r{index}" for step in range(3)]
        answers = [m.text for m in runners[index].messages if isinstance(m, ToolMessage)]
        assert answers == [f"user{index}"] * 3


def test_a_context_made_by_hand_reads_an_empty_run() -> None:
    ctx = RunContext(Deps("u", []))
    assert (ctx.step, ctx.usage, len(ctx.messages), list(ctx.messages)) == (0, Usage(), 0, [])
    assert (ctx.agent_name, ctx.run_id, ctx.model_name) == ("", "", "")
    assert whoami(ctx, "hey") == "hey, u"  # a context-taking tool called in plain code
    assert repr(ctx) == "RunContext(deps=Deps(user_id='u', seen=[]), agent_name='', run_id='', model_name='')"


async def test_a_finished_run_is_freed_without_the_collector_and_its_context_keeps_its_last_state() -> None:
    """The runner and its context refer to each other while the run goes; once it has ended the
    context keeps the run's last state instead, so nothing of the run waits for a full collection."""
    import gc

    @tool
    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: one
            b: other
        """
        return a + b

    agent = kanawa.Agent(
        "calc",
        "Add.",
        tools=[add],
        model=ScriptedLLM([tools_response(call("add", '{"a": 2, "b": 3}')), text_response("5")]),
    )
    gc.collect()
    gc.disable()
    try:
        runner = agent.stream("2 + 3?")
        await drain(runner)
        context = runner.context
        result = runner.result
        assert context.step == 2
        assert context.usage == result.usage
        assert list(context.messages) == list(result.messages)
        context.emit("late")  # the run has ended: dropped, not an error
        del runner, context
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [type(thing).__name__ for thing in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert "AgentLoopRunner" not in left, left
    assert "RunContext" not in left, left
