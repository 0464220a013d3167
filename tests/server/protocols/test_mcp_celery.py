"""``/mcp`` with runs on Celery workers: ``kanawa serve`` in Celery mode in a process of its own, the
session's worker cluster running the calls' runs, driven by the official ``mcp`` client over
streamable HTTP — the agents listed as tools, a call whose progress follows the run on the worker and
whose result is its answer, and a cancelled call whose cancel reaches the run on the worker."""

from __future__ import annotations

import re
import time
import uuid

import anyio
import httpx
import pytest
import redis
from mcp import types

from kanawa.server.http.protocols.mcp.tools import RUN_ID_META
from tests.mcp_server.test_http import session_of
from tests.server.conftest import CeleryCluster, ServeProcess
from tests.server.protocols.celery_agents import mark_key
from tests.server.sse import AUTH_A, KEY_A

pytestmark = pytest.mark.timeout(240)  # the serve process and the workers import the server: slow under load


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def _run(url: str, run_id: str) -> dict[str, object]:
    response = httpx.get(f"{url}/v1/runs/{run_id}", headers=AUTH_A, timeout=30)
    assert response.status_code == 200, response.text
    run: dict[str, object] = response.json()
    return run


async def test_a_call_streams_progress_and_answers_from_the_worker(
    celery_serve: ServeProcess, celery_cluster: CeleryCluster
) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with session_of(celery_serve.url, KEY_A) as session:
        listed = [tool.name for tool in (await session.list_tools()).tools]
        result = await session.call_tool("locator", {"input": "where?"}, progress_callback=on_progress)
    assert {"locator", "gated", "sitter", "relay"} <= set(listed)
    assert not result.is_error
    answer = _text(result)
    found = re.fullmatch(r"Ran in process (\d+)\.", answer)
    assert found, answer
    pid = int(found.group(1))
    assert pid != celery_serve.process.pid
    assert celery_cluster.ran(pid), f"process {pid} is not a pool process of the cluster's workers"
    messages = [message for _, message in progress]
    assert messages[:2] == ["calling whereami", "whereami answered"]
    assert "".join(m or "" for m in messages[2:]) == answer  # the answer's deltas, in order, once
    values = [value for value, _ in progress]
    assert values == sorted(set(values))
    assert result.meta is not None
    run = _run(celery_serve.url, result.meta[RUN_ID_META])
    assert (run["status"], run["agent"]) == ("completed", "locator")


@pytest.mark.parametrize("modern", [False, True], ids=["session", "2026-07-28"])
async def test_cancelling_the_call_cancels_the_run_on_its_worker(
    celery_serve: ServeProcess, celery_cluster: CeleryCluster, celery_redis: redis.Redis, modern: bool
) -> None:
    question = f"sit {uuid.uuid4().hex}"
    mark = mark_key(celery_cluster.prefix, question)
    async with session_of(celery_serve.url, KEY_A, modern=modern) as session:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await session.call_tool("sitter", {"input": question})

            group.start_soon(call)
            deadline = time.monotonic() + 60
            while (started := celery_redis.get(mark)) is None:  # the run is in its tool, on a worker
                assert time.monotonic() < deadline, "the sitter's tool never started"
                await anyio.sleep(0.05)
            group.cancel_scope.cancel()  # notifications/cancelled; on 2026-07-28 the stream closes
        _, worker, run_id = started.decode().split(":")
        pid = int(worker)
        assert pid != celery_serve.process.pid
        assert celery_cluster.ran(pid)
        deadline = time.monotonic() + 60
        while True:  # the tool's wait on the worker was cancelled, and the run ended as cancelled
            noted, status = celery_redis.get(mark), _run(celery_serve.url, run_id)["status"]
            if noted == f"cancelled:{pid}".encode() and status == "cancelled":
                break
            assert time.monotonic() < deadline, f"the cancel never reached the run: {noted!r}, {status}"
            await anyio.sleep(0.05)
        still_up = await session.call_tool("locator", {"input": "after"})
    assert _text(still_up).startswith("Ran in process ")
