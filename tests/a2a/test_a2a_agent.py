"""A remote A2A agent inside kanawa agents, against a real A2A server process (``a2a-sdk`` server
components) reached with the official ``a2a-sdk`` client: as a tool, as a handoff target whose streamed
artifacts arrive as the target's text deltas, and every failure as an error result the calling model
sees while its run goes on — with the bearer token nowhere in what the run shows."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from kanawa import Agent
from kanawa.a2a import A2AAgent
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.loop.events import HandoffEnded, HandoffStarted, NestedEvent, ToolResultStep
from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE, timeout_message
from kanawa.trace import Tracer
from kanawa.types import AssistantMessage, TextDelta, ToolCall
from tests.a2a.conftest import REPO, TOKEN, free_port

pytestmark = pytest.mark.timeout(240)  # the server process imports the SDK: slow on a loaded machine


def _calls_once(tool_name: str, arguments: dict[str, Any]) -> FunctionLLM:
    """A model that calls ``tool_name`` once, then answers with what the tool returned."""

    def answer(request: ModelRequest) -> Script:
        if not request.tool_results:
            return AssistantMessage(tool_calls=(ToolCall("call_1", tool_name, json.dumps(arguments)),))
        result = request.tool_results[-1]
        return f"{'error' if result.is_error else 'ok'}: {result.text}"

    return FunctionLLM(answer)


async def _run_with_tool(remote: A2AAgent, text: str) -> tuple[str, list[object]]:
    boss = Agent(
        "boss", "Delegate.", tools=[remote.as_tool()], model=_calls_once(remote.name, {"input": text})
    )
    events: list[object] = []
    runner = boss.stream(text)
    async for event in runner:
        events.append(event)
    return runner.result.text, events


async def test_remote_agent_as_a_tool_answers_the_calling_model(remote_url: str) -> None:
    remote = A2AAgent(remote_url, name="echo", description="Repeats things.", bearer_token=TOKEN)
    text, _ = await _run_with_tool(remote, "hello there")
    assert text == "ok: remote heard: hello there"


async def test_handoff_to_remote_agent_streams_its_artifacts_as_target_deltas(remote_url: str) -> None:
    remote = A2AAgent(remote_url, name="echo", description="Repeats things.", bearer_token=TOKEN)
    triage = Agent(
        "triage",
        "Route.",
        handoffs=[remote],
        model=_calls_once("transfer_to_echo", {"message": "say it back"}),
    )
    runner = triage.stream("please hand me over")
    events = [event async for event in runner]
    deltas = [
        e.event.text
        for e in events
        if isinstance(e, NestedEvent) and e.agent == "echo" and isinstance(e.event, TextDelta)
    ]
    assert len(deltas) == len(["remote", "heard:", "say", "it", "back"])  # one delta per streamed chunk
    assert "".join(deltas) == "remote heard: say it back"
    started = [e for e in events if isinstance(e, HandoffStarted)]
    ended = [e for e in events if isinstance(e, HandoffEnded)]
    assert [(s.source, s.target) for s in started] == [("triage", "echo")]
    assert ended[0].text == "remote heard: say it back"
    assert events.index(started[0]) < events.index(next(e for e in events if isinstance(e, NestedEvent)))
    assert runner.result.text == "ok: remote heard: say it back"


async def test_remote_agent_runs_on_its_own(remote_url: str) -> None:
    remote = A2AAgent(remote_url, name="echo", bearer_token=TOKEN)
    result = await remote.arun("just me")
    assert result.text == "remote heard: just me"
    assert result.usage.requests == 1


def _error_result(events: list[object]) -> ToolResultStep:
    results = [e for e in events if isinstance(e, ToolResultStep)]
    assert len(results) == 1
    return results[0]


async def test_timeout_is_an_error_result_and_the_run_goes_on(remote_url: str) -> None:
    remote = A2AAgent(remote_url, name="echo", bearer_token=TOKEN, timeout=1.0)
    text, events = await _run_with_tool(remote, "slow please")
    step = _error_result(events)
    assert step.result.is_error
    assert text == f"error: {timeout_message(1.0)}"  # the tool's timeout is the agent's


async def test_handoff_timeout_is_an_error_result_and_the_run_goes_on(remote_url: str) -> None:
    remote = A2AAgent(remote_url, name="echo", bearer_token=TOKEN, timeout=1.0)
    triage = Agent(
        "triage", "Route.", handoffs=[remote], model=_calls_once("transfer_to_echo", {"message": "slow"})
    )
    runner = triage.stream("go")
    events = [event async for event in runner]
    step = _error_result(events)
    assert step.result.is_error
    assert "did not answer within 1 s" in (step.result.detail or "")
    assert runner.result.text == f"error: {EXECUTION_ERROR_MESSAGE}"


async def test_unauthorized_is_an_error_result_that_leaks_no_key(remote_url: str) -> None:
    wrong = "a2a-wrong-token-0c4f9a1b2e3d5f67"
    records: list[str] = []
    tracer = Tracer(sinks=[lambda event: records.append(repr(event))])
    remote = A2AAgent(remote_url, name="echo", bearer_token=wrong)
    boss = Agent(
        "boss",
        "Delegate.",
        tools=[remote.as_tool()],
        model=_calls_once("echo", {"input": "hi"}),
        tracer=tracer,
    )
    runner = boss.stream("hi")
    events = [event async for event in runner]
    step = _error_result(events)
    assert step.result.is_error
    assert "refused the credentials" in (step.result.detail or "")
    assert "401" in (step.result.detail or "")
    shown = repr(events) + repr(runner.result.messages) + "".join(records) + (step.result.detail or "")
    assert wrong not in shown
    assert TOKEN not in shown
    assert runner.result.text == f"error: {EXECUTION_ERROR_MESSAGE}"


async def test_server_down_is_an_error_result(remote_url: str) -> None:
    remote = A2AAgent(f"http://127.0.0.1:{free_port()}/", name="echo", bearer_token=TOKEN, connect_timeout=2)
    text, events = await _run_with_tool(remote, "anyone there?")
    step = _error_result(events)
    assert step.result.is_error
    assert "could not be reached" in (step.result.detail or "")
    assert text == f"error: {EXECUTION_ERROR_MESSAGE}"


async def test_failed_remote_task_is_an_error_result(remote_url: str) -> None:
    remote = A2AAgent(remote_url, name="echo", bearer_token=TOKEN)
    text, events = await _run_with_tool(remote, "fail now")
    step = _error_result(events)
    assert "failed: the remote agent broke" in (step.result.detail or "")
    assert text == f"error: {EXECUTION_ERROR_MESSAGE}"


def test_bad_url_and_timeouts_are_refused_up_front() -> None:
    with pytest.raises(ValueError, match="http"):
        A2AAgent("ftp://example.invalid/", name="x")
    with pytest.raises(ValueError, match="timeout"):
        A2AAgent("http://127.0.0.1:1/", name="x", timeout=0)


def test_the_documented_example_runs_against_a_real_server(remote_url: str) -> None:
    """``examples/a2a_client.py`` (docs/a2a.md's example) against the A2A server process."""
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "a2a_client.py"), remote_url, TOKEN],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "streamed: remote heard: When was the Eiffel Tower built?",
        "tool result: remote heard: Who designed it?",
    ]
