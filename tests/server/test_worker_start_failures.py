"""A run a worker cannot start fails, told, instead of staying ``running`` until its TTL: an agent the
worker's registry lacks, a servable that refuses the counters restored from the checkpoint, and an
extension whose resources fail to start in the worker process (``kanawa.server.runs.workers``)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kanawa.server.runs import workers
from kanawa.server.runs.checkpoint import Checkpoint
from kanawa.server.runs.manager import RunManager
from kanawa.server.store.base import RunRecord, RunStore
from kanawa.server.store.memory import MemoryRunStore
from kanawa.server.store.redis.store import RedisRunStore
from kanawa.types import UserMessage
from tests.server.worker_start_agents import agents


async def _submitted(store: RunStore, run_id: str, agent: str) -> None:
    """What the web process leaves for a worker: the record and the run's first checkpoint."""
    now = time.time()
    await store.create(RunRecord(run_id, "alpha", agent, "running", now, now))
    fresh = Checkpoint(agent, (UserMessage("hello"),), next_seq=1, fresh=True)
    await store.save_checkpoint(run_id, fresh.dumps())


async def _chunks(store: RunStore, run_id: str) -> list[dict[str, Any]]:
    return [json.loads(entry.text) async for entry in store.read(run_id, after=0)]


@pytest.mark.parametrize("agent", ["stubborn", "gone"])
async def test_a_run_the_worker_cannot_resume_ends_failed_with_its_error(agent: str) -> None:
    store = MemoryRunStore()
    manager = RunManager(agents(), store)  # type: ignore[arg-type]
    await _submitted(store, "r1", agent)
    await manager.continue_run("r1")
    chunks = await _chunks(store, "r1")
    assert [chunk["type"] for chunk in chunks] == ["error", "done"]
    assert [chunk["seq"] for chunk in chunks] == [1, 2]
    assert chunks[0]["data"]["code"] == "internal_error"  # an unexpected failure: no text of it
    assert "counters" not in json.dumps(chunks)
    assert chunks[1]["data"]["status"] == "failed"
    record = await store.get("alpha", "r1")
    assert record is not None
    assert record.status == "failed"


@pytest.fixture
def broken_worker(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A worker process's settings whose extension cannot start its resources (Redis prefix)."""
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    monkeypatch.setenv("KANAWA_REDIS_URL", redis_url)
    monkeypatch.setenv("KANAWA_REDIS_PREFIX", prefix)
    monkeypatch.setenv("KANAWA_SERVE_AGENTS", "tests.server.worker_start_agents:agents")
    monkeypatch.setenv("KANAWA_SERVE_EXTENSIONS", "tests.server.worker_start_agents:broken_extension")
    workers.this_process.cache_clear()
    try:
        yield prefix
    finally:
        workers.this_process.cache_clear()


async def test_a_run_on_a_worker_whose_extension_cannot_start_fails_told(
    redis_url: str, broken_worker: str
) -> None:
    store = RedisRunStore(redis_url, ttl=30, cap=100, prefix=broken_worker)
    try:
        await _submitted(store, "r2", "relay")
        await workers._execute("r2")  # the task's body, on this loop
        chunks = await _chunks(store, "r2")
        assert [chunk["type"] for chunk in chunks] == ["error", "done"]
        assert "sidecar" not in json.dumps(chunks)
        record = await store.get("alpha", "r2")
        assert record is not None
        assert record.status == "failed"
    finally:
        await store.aclose()
