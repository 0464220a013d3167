"""A model call or a tool call is in a run's stream as soon as it starts, not once it has answered.

A run's trace records go out with its next chunk; a model call sends its first chunk only once the
model answers, so its ``llm_start`` would wait with it — and the live timeline would show nothing of
a call in progress. A start record is stored on its own shortly after (``chunk_writer.START_DELAY``)
when no chunk has taken it. Here a tool and then a model call each wait for the test: their start
records arrive while they wait, in embedded and Redis mode, and the stream stays one unbroken run of
``seq`` numbers ending with ``done``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.server.http.app import create_app
from kanawa.types import AssistantMessage, ToolCall
from tests.server.conftest import LiveServer, redis_url, settings_for
from tests.server.sse import AUTH_A, Event, parse_blocks

__all__ = ["redis_url"]

TOOL_GATE = threading.Event()
MODEL_GATE = threading.Event()


@tool
async def hold(reason: str) -> str:
    """Wait until the test lets the tool go on.

    Args:
        reason: why
    """
    await asyncio.to_thread(TOOL_GATE.wait, 30)
    return "let go"


async def _model(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("call_1", "hold", '{"reason": "test"}'),))
    await asyncio.to_thread(MODEL_GATE.wait, 30)
    return "answered at last"


@pytest.fixture(scope="module", params=["embedded", "redis"])
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    mode = str(request.param)
    redis = request.getfixturevalue("redis_url") if mode == "redis" else None
    agent = Agent("waits", "Wait.", tools=[hold], model=FunctionLLM(_model))
    live = LiveServer(create_app(agents={"waits": agent}, settings=settings_for(mode, redis))).start()
    try:
        yield live
    finally:
        TOOL_GATE.set()
        MODEL_GATE.set()
        live.stop()


class _Reader:
    """The events of one SSE response, read as far as a test needs them."""

    def __init__(self, response: httpx.Response) -> None:
        self.events: list[Event] = []
        self._raw: AsyncIterator[bytes] = response.aiter_raw()
        self._buffer = b""

    async def until(self, wanted: Callable[[Event], bool]) -> Event:
        while True:
            for event in self.events:
                if wanted(event):
                    return event
            piece = await anext(self._raw)
            got, self._buffer, _ = parse_blocks(self._buffer + piece)
            self.events.extend(got)


def _trace(name: str, step: int) -> Callable[[Event], bool]:
    def wanted(event: Event) -> bool:
        data = event.chunk.get("data") or {}
        return event.chunk["type"] == "trace" and data.get("event") == name and data.get("step") == step

    return wanted


async def test_a_call_in_progress_is_in_the_stream_before_it_answers(server: LiveServer) -> None:
    TOOL_GATE.clear()
    MODEL_GATE.clear()
    async with (
        httpx.AsyncClient(base_url=server.url, timeout=60) as client,
        client.stream("POST", "/v1/runs", json={"agent": "waits", "input": "go"}, headers=AUTH_A) as r,
    ):
        assert r.status_code == 200
        reader = _Reader(r)
        await reader.until(_trace("tool_start", 1))  # the tool still waits
        assert not any(_trace("tool_end", 1)(event) for event in reader.events)
        TOOL_GATE.set()
        await reader.until(_trace("llm_start", 2))  # the model call still waits: no chunk of it yet
        assert not any(_trace("llm_end", 2)(event) for event in reader.events)
        assert not any(event.chunk["type"] == "delta" for event in reader.events)
        MODEL_GATE.set()
        await reader.until(lambda event: event.chunk["type"] == "done")
    events = reader.events
    assert [event.id for event in events] == list(range(1, len(events) + 1))  # no gap, nothing twice
    assert events[-1].chunk["type"] == "done"
    assert events[-1].chunk["data"]["status"] == "completed"
    names = [e.chunk["data"]["event"] for e in events if e.chunk["type"] == "trace"]
    assert names.count("llm_start") == 2
    assert names.index("llm_start", names.index("tool_end")) < names.index("llm_end", names.index("tool_end"))
