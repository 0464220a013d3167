"""Durable runs in Celery mode: the worker process executing a run SIGKILLed at a random point of the
run, 20 times (prefork pool processes: Celery forks a replacement and gives the task back to the
broker; another process continues the run).

Each time the run finishes on another worker with the same chunks as an uninterrupted run (the
client's stream simply pauses and goes on: nothing lost, nothing repeated), and no tool call whose
result was recorded in a checkpoint is executed again — the ``counted`` tool checks that itself on
every execution. The kill points come from a seeded ``random.Random``.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
from collections.abc import AsyncIterator

import httpx
import pytest
from redis.asyncio import Redis

from tests.server.conftest import CeleryCluster, LiveServer
from tests.server.durable_agents import ANSWER, ROUNDS
from tests.server.sse import AUTH_A, Event, comparable, read_stream, start_run

KILLS = 20
PARALLEL = 3


@pytest.fixture(scope="module")
def mode() -> str:
    return "celery"


@pytest.fixture
async def redis_client(celery_cluster: CeleryCluster) -> AsyncIterator[Redis]:
    client = Redis.from_url(celery_cluster.redis_url)
    try:
        yield client
    finally:
        await client.aclose()


async def _run_and_kill(
    client: httpx.AsyncClient, redis: Redis, cluster: CeleryCluster, delay: float
) -> tuple[str, list[Event], bool]:
    async with client.stream(
        "POST", "/v1/runs", json={"agent": "durable", "input": "go"}, headers=AUTH_A
    ) as r:
        run_id = r.headers["x-run-id"]
        reading = asyncio.create_task(read_stream(r))
        pid = None
        for _ in range(1000):  # wait for a worker to take the run
            pid = await redis.get(f"{cluster.prefix}run:{run_id}:worker")
            if pid is not None or reading.done():
                break
            await asyncio.sleep(0.005)
        await asyncio.sleep(delay)
        killed = False
        if pid is not None and not reading.done():
            try:
                os.kill(int(pid), signal.SIGKILL)
                killed = True
            except ProcessLookupError:
                pass
        events, _ = await asyncio.wait_for(reading, timeout=60)
    return run_id, events, killed


async def test_a_killed_workers_run_finishes_elsewhere_with_nothing_lost_repeated_or_rerun(
    client: httpx.AsyncClient, live: LiveServer, celery_cluster: CeleryCluster, redis_client: Redis
) -> None:
    _, reference = await start_run(client, "durable", "go")
    assert "".join(e.chunk["data"]["text"] for e in reference if e.chunk["type"] == "delta") == ANSWER
    expected = comparable(reference)
    rng = random.Random("celery-kills")
    kills = 0
    trial = 0
    while kills < KILLS and trial < KILLS * 2:
        # a few runs at once, each killed at its own random point: their redeliveries overlap
        delays = [rng.uniform(0.0, 0.15) for _ in range(min(PARALLEL, KILLS - kills))]
        outcomes = await asyncio.gather(
            *(_run_and_kill(client, redis_client, celery_cluster, delay) for delay in delays)
        )
        for run_id, events, killed in outcomes:
            trial += 1
            kills += killed
            assert [e.id for e in events] == list(range(1, len(events) + 1)), f"trial {trial}"
            assert comparable(events) == expected, f"trial {trial}"
            prefix = f"{celery_cluster.prefix}test:{run_id}"
            assert await redis_client.get(f"{prefix}:violations") is None, (
                f"trial {trial}: a recorded call ran again"
            )
            for n in range(ROUNDS):
                assert int(await redis_client.get(f"{prefix}:executions:call_{n}") or 0) >= 1
    assert kills == KILLS  # a run that ended before its kill does not count
