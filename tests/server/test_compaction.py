"""Compaction in served runs: a run far longer than its model's window is served to the end, stops
for a person's approval with its compacted history in the checkpoint, and goes on from that
checkpoint with every tool pair intact (in memory and Redis store modes)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kanawa import Agent, AgentConfiguration, Compaction, FunctionLLM, tool
from kanawa.llm.testing import ModelRequest, Script
from kanawa.llm.tokens import count_message_tokens
from kanawa.server.app import create_app
from kanawa.server.checkpoint import Checkpoint
from kanawa.types import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tests.loop.compaction.histories import pairing_errors
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A, read_stream, start_run

WINDOW = 1_000
PAGES = 50
FILLER = "lorem ipsum dolor sit amet " * 40
SEEN: list[ModelRequest] = []


@tool
def fetch_page(n: int) -> str:
    """Fetch one page.

    Args:
        n: the page number
    """
    return f"page {n}: {FILLER}"


@tool(requires_approval=True)
def publish(pages: int) -> str:
    """Publish the digest (needs a person's approval).

    Args:
        pages: how many pages it covers
    """
    return f"published {pages} pages"


def _reader(request: ModelRequest) -> Script:
    SEEN.append(request)
    last = request.messages[-1]
    if isinstance(last, ToolMessage) and last.name == "publish":
        return f"done: {last.text}"
    done = int(last.tool_call_id.split("_")[1]) + 1 if isinstance(last, ToolMessage) else 0
    if done >= PAGES:
        return AssistantMessage(tool_calls=(ToolCall("pub_1", "publish", f'{{"pages": {done}}}'),))
    return AssistantMessage(tool_calls=(ToolCall(f"p_{done}", "fetch_page", f'{{"n": {done}}}'),))


def agents() -> dict[str, Agent[Any, Any]]:
    reader = Agent(
        "reader",
        "Read every page, then publish a digest.",
        tools=[fetch_page, publish],
        model=FunctionLLM(_reader, model="reader-model"),
        config=AgentConfiguration(max_steps=PAGES + 5, max_tool_calls_per_tool=None),
        compaction=Compaction(context_window=WINDOW),
    )
    return {"reader": reader}


@pytest.fixture(scope="module", params=["memory", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    server = LiveServer(create_app(agents=agents(), settings=settings_for(request.param, redis))).start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_served_run_ten_windows_long_stops_for_approval_and_goes_on_from_its_checkpoint(
    client: httpx.AsyncClient,
) -> None:
    SEEN.clear()
    run_id, events = await start_run(client, "reader", "Read the document and publish a digest.")
    chunks = [e.chunk for e in events]
    assert chunks[-1]["data"]["status"] == "awaiting_approval", chunks[-3:]
    assert PAGES * count_message_tokens(FILLER) >= 10 * WINDOW  # ten windows of pages
    before = len(SEEN)
    assert before == PAGES + 1

    answer = await client.post(f"/v1/runs/{run_id}/approvals", json={"approved": ["pub_1"]}, headers=AUTH_A)
    assert answer.status_code in (200, 202), answer.text
    async with client.stream(
        "GET", f"/v1/runs/{run_id}/events", headers={**AUTH_A, "Last-Event-ID": str(events[-1].id)}
    ) as response:
        more, _ = await read_stream(response)
    after = [e.chunk for e in more]
    assert after[-1]["data"]["status"] == "completed"
    assert (
        next(c for c in after if c["type"] == "final")["data"]["output"] == f"done: published {PAGES} pages"
    )

    for request in SEEN:
        assert pairing_errors(request.messages) == []
        assert count_message_tokens(list(request.messages)) <= 0.8 * WINDOW
    resumed = SEEN[before]  # the request made from the checkpoint
    assert any(
        m.text == "Read the document and publish a digest."
        for m in resumed.messages
        if isinstance(m, UserMessage)
    )
    assert len(resumed.messages) < 2 * PAGES  # the compacted history, not the whole run


def test_a_compacted_history_survives_the_checkpoint_round_trip() -> None:
    compaction_item = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-opaque"}
    messages: tuple[Message, ...] = (
        SystemMessage("Read."),
        UserMessage("Summary of the earlier part of this conversation: pages 0-30 read."),
        AssistantMessage(reasoning=(ReasoningPart(provider="openai", payload=compaction_item),)),
        UserMessage("Read the document."),
        AssistantMessage(tool_calls=(ToolCall("p_31", "fetch_page", '{"n": 31}'),)),
        ToolMessage("p_31", "page 31", name="fetch_page"),
    )
    back = Checkpoint.loads(Checkpoint("reader", messages, next_seq=5).dumps())
    assert back.messages == messages
