"""Continuations in Celery mode: a run going on after a person's approval runs on a worker, never in
the web process, and both it and a run taken over after its worker died keep what the loop counts
over the whole run (``max_tool_calls_per_tool``) and its phase (a run asked for its structured answer).

The kills here are deterministic: once the test sets the hold key, the ``held`` tool announces its
process at one round and waits; the test SIGKILLs that process, and the round's re-execution on
another worker goes on. The web process is this test process (uvicorn in a thread), so a tool that
recorded this process's id would have run in the web process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from redis.asyncio import Redis

from tests.server.conftest import CeleryCluster, LiveServer, wait_for
from tests.server.durable_agents import CAP, HELD_ROUND, LAUNCHED, ROUNDS, VERDICT, hold_key
from tests.server.sse import AUTH_A, Event, comparable, read_stream, resume, start_run


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


async def _until_approval(client: httpx.AsyncClient, text: str) -> tuple[str, list[Event]]:
    run_id, events = await start_run(client, "launcher", text)
    assert events[-1].chunk["data"]["status"] == "awaiting_approval"
    (call,) = next(e.chunk for e in events if e.chunk["type"] == "approval_required")["data"]["calls"]
    assert call["id"] == "launch_1"
    return run_id, events


async def _approve(client: httpx.AsyncClient, run_id: str) -> None:
    answer = await client.post(
        f"/v1/runs/{run_id}/approvals", json={"approved": ["launch_1"]}, headers=AUTH_A
    )
    assert answer.status_code == 202, answer.text


async def _kill_the_held_round(redis: Redis, cluster: CeleryCluster, run_id: str) -> int:
    """Wait until the held round runs, then SIGKILL its process."""
    prefix = f"{cluster.prefix}test:{run_id}"

    async def holding() -> bool:
        return await redis.get(f"{prefix}:holding") is not None

    await wait_for(holding, tries=3000)
    pid = int(await redis.get(f"{prefix}:holding") or 0)
    assert pid != os.getpid(), "the held round ran in the web process"
    os.kill(pid, signal.SIGKILL)
    return pid


async def _executions(redis: Redis, cluster: CeleryCluster, run_id: str, call_id: str) -> int:
    return int(await redis.get(f"{cluster.prefix}test:{run_id}:executions:{call_id}") or 0)


async def test_an_approved_run_goes_on_on_a_worker_in_the_same_stream(
    client: httpx.AsyncClient, live: LiveServer, celery_cluster: CeleryCluster, redis_client: Redis
) -> None:
    run_id, events = await _until_approval(client, "go")
    assert await _executions(redis_client, celery_cluster, run_id, "launch_1") == 0
    await _approve(client, run_id)
    more = await resume(client, run_id, events[-1].id or 0)
    assert [e.id for e in more] == list(range(len(events) + 1, len(events) + len(more) + 1))
    chunks = [e.chunk for e in more]
    launched = next(c for c in chunks if c["type"] == "tool_response")
    assert launched["data"]["name"] == "launch"
    assert sum(1 for c in chunks if c["type"] == "tool_response") == 1 + ROUNDS
    assert next(c for c in chunks if c["type"] == "final")["data"]["output"] == LAUNCHED
    assert chunks[-1]["data"]["status"] == "completed"
    pids = [
        int(p) for p in await redis_client.lrange(f"{celery_cluster.prefix}test:{run_id}:launch-pids", 0, -1)
    ]
    assert len(pids) == 1, "the approved call ran exactly once"
    assert pids[0] != os.getpid(), "the approved call ran in the web process, not on a worker"
    worker = await redis_client.get(f"{celery_cluster.prefix}run:{run_id}:worker")
    assert worker is not None
    assert int(worker) == pids[0], "it ran on the worker that took the run"
    info = (await client.get(f"/v1/runs/{run_id}", headers=AUTH_A)).json()
    assert info["status"] == "completed"


async def test_a_worker_killed_after_the_approval_the_run_finishes_elsewhere(
    client: httpx.AsyncClient, live: LiveServer, celery_cluster: CeleryCluster, redis_client: Redis
) -> None:
    reference_id, reference = await _until_approval(client, "go")
    await _approve(client, reference_id)
    expected = comparable(await resume(client, reference_id, reference[-1].id or 0))

    run_id, events = await _until_approval(client, "go")
    assert comparable(events) == comparable(reference)
    await redis_client.set(hold_key(celery_cluster.prefix), run_id, ex=600)
    await _approve(client, run_id)
    async with client.stream(
        "GET", f"/v1/runs/{run_id}/events", headers={**AUTH_A, "Last-Event-ID": str(events[-1].id)}
    ) as r:
        reading = asyncio.create_task(read_stream(r))
        await _kill_the_held_round(redis_client, celery_cluster, run_id)
        more, _ = await asyncio.wait_for(reading, timeout=60)
    assert [e.id for e in more] == list(range(len(events) + 1, len(events) + len(more) + 1))
    assert comparable(more) == expected, "the resumed stream equals an uninterrupted one"
    assert await redis_client.get(f"{celery_cluster.prefix}test:{run_id}:violations") is None
    assert await _executions(redis_client, celery_cluster, run_id, "launch_1") == 1, (
        "the approved call's result was recorded: it never runs again"
    )
    for n in range(ROUNDS):
        ran = await _executions(redis_client, celery_cluster, run_id, f"call_{n}")
        assert ran == (2 if n == HELD_ROUND else 1), f"round {n}"  # the killed round ran again


async def test_max_tool_calls_per_tool_counts_the_whole_run_across_a_worker_death(
    client: httpx.AsyncClient, live: LiveServer, celery_cluster: CeleryCluster, redis_client: Redis
) -> None:
    reference_id, reference = await start_run(client, "capped", "go")
    assert reference[-1].chunk["data"]["termination_reason"] == "max_tool_calls_per_tool_exceeded"
    assert await redis_client.scard(f"{celery_cluster.prefix}test:{reference_id}:calls") == CAP

    await redis_client.set(hold_key(celery_cluster.prefix), "the next run", ex=600)
    async with client.stream(
        "POST", "/v1/runs", json={"agent": "capped", "input": "go"}, headers=AUTH_A
    ) as r:
        run_id = r.headers["x-run-id"]
        reading = asyncio.create_task(read_stream(r))
        await _kill_the_held_round(redis_client, celery_cluster, run_id)
        events, _ = await asyncio.wait_for(reading, timeout=60)
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert comparable(events) == comparable(reference)
    calls = await redis_client.smembers(f"{celery_cluster.prefix}test:{run_id}:calls")
    assert sorted(c.decode() for c in calls) == [f"call_{n}" for n in range(CAP)], (
        "the continuation forgot the calls made before the worker died"
    )
    assert await redis_client.get(f"{celery_cluster.prefix}test:{run_id}:violations") is None


async def test_a_run_asked_for_its_structured_answer_is_not_offered_tools_after_a_worker_death(
    client: httpx.AsyncClient, live: LiveServer, celery_cluster: CeleryCluster, redis_client: Redis
) -> None:
    violations = f"{celery_cluster.prefix}test:typed-violations"
    await redis_client.delete(violations)
    _, reference = await start_run(client, "typed", "go")
    assert (
        next(e.chunk for e in reference if e.chunk["type"] == "final")["data"]["output"]
        == VERDICT.model_dump()
    )
    token = uuid.uuid4().hex
    await redis_client.set(hold_key(celery_cluster.prefix), token, ex=600)
    async with client.stream("POST", "/v1/runs", json={"agent": "typed", "input": "go"}, headers=AUTH_A) as r:
        reading = asyncio.create_task(read_stream(r))
        await _kill_the_held_round(redis_client, celery_cluster, token)  # in the request for the answer
        events, _ = await asyncio.wait_for(reading, timeout=60)
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert comparable(events) == comparable(reference)
    assert await redis_client.get(violations) is None, "offered tools after it was asked for its answer"
