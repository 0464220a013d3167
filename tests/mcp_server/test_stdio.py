"""``kanawa mcp`` over stdio, driven by the official ``mcp`` client (``mcp.client.stdio``) against the
real command in its own process: the agents as tools, text and structured answers, progress as the run
streams, cancellation reaching the run, and failures as ``isError`` results that leak nothing."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE
from tests.mcp_server.agents import SECRET, STORY, STORY_DESCRIPTION

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[2]
KANAWA = str(Path(sys.executable).parent / "kanawa")


@asynccontextmanager
async def _session(marker: Path, errlog: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=KANAWA,
        args=["mcp", "tests.mcp_server.agents:agents"],
        env={"KANAWA_TEST_MCP_MARKER": str(marker)},
        cwd=REPO,
    )
    with errlog.open("w") as stderr:
        async with (
            stdio_client(params, errlog=stderr) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "marker.txt"


@pytest.fixture
def errlog(tmp_path: Path) -> Path:
    return tmp_path / "stderr.txt"


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


async def _wait_for_mark(marker: Path, mark: str) -> None:
    """Until the waiter's tool has written ``mark`` (in the server's process)."""
    deadline = time.monotonic() + 60
    while _read(marker) != mark:
        assert time.monotonic() < deadline, f"the waiter never wrote {mark!r}: {_read(marker)!r}"
        await anyio.sleep(0.02)


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_every_agent_is_listed_as_a_tool_with_its_schemas(marker: Path, errlog: Path) -> None:
    async with _session(marker, errlog) as session:
        listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == ["storyteller", "judge", "counter", "broken", "waiter"]
    story = tools["storyteller"]
    assert story.description == STORY_DESCRIPTION  # what it says of itself to callers
    assert tools["judge"].description == "The kanawa agent 'judge'."  # none: its name, not its instructions
    for listed_tool in tools.values():
        assert "KW-JOINT" not in listed_tool.model_dump_json()
    assert story.input_schema["required"] == ["input"]
    assert story.input_schema["properties"]["input"]["type"] == "string"
    assert story.output_schema is None
    judge = tools["judge"].output_schema
    assert judge is not None
    assert judge["type"] == "object"
    assert set(judge["properties"]) == {"topic", "score"}
    counter = tools["counter"].output_schema
    assert counter is not None
    assert counter["properties"]["result"]["type"] == "array"


async def test_text_agent_answers_with_its_text_and_reports_progress(marker: Path, errlog: Path) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with _session(marker, errlog) as session:
        result = await session.call_tool("storyteller", {"input": "tell me"}, progress_callback=on_progress)
    assert not result.is_error
    assert _text(result) == f"{STORY} (notes on joinery; you asked: tell me)"
    messages = [message for _, message in progress]
    assert messages[:2] == ["calling look_up", "look_up answered"]
    assert "".join(messages[2:]) == _text(result)  # the answer's deltas, in order, as it streamed
    values = [value for value, _ in progress]
    assert values == sorted(values)
    assert len(set(values)) == len(values)


async def test_structured_agent_answers_with_structured_content(marker: Path, errlog: Path) -> None:
    async with _session(marker, errlog) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        judged = await session.call_tool("judge", {"input": "dovetails"})
        counted = await session.call_tool("counter", {"input": "go"})
    assert judged.structured_content == {"topic": "dovetails", "score": 7}
    jsonschema.validate(judged.structured_content, listed["judge"].output_schema or {})
    assert counted.structured_content == {"result": [1, 2, 3]}
    jsonschema.validate(counted.structured_content, listed["counter"].output_schema or {})
    assert _text(judged) == '{"topic": "dovetails", "score": 7}'


async def test_failing_agent_is_an_error_result_without_secrets(marker: Path, errlog: Path) -> None:
    async with _session(marker, errlog) as session:
        result = await session.call_tool("broken", {"input": "anything"})
        after = await session.call_tool("judge", {"input": "still up"})  # the server goes on
    assert result.is_error
    assert _text(result).startswith(EXECUTION_ERROR_MESSAGE + " (LLMCallFailed: ")  # its cause, no text
    assert SECRET not in result.model_dump_json()
    assert "upstream refused" not in result.model_dump_json()
    assert "Traceback" not in _text(result)
    assert after.structured_content == {"topic": "still up", "score": 7}
    logged = _read(errlog)
    assert "broken failed over MCP" in logged
    assert SECRET not in logged


async def test_bad_arguments_are_an_error_result_and_the_agent_never_runs(marker: Path, errlog: Path) -> None:
    async with _session(marker, errlog) as session:
        missing = await session.call_tool("judge", {})
        extra = await session.call_tool("judge", {"input": "x", "other": 1})
        wrong = await session.call_tool("judge", {"input": 42})
    for result in (missing, extra, wrong):
        assert result.is_error
        assert _text(result).startswith("tool argument validation error:")
    assert "input: required argument is missing" in _text(missing)
    assert "other: unexpected argument" in _text(extra)


async def test_unknown_tool_is_a_protocol_error(marker: Path, errlog: Path) -> None:
    async with _session(marker, errlog) as session:
        with pytest.raises(MCPError) as caught:
            await session.call_tool("nobody", {"input": "hi"})
    assert caught.value.code == types.INVALID_PARAMS
    assert "nobody" in caught.value.message


async def test_cancelling_the_call_cancels_the_run(marker: Path, errlog: Path) -> None:
    async with _session(marker, errlog) as session:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await session.call_tool("waiter", {"input": "wait"})

            group.start_soon(call)
            # The tool itself says it has started (the "calling" progress message comes with the
            # call's result, which this tool only has when its own timeout cancels it: waiting for
            # that message waited a minute and saw the timeout, not this cancellation).
            await _wait_for_mark(marker, "started")
            group.cancel_scope.cancel()  # the client sends notifications/cancelled for the request
        await _wait_for_mark(marker, "cancelled")
        still_up = await session.call_tool("judge", {"input": "after"})
    assert still_up.structured_content == {"topic": "after", "score": 7}
