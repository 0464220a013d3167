"""The transport-neutral core in process (``AgentToolset``): tool names, output shapes, answers that
end without a final response, and the run each call starts."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.loop.config import AgentConfiguration
from kanawa.mcp_server import AgentToolset, UnknownAgentToolError
from kanawa.server.http.protocols.framing import typed_dict
from kanawa.server.http.protocols.mcp.progress import McpProgress, Outcome
from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE
from kanawa.types import AssistantMessage, ToolCall


@tool(requires_approval=True)
def send(to: str) -> str:
    """Send something (needs a person's approval).

    Args:
        to: who
    """
    return f"sent to {to}"


def _sends(request: ModelRequest) -> Script:
    return AssistantMessage(tool_calls=(ToolCall("c1", "send", '{"to": "teacher"}'),))


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def _echo(name: str, **options: Any) -> Agent[Any, Any]:
    return Agent(name, "Repeat.", model=FunctionLLM(lambda r: r.last_user_text), **options)


async def test_a_run_stopped_for_approval_is_an_error_result_naming_the_tool() -> None:
    mailer = Agent("mailer", "Send things.", tools=[send], model=FunctionLLM(_sends))
    result = await AgentToolset({"mailer": mailer}).call("mailer", {"input": "send it"})
    assert result.is_error
    assert "approval of send" in _text(result)


async def test_a_run_out_of_steps_is_an_error_result() -> None:
    looping = Agent(
        "looping",
        "Loop.",
        tools=[send],
        model=FunctionLLM(
            lambda r: AssistantMessage(tool_calls=(ToolCall(f"c{len(r.messages)}", "nope", "{}"),))
        ),
        config=AgentConfiguration(max_steps=2),
    )
    result = await AgentToolset({"looping": looping}).call("looping", {"input": "go"})
    assert result.is_error
    limit = "MaxStepsExceeded: the agent loop reached its limit of 2 steps without a final answer"
    assert _text(result) == f"{EXECUTION_ERROR_MESSAGE} ({limit})"  # the cause, as over HTTP


async def test_a_custom_start_run_is_what_a_call_runs() -> None:
    started: list[tuple[str, str]] = []

    def start(agent: Agent[Any, Any], text: str) -> Any:
        started.append((agent.name, text))
        return agent.stream(text.upper())

    result = await AgentToolset({"echo": _echo("echo")}, start_run=start).call("echo", {"input": "quiet"})
    assert started == [("echo", "quiet")]
    assert _text(result) == "QUIET"


def test_names_are_made_valid_tool_names_and_must_stay_apart() -> None:
    tools = AgentToolset({"essay coach!": _echo("essay coach!")}).list_tools()
    assert [t.name for t in tools] == ["essay_coach"]
    assert tools[0].title == "essay coach!"
    with pytest.raises(ValueError, match="share the tool name"):
        AgentToolset({"a b": _echo("a b"), "a_b": _echo("a_b")})


async def test_an_unknown_tool_raises() -> None:
    with pytest.raises(UnknownAgentToolError):
        await AgentToolset({"echo": _echo("echo")}).call("other", {"input": "x"})


def test_a_dynamic_only_agent_is_described_by_its_name() -> None:
    agent = Agent("dyn", lambda ctx: "be brief", model=FunctionLLM(lambda r: "ok"))
    assert AgentToolset({"dyn": agent}).list_tools()[0].description == "The kanawa agent 'dyn'."


def test_progress_from_chunks_that_arrived_together_joins_one_agents_text() -> None:
    def chunk(kind: str, agent: str = "boss", **data: object) -> dict[str, Any]:
        return {"type": kind, "agent": agent, "data": data}

    chunks = [
        chunk("delta", text="Hel"),
        chunk("delta", reasoning="(thinking)"),
        chunk("delta", text="lo"),
        chunk("tool_call", name="look_up", id="c1", arguments="{}"),
        chunk("tool_response", name="look_up", call_id="c1", is_error=True),
        chunk("handoff_start", target="helper", source="boss", depth=1),
        chunk("delta", "helper", text="a", depth=1),
        chunk("delta", "helper", text="b", depth=1),
        chunk("handoff_end", target="helper", source="boss", depth=1),
        chunk("delta", text=" again"),
        chunk("trace", name="llm_call"),
        chunk("done", status="completed"),
    ]
    assert _progress(chunks, top_agent="boss") == [
        "Hello",
        "calling look_up",
        "look_up failed",
        "handed over to helper",
        "[helper] ab",
        "back from helper",
        " again",
    ]


def test_a_tool_call_is_told_when_it_starts_and_not_again_when_it_is_recorded() -> None:
    def chunk(kind: str, **data: object) -> dict[str, Any]:
        return {"type": kind, "agent": "boss", "data": data}

    chunks = [
        chunk("delta", text="Let me look."),
        chunk("tool_call_start", index=0, id="c1", name="look_up"),
        chunk("tool_call_delta", index=0, id="c1", delta="{}"),
    ]
    assert _progress(chunks, top_agent="boss") == ["Let me look.", "calling look_up"]
    recorded = [
        chunk("tool_call", step=1, id="c1", name="look_up", arguments="{}"),
        chunk("tool_response", step=1, call_id="c1", name="look_up", content="notes", is_error=False),
    ]
    assert _progress([*chunks, *recorded], top_agent="boss") == [
        "Let me look.",
        "calling look_up",
        "look_up answered",
    ]


def _progress(chunks: list[dict[str, Any]], *, top_agent: str) -> list[str]:
    """The messages of chunks that arrived together, as an MCP call over HTTP reports them."""
    progress = McpProgress(top_agent, Outcome())
    for seq, chunk in enumerate(chunks, 1):
        progress.take(typed_dict({**chunk, "seq": seq}))
    return progress.messages()
