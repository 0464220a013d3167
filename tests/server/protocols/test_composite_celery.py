"""A composite servable agent (not an ``Agent``: a coordinator of its own, like SmartAO's) runs on
Celery workers like any run, its per-process resources made on its first run and kept for the
process's later runs — here driven through the OpenAI protocol."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from openai import OpenAI

from tests.server.conftest import LiveServer
from tests.server.sse import KEY_A, start_run

RUNS = 6
"""More runs than the test cluster's worker processes (2 workers × 2): some process runs two."""


@pytest.fixture(scope="module")
def mode() -> str:
    return "celery"


@pytest.fixture
def client(live: LiveServer) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{live.url}/v1", api_key=KEY_A, max_retries=0, timeout=60) as made:
        yield made


def test_a_composite_runs_on_the_workers_and_keeps_its_resources(client: OpenAI) -> None:
    answers = []
    for n in range(RUNS):
        response = client.responses.create(model="relay", input=f"essay {n}")
        assert response.status == "completed", response.error
        answers.append(response.output_text)
    pids = [answer.split(":", 1)[0] for answer in answers]
    assert [answer.split(":", 1)[1] for answer in answers] == [f"ESSAY {n}" for n in range(RUNS)]
    assert len(set(pids)) < RUNS, "a worker process ran two composite runs with the resource it made"


async def test_an_extensions_agent_runs_on_the_workers_with_its_events_and_lifespan(live: LiveServer) -> None:
    """The workers mount the app's extensions: their agent runs there, its own event becomes the
    extension's chunk, and the lifespan was entered in the pool process that ran it (each prefork
    process enters it for itself, never the parent before the fork)."""
    stamps = []
    async with httpx.AsyncClient(base_url=live.url, timeout=httpx.Timeout(60.0)) as http:
        for n in range(RUNS):
            _, events = await start_run(http, "stamper", f"stamp {n}")
            assert events[-1].chunk["data"]["status"] == "completed", events[-1].chunk
            [stamp] = [e.chunk["data"] for e in events if e.chunk["type"] == "stamp"]
            stamps.append(stamp)
    assert all(stamp["entered_in"] == stamp["pid"] for stamp in stamps), stamps
    assert len({stamp["pid"] for stamp in stamps}) < RUNS  # a process ran two runs on what it set up
