"""A kanawa agent in this process hands off to, and calls as a tool, a kanawa agent that another
``kanawa serve`` process serves over A2A — both ends kanawa, the wire the official ``a2a-sdk``:
the remote answer streams into the handing agent's run as the target's text deltas, and the
documented example (``examples/a2a_client.py``) runs as written against it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kanawa import Agent
from kanawa.a2a import A2AAgent
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.loop.events import HandoffEnded, HandoffStarted, NestedEvent
from kanawa.types import AssistantMessage, TextDelta, ToolCall
from tests.server.conftest import free_port

pytestmark = pytest.mark.timeout(240)  # the server process imports the server and the SDK: slow under load

ROOT = Path(__file__).resolve().parents[3]
KEY = "kw-a2a-remote-0123456789abcdef"
ANSWER = "Research notes on When was the Eiffel Tower built?: built in 1889 for the World's Fair."


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``kanawa serve`` serving ``researcher`` in its own process; the agent's A2A URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("a2a-serve") / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(PYTHONPATH=str(ROOT), KANAWA_API_KEYS=f"{KEY}:research")
    kanawa = str(Path(sys.executable).parent / "kanawa")
    command = [kanawa, "serve", "tests.server.protocols.a2a_agents:remote", "--port", str(port)]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*command, "--log-level", "warning"], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}/a2a/researcher"
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"{url}/.well-known/agent-card.json", timeout=2):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise RuntimeError(f"kanawa serve did not start: {log.read_text()[-2000:]}") from None
            time.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def _researcher(url: str) -> A2AAgent:
    return A2AAgent(url, name="researcher", description="Finds facts.", bearer_token=KEY, timeout=60)


async def test_a_handoff_to_a_served_agent_streams_its_answer_into_the_run(remote: str) -> None:
    def triage_model(request: ModelRequest) -> Script:
        if request.tool_results:
            return f"triage relays: {request.tool_results[-1].text}"
        arguments = json.dumps({"message": "When was the Eiffel Tower built?"})
        return AssistantMessage(tool_calls=(ToolCall("h1", "transfer_to_researcher", arguments),))

    triage = Agent("triage", "Hand off.", handoffs=[_researcher(remote)], model=FunctionLLM(triage_model))
    events = [event async for event in triage.stream("When was the Eiffel Tower built?")]
    kinds = [type(event) for event in events]
    assert HandoffStarted in kinds
    assert HandoffEnded in kinds
    deltas = [
        e.event.text
        for e in events
        if isinstance(e, NestedEvent) and e.agent == "researcher" and isinstance(e.event, TextDelta)
    ]
    assert len(deltas) > 1, "the remote answer streams in pieces"
    assert "".join(deltas) == ANSWER
    start = kinds.index(HandoffStarted)
    assert all(start < events.index(e) for e in events if isinstance(e, NestedEvent))


async def test_a_served_agent_as_a_tool_answers_the_calling_model(remote: str) -> None:
    def boss_model(request: ModelRequest) -> Script:
        if request.tool_results:
            return f"boss heard: {request.tool_results[-1].text}"
        arguments = json.dumps({"input": "When was the Eiffel Tower built?"})
        return AssistantMessage(tool_calls=(ToolCall("t1", "researcher", arguments),))

    boss = Agent("boss", "Ask.", tools=[_researcher(remote).as_tool()], model=FunctionLLM(boss_model))
    result = await boss.arun("When?")
    assert result.text == f"boss heard: {ANSWER}"


async def test_a_wrong_key_is_an_error_result_and_the_run_goes_on(remote: str) -> None:
    wrong = A2AAgent(remote, name="researcher", bearer_token="kw-not-the-key-0000000000", timeout=60)

    def boss_model(request: ModelRequest) -> Script:
        if request.tool_results:
            return f"boss saw: {request.tool_results[-1].text}"
        return AssistantMessage(tool_calls=(ToolCall("t1", "researcher", '{"input": "x"}'),))

    result = await Agent("boss", "Ask.", tools=[wrong.as_tool()], model=FunctionLLM(boss_model)).arun("x")
    assert result.text.startswith("boss saw: tool invoke error")


def test_the_documented_example_runs_against_a_served_agent(remote: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "a2a_client.py"), remote, KEY],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == f"streamed: {ANSWER}"
    assert (
        lines[1] == f"tool result: {ANSWER.replace('When was the Eiffel Tower built?', 'Who designed it?')}"
    )
