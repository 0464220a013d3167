"""``ListTasks`` is bounded in bytes (issue 30, finding 6): the official ``a2a-sdk`` client lists a
tenant's tasks of long answers on a real server (in memory and with Redis). Each listed answer is
cut to its first :data:`LIST_ANSWER_CHARS` characters and says so; a page stops before passing
``a2a_list_bytes``; ``nextPageToken`` walks every task once; ``GetTask`` still has the whole
answer. Before the bound, one list of these tasks answered every answer whole."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.types.a2a_pb2 import GetTaskRequest, ListTasksRequest, TaskState
from a2a.utils.errors import InvalidParamsError

from kanawa import Agent
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script, response_from
from kanawa.server.http.app import create_app
from kanawa.server.http.protocols.a2a.listing import LIST_ANSWER_CHARS
from kanawa.server.http.protocols.a2a.tasks import TRUNCATED
from kanawa.types import ResponseCompleted, TextDelta
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.a2a_agents import agents
from tests.server.protocols.a2a_support import a2a_client, ask
from tests.server.sse import AUTH_A

ANSWER_CHARS = 40_000
LIST_BYTES = 65_536
"""Room for three cut answers a page (each about 16.5 KB as encoded), not four."""
TASKS = 5


def _long(request: ModelRequest) -> Script:
    """A 40,000-character answer, in 4,000-character deltas (few chunks: the suite stays quick)."""
    text = (request.last_user_text + "-" + "abcdefghij" * ANSWER_CHARS)[:ANSWER_CHARS]
    pieces = [text[start : start + 4000] for start in range(0, ANSWER_CHARS, 4000)]
    return [*(TextDelta(piece) for piece in pieces), ResponseCompleted(response_from(text))]


@pytest.fixture(scope="module", params=["embedded", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    served: dict[str, Agent[Any, Any]] = {
        **agents(),
        "long": Agent("long", "Answer at length.", tools=(), model=FunctionLLM(_long)),
    }
    settings = settings_for(request.param, redis, a2a_list_bytes=LIST_BYTES)
    server = LiveServer(create_app(agents=served, settings=settings)).start()
    try:
        yield server
    finally:
        server.stop()


async def _send(url: str) -> list[str]:
    made = []
    async with a2a_client(url, "long", streaming=False) as client:
        for n in range(TASKS):
            events = [event async for event in client.send_message(ask(f"task {n}"))]
            task = events[-1].task
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            made.append(task.id)
    return made


@pytest.fixture(scope="module")
def task_ids(live: LiveServer) -> list[str]:
    return asyncio.run(_send(live.url))


async def test_a_listed_answer_is_cut_and_says_so_while_get_task_has_it_whole(
    live: LiveServer, task_ids: list[str]
) -> None:
    async with a2a_client(live.url, "long") as client:
        page = await client.list_tasks(ListTasksRequest(include_artifacts=True))
        assert page.tasks
        for task in page.tasks:
            (artifact,) = task.artifacts
            text = "".join(part.text for part in artifact.parts)
            assert len(text) == LIST_ANSWER_CHARS
            assert artifact.metadata[TRUNCATED] is True
        whole = await client.get_task(GetTaskRequest(id=page.tasks[0].id))
        (artifact,) = whole.artifacts
        text = "".join(part.text for part in artifact.parts)
        assert len(text) == ANSWER_CHARS
        assert text.startswith("".join(p.text for p in page.tasks[0].artifacts[0].parts))
        assert TRUNCATED not in artifact.metadata
        bare = await client.list_tasks(ListTasksRequest())
        assert all(not task.artifacts for task in bare.tasks)


async def test_pages_stay_within_the_byte_bound_and_the_token_walks_every_task_once(
    live: LiveServer, task_ids: list[str]
) -> None:
    seen: list[str] = []
    token = ""
    pages = 0
    async with a2a_client(live.url, "long") as client:
        while True:
            page = await client.list_tasks(ListTasksRequest(include_artifacts=True, page_token=token))
            pages += 1
            assert 0 < len(page.tasks) <= 3
            assert page.total_size == TASKS
            seen.extend(task.id for task in page.tasks)
            token = page.next_page_token
            if not token:
                break
    assert sorted(seen) == sorted(task_ids)
    assert len(seen) == len(set(seen))
    assert pages == 2
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH_A, timeout=60) as http:
        answer = await http.post(
            "/a2a/long",
            json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"includeArtifacts": True}},
        )
    assert answer.status_code == 200
    assert len(answer.content) <= LIST_BYTES + 4096  # JSON's few bytes more than the tasks' encoding
    assert len(answer.json()["result"]["tasks"]) == 3


async def test_a_page_token_naming_no_task_is_invalid_params(live: LiveServer, task_ids: list[str]) -> None:
    async with a2a_client(live.url, "long") as client:
        with pytest.raises(InvalidParamsError):
            await client.list_tasks(ListTasksRequest(page_token="f" * 32))
