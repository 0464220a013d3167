"""A2A with runs on Celery workers: ``kanawa serve`` in Celery mode in a process of its own, the
session's worker cluster running the tasks, driven by the official ``a2a-sdk`` client — a sent
message, a stream, a task read back, a stream cut mid-answer and resubscribed (nothing lost, nothing
twice) and a cancel reaching the run on the worker. Each answer names the process that ran it: a pool
process of a worker, not the web process."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable

import pytest
import redis
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskState,
)

from tests.server.conftest import CeleryCluster, ServeProcess
from tests.server.protocols.a2a_support import a2a_client, ask, text_of
from tests.server.protocols.celery_agents import TALE, gate_key, mark_key

S = TaskState
pytestmark = pytest.mark.timeout(240)  # the serve process and the workers import the server: slow under load


def _worker_pid(text: str, served: ServeProcess, cluster: CeleryCluster) -> int:
    found = re.search(r"process (\d+)\.$", text)
    assert found, text
    pid = int(found.group(1))
    assert pid != served.process.pid
    assert cluster.ran(pid), f"process {pid} is not a pool process of the cluster's workers"
    return pid


async def test_send_get_and_stream_run_on_the_workers(
    celery_serve: ServeProcess, celery_cluster: CeleryCluster
) -> None:
    async with a2a_client(celery_serve.url, "locator", streaming=False) as client:
        sent = [event async for event in client.send_message(ask("where?"))]
        task = sent[-1].task
        assert task.status.state == S.TASK_STATE_COMPLETED
        _worker_pid(text_of(sent), celery_serve, celery_cluster)
        got = await client.get_task(GetTaskRequest(id=task.id))
    assert got.status.state == S.TASK_STATE_COMPLETED
    assert got.artifacts[0].parts[0].text == text_of(sent)
    async with a2a_client(celery_serve.url, "locator") as client:
        streamed = [event async for event in client.send_message(ask("where now?"))]
    assert streamed[0].WhichOneof("payload") == "task"
    assert streamed[-1].status_update.status.state == S.TASK_STATE_COMPLETED
    _worker_pid(text_of(streamed), celery_serve, celery_cluster)


async def test_resubscribing_after_a_cut_loses_nothing_and_repeats_nothing(
    celery_serve: ServeProcess, celery_cluster: CeleryCluster, celery_redis: redis.Redis
) -> None:
    question = f"tale {uuid.uuid4().hex}"
    async with a2a_client(celery_serve.url, "gated") as client:
        seen: list[StreamResponse] = []
        stream = client.send_message(ask(question))
        async for event in stream:
            seen.append(event)
            if sum(e.HasField("artifact_update") for e in seen) == 2:
                break  # the connection is cut mid-answer; the run goes on on its worker
        await stream.aclose()  # type: ignore[attr-defined]
        task_id = seen[0].task.id
        before = text_of(seen)
        assert before
        assert TALE.startswith(before)
        resumed: list[StreamResponse] = []
        async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
            resumed.append(event)
            if len(resumed) == 1:  # the run finishes only once the resubscription stands
                celery_redis.rpush(gate_key(celery_cluster.prefix, question), "go")
    first = resumed[0]
    assert first.HasField("task"), "a resubscription starts from the task as it is"
    assert first.task.status.state == S.TASK_STATE_WORKING
    assert text_of([first]).startswith(before)
    whole = text_of(resumed)
    assert whole.startswith(TALE), "the snapshot and the events after it are the whole answer, once"
    assert whole.count(TALE) == 1
    _worker_pid(whole, celery_serve, celery_cluster)
    assert resumed[-1].status_update.status.state == S.TASK_STATE_COMPLETED


async def test_cancel_reaches_the_run_on_its_worker(
    celery_serve: ServeProcess, celery_cluster: CeleryCluster, celery_redis: redis.Redis
) -> None:
    question = f"tale {uuid.uuid4().hex}"
    mark = mark_key(celery_cluster.prefix, question)
    async with a2a_client(celery_serve.url, "gated", streaming=False) as client:
        events = [event async for event in client.send_message(ask(question, immediately=True))]
        task_id = events[-1].task.id
        await _until(
            lambda: celery_redis.get(mark) == b"waiting", "the run never reached its gate on a worker"
        )
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
        assert canceled.status.state == S.TASK_STATE_CANCELED
        assert (await client.get_task(GetTaskRequest(id=task_id))).status.state == S.TASK_STATE_CANCELED
    await _until(
        lambda: celery_redis.get(mark) == b"cancelled", "the cancel never reached the run on its worker"
    )


async def _until(holds: Callable[[], bool], failure: str) -> None:
    """Poll ``holds`` until it is true (a readiness wait, not a timing assertion)."""
    deadline = time.monotonic() + 60
    while not holds():
        assert time.monotonic() < deadline, failure
        await asyncio.sleep(0.05)
