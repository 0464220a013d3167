"""AG-UI with runs on Celery workers: the web process relays, a worker runs the thread's run, and
the frontend's tool result continues it on a worker too (the agents of
``tests.server.durable_agents``, which the workers load)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from kanawa.server.http.app import create_app
from tests.server.conftest import CeleryCluster, LiveServer, settings_for
from tests.server.durable_agents import agents
from tests.server.protocols.agui_sse import post, run_input, user

WEATHER = {"name": "weather", "description": "Today's weather in a city.", "parameters": {"type": "object"}}


@pytest.fixture(scope="module")
def celery_app(celery_cluster: CeleryCluster) -> Iterator[LiveServer]:
    settings = settings_for(
        "redis",
        celery_cluster.redis_url,
        redis_prefix=celery_cluster.prefix,
        celery_broker=celery_cluster.broker,
        celery_queue=celery_cluster.queue,
    )
    server = LiveServer(create_app(agents=agents(), settings=settings)).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def client(celery_app: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=celery_app.url, timeout=httpx.Timeout(60.0)) as http:
        yield http


async def test_a_thread_runs_and_goes_on_on_the_workers(client: httpx.AsyncClient) -> None:
    thread = "celery-thread"
    first, events = await post(
        client, "assistant", run_input(thread, "r1", user("weather?"), tools=[WEATHER])
    )
    assert first.status_code == 200
    assert events[-1].event["outcome"] == {"type": "success", "pendingToolCallIds": ["call_weather"]}
    call = {
        "id": "a1",
        "role": "assistant",
        "toolCalls": [
            {"id": "call_weather", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        ],
    }
    answer = {"id": "t1", "role": "tool", "toolCallId": "call_weather", "content": "sunny"}
    second, more = await post(client, "assistant", run_input(thread, "r2", call, answer, tools=[WEATHER]))
    assert second.headers["x-run-id"] == first.headers["x-run-id"]
    assert "".join(e.event["delta"] for e in more if e.type == "TEXT_MESSAGE_CONTENT") == "In Tokyo: sunny"
    assert more[-1].type == "RUN_FINISHED"
