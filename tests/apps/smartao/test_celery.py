"""SmartAO's coordinator on a Celery worker: ``kanawa serve`` in Celery mode (a subprocess, real Redis)
sends the run to ``kanawa worker`` (a subprocess), both loading SmartAO from
``KANAWA_SERVE_EXTENSIONS``; the run streams what the same run streams embedded — SmartAO's own
``findings``, ``patch`` and ``rubric`` chunks included — and resumes with no gap and no duplicate.

One worker, one Celery-mode server and one embedded server for the module."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis

from kanawa.apps.smartao.web import smartao_extension
from kanawa.server.http.app import create_app
from kanawa.server.runs.demo_agents import demo_agents
from tests.apps.smartao.served import MARKS
from tests.apps.smartao.test_service import REQUEST, data_dir
from tests.server.conftest import ROOT, CeleryCluster, LiveServer, _broker, free_port, redis_url, settings_for
from tests.server.sse import AUTH_A, KEY_A, KEY_B, comparable, read_stream, resume, start_run

__all__ = ["redis_url"]  # the server tests' Redis (started when none answers), for this module

EXTENSIONS = "tests.apps.smartao.served:extensions"
TIMEOUT = httpx.Timeout(120.0)  # the worker makes SmartAO's corpora on its start; the machine is shared


@dataclass
class CeleryServe:
    url: str
    worker: subprocess.Popen[bytes]
    worker_data: Path
    prefix: str
    redis_url: str


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}


@pytest.fixture(scope="module")
def celery_serve(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory, reference_db: Path
) -> Iterator[CeleryServe]:
    tag = uuid.uuid4().hex[:8]
    worker_data = data_dir(tmp_path_factory.mktemp("smartao-worker"), reference_db)
    server_data = data_dir(tmp_path_factory.mktemp("smartao-serve"), reference_db)
    cluster = CeleryCluster(redis_url, _broker(redis_url), f"kanawa-test-{tag}", f"kanawa-test-{tag}:")
    cluster.extra = {
        "KANAWA_SERVE_AGENTS": "demo",
        "KANAWA_SERVE_EXTENSIONS": EXTENSIONS,
        "KANAWA_TEST_SMARTAO_DATA": str(worker_data),
        "KANAWA_WORKER_CONCURRENCY": "1",
    }
    worker = cluster.spawn()
    port = free_port()
    env = {
        **_clean_env(),
        "PYTHONPATH": str(ROOT),
        "KANAWA_API_KEYS": f"{KEY_A}:alpha,{KEY_B}:beta",
        "KANAWA_REDIS_URL": redis_url,
        "KANAWA_REDIS_PREFIX": cluster.prefix,
        "KANAWA_CELERY_BROKER": cluster.broker,
        "KANAWA_CELERY_QUEUE": cluster.queue,
        "KANAWA_SERVE_EXTENSIONS": EXTENSIONS,
        "KANAWA_TEST_SMARTAO_DATA": str(server_data),
        "KANAWA_RATE_LIMIT": "0",
    }
    serve = subprocess.Popen(
        [str(Path(sys.executable).parent / "kanawa"), "serve", "--port", str(port), "--log-level", "warning"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert serve.poll() is None, "kanawa serve exited"
            time.sleep(0.05)
        else:
            pytest.fail("kanawa serve did not answer")
        yield CeleryServe(url, worker, worker_data, cluster.prefix, redis_url)
    finally:
        serve.terminate()
        serve.wait(timeout=20)
        cluster.stop()


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory, reference_db: Path) -> Iterator[LiveServer]:
    directory = data_dir(tmp_path_factory.mktemp("smartao-embedded"), reference_db)
    extension = smartao_extension(directory, textlint=False)
    app = create_app(agents=demo_agents(), settings=settings_for("embedded", None), extensions=[extension])
    server = LiveServer(app).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def on_celery(celery_serve: CeleryServe) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=celery_serve.url, timeout=TIMEOUT) as http:
        yield http


def marks(directory: Path) -> list[str]:
    path = directory / MARKS
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


async def test_the_coordinator_runs_on_the_worker_and_streams_what_it_streams_embedded(
    celery_serve: CeleryServe, on_celery: httpx.AsyncClient, embedded: LiveServer
) -> None:
    async with httpx.AsyncClient(base_url=embedded.url, timeout=TIMEOUT) as http:
        _, alone = await start_run(http, "smartao", REQUEST)
    async with on_celery.stream(
        "POST", "/v1/runs", json={"agent": "smartao", "input": REQUEST}, headers=AUTH_A
    ) as r:
        assert r.status_code == 200, await r.aread()
        run_id = r.headers["x-run-id"]
        first, _ = await read_stream(r, cut_after_bytes=6000)
    assert first
    assert first[-1].chunk["type"] != "done"
    assert first[-1].id is not None
    rest = await resume(on_celery, run_id, first[-1].id)
    whole = await resume(on_celery, run_id, 0)
    # resumed losslessly: the cut stream and its resumption are the whole run, once each
    assert [e.id for e in first + rest] == [e.id for e in whole] == list(range(1, len(whole) + 1))
    assert [e.chunk for e in first + rest] == [e.chunk for e in whole]
    # the same chunks as the run embedded, SmartAO's own kinds among them
    assert comparable(whole) == comparable(alone)
    kinds = [e.chunk["type"] for e in whole]
    assert {"route", "findings", "patch", "rubric"} <= set(kinds)
    assert kinds[-3:] == ["final", "usage", "done"]
    assert whole[-1].chunk["data"]["status"] == "completed"
    # executed by the worker process, not the server
    client = redis.Redis.from_url(celery_serve.redis_url)
    try:
        ran_on = client.get(f"{celery_serve.prefix}run:{run_id}:worker")
    finally:
        client.close()
    assert ran_on is not None
    assert int(ran_on) == celery_serve.worker.pid


async def test_a_bad_input_fails_on_the_worker_with_smartaos_error(on_celery: httpx.AsyncClient) -> None:
    _, events = await start_run(on_celery, "smartao", json.dumps(["essay"]))
    [error] = [e.chunk for e in events if e.chunk["type"] == "error"]
    assert error["data"]["code"] == "EssayInputError"
    assert events[-1].chunk["data"]["status"] == "failed"


def test_the_worker_enters_the_lifespan_once_and_leaves_it_when_it_stops(celery_serve: CeleryServe) -> None:
    """Runs above used the process's resources; its lifespan was entered once, at its start, and is
    left when the worker stops (the last test of the module: it stops the module's worker)."""
    pid = celery_serve.worker.pid
    assert marks(celery_serve.worker_data) == [f"entered {pid}"]
    celery_serve.worker.send_signal(signal.SIGTERM)  # Celery's warm shutdown
    celery_serve.worker.wait(timeout=60)
    assert marks(celery_serve.worker_data) == [f"entered {pid}", f"left {pid}"]
