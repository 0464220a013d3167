"""Server test fixtures: a real Redis (started when 127.0.0.1:6379 does not answer), the app served by
uvicorn on loopback in a background thread, and an SSE reader over httpx.

The API suite is parametrised over the run-store modes: ``embedded`` (in memory) and ``redis``
(Redis Streams). Each mode gets one server per test module.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import uvicorn

from kanawa.server.http.app import create_app
from kanawa.server.http.head_limits import serve_config
from kanawa.server.settings import ServerSettings
from kanawa.server.store.base import RunStore
from kanawa.server.store.memory import MemoryRunStore
from kanawa.server.store.redis.store import RedisRunStore
from tests.server.agents import server_agents
from tests.server.sse import KEY_A, KEY_B

MODES = ["embedded", "redis", "celery"]
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Redis at 127.0.0.1:6379 when it answers; otherwise a ``redis-server`` started on a free port."""
    if _redis_answers(6379):
        yield "redis://127.0.0.1:6379/0"
        return
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    # never 6379: a suite running alongside (make test runs 3.12 and 3.11 at once) would take a server
    # there for the machine's own, and lose it when this session stops it
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if _redis_answers(port):
                break
            time.sleep(0.05)
        else:
            pytest.fail("redis-server did not start")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _port_taken(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class LiveServer:
    """uvicorn serving an app on loopback from a background thread (its own event loop)."""

    app: Any
    port: int = field(default_factory=free_port)
    server: uvicorn.Server | None = None
    thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LiveServer:
        # the protocol `kanawa serve` runs, with the app's head limits (http_limits.serve_config)
        settings = getattr(getattr(self.app, "state", None), "settings", None)
        config = serve_config(
            self.app,
            settings if isinstance(settings, ServerSettings) else ServerSettings(),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            ws="none",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        for _ in range(400):
            if self.server.started:
                return self
            time.sleep(0.01)
        raise RuntimeError("uvicorn did not start")

    def stop(self) -> None:
        assert self.server is not None
        assert self.thread is not None
        self.server.should_exit = True
        self.thread.join(timeout=15)


def settings_for(mode: str, redis: str | None, **overrides: Any) -> ServerSettings:
    base = ServerSettings(
        api_keys=f"{KEY_A}:alpha,{KEY_B}:beta",
        redis_url=redis if mode == "redis" else None,
        redis_prefix=f"kanawa-test-{uuid.uuid4().hex[:8]}:",
        run_ttl=120.0,
        sse_ping=0.2,
        rate_limit=0,
        auth_failures=0,  # the suites send many bad keys from one address: test_hostile_clients.py throttles
        max_request_bytes=64 * 1024,
        max_runs=1000,
        gc_freeze=False,  # the suite starts many apps: test_gc_settings.py covers both settings
        gc_threshold=0,
    )
    return ServerSettings(**{**{f: getattr(base, f) for f in base.__dataclass_fields__}, **overrides})


@contextlib.asynccontextmanager
async def run_store(
    request: pytest.FixtureRequest, kind: str, *, cap: int, tenant_bytes: int = 0, total_bytes: int = 0
) -> AsyncIterator[RunStore]:
    """A fresh run store of ``kind`` (``memory``, or ``redis`` under a prefix of its own) for the
    store-level tests, with memory budgets if given; closed afterwards."""
    budgets = {"tenant_bytes": tenant_bytes, "total_bytes": total_bytes}
    if kind == "memory":
        made: RunStore = MemoryRunStore(ttl=60, cap=cap, **budgets)
    else:
        url = request.getfixturevalue("redis_url")
        made = RedisRunStore(url, ttl=60, cap=cap, prefix=f"kanawa-test-{uuid.uuid4().hex[:8]}:", **budgets)
    try:
        yield made
    finally:
        await made.aclose()


@pytest.fixture(scope="module", params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def live(mode: str, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    if mode == "celery":
        celery: CeleryCluster = request.getfixturevalue("celery_cluster")
        settings = settings_for(
            "redis",
            celery.redis_url,
            redis_prefix=celery.prefix,
            celery_broker=celery.broker,
            celery_queue=celery.queue,
        )
    else:
        redis = request.getfixturevalue("redis_url") if mode == "redis" else None
        settings = settings_for(mode, redis)
    mounted = []
    if mode == "celery":  # the agents and the extensions the cluster's workers load
        from tests.server.composite_agents import extensions
        from tests.server.durable_agents import agents

        registry = agents()
        mounted = extensions()
    else:
        registry = server_agents()
    server = LiveServer(create_app(agents=registry, settings=settings, extensions=mounted)).start()
    try:
        yield server
    finally:
        server.stop()


def _broker(redis_url: str) -> str:
    """RabbitMQ on 127.0.0.1:5672 when it is there (a dead worker's task is requeued the moment its
    connection drops), else the Redis the tests use (database 1)."""
    if _port_taken(5672):
        return "amqp://guest:guest@127.0.0.1:5672//"
    return redis_url.rsplit("/", 1)[0] + "/1"


@dataclass
class CeleryCluster:
    """Celery workers (``python -m kanawa.server.runs.workers``, two prefork processes each) serving one
    test queue."""

    redis_url: str
    broker: str
    queue: str
    prefix: str
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)
    """Variables of this cluster's workers beside (or instead of) the defaults below."""

    def env(self) -> dict[str, str]:
        import os

        return {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "KANAWA_CELERY_BROKER": self.broker,
            "KANAWA_CELERY_QUEUE": self.queue,
            "KANAWA_REDIS_URL": self.redis_url,
            "KANAWA_REDIS_PREFIX": self.prefix,
            "KANAWA_SERVE_AGENTS": "tests.server.durable_agents:agents",
            "KANAWA_SERVE_EXTENSIONS": "tests.server.composite_agents:extensions",
            # prefork: a killed pool process is replaced by a fork, and its task goes back to the broker
            "KANAWA_WORKER_CONCURRENCY": "2",
            **self.extra,
        }

    def spawn(self) -> subprocess.Popen[bytes]:
        import sys

        worker = subprocess.Popen(
            [sys.executable, "-m", "kanawa.server.runs.workers"],
            env=self.env(),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stop() ends the pool processes too
        )
        self.workers.append(worker)
        return worker

    def ran(self, pid: int) -> bool:
        """Whether ``pid`` is a pool process of one of this cluster's workers (a child of a worker's
        main process): what ran there did not run in the web process."""
        stat = Path(f"/proc/{pid}/stat").read_text()
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the fields after the command name
        return parent in {worker.pid for worker in self.workers}

    def stop(self) -> None:
        import os
        import signal

        for worker in self.workers:
            # the whole group: a pool process whose main process was killed would linger otherwise
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
        from kanawa.server.runs.workers import make_celery

        app = make_celery(self.broker, queue=self.queue)
        try:  # the broker may be shared: leave no test queue behind (best effort)
            with contextlib.suppress(Exception), app.connection_for_write() as connection:
                connection.default_channel.queue_delete(self.queue)
                connection.default_channel.exchange_delete(self.queue)
        finally:
            app.close()


@pytest.fixture(scope="session")
def celery_cluster(redis_url: str) -> Iterator[CeleryCluster]:
    tag = uuid.uuid4().hex[:8]
    cluster = CeleryCluster(redis_url, _broker(redis_url), f"kanawa-test-{tag}", f"kanawa-test-{tag}:")
    for _ in range(2):
        cluster.spawn()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def celery_redis(celery_cluster: CeleryCluster) -> Iterator[redis.Redis]:
    """A client of the cluster's Redis: what a test reads of the marks its agents leave on workers."""
    client = redis.Redis.from_url(celery_cluster.redis_url)
    yield client
    client.close()


@dataclass
class ServeProcess:
    """``kanawa serve`` running in a process of its own."""

    url: str
    process: subprocess.Popen[bytes]


@pytest.fixture(scope="session")
def celery_serve(
    celery_cluster: CeleryCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServeProcess]:
    """``kanawa serve`` in Celery mode, in its own process, in front of :func:`celery_cluster` (the
    agents its workers load, keys :data:`KEY_A` and :data:`KEY_B`): the web process only relays."""
    import os
    import sys
    import urllib.request

    port = free_port()
    log = tmp_path_factory.mktemp("celery-serve") / "serve.log"
    env = {k: v for k, v in celery_cluster.env().items() if k != "KANAWA_WORKER_CONCURRENCY"}
    env.update(KANAWA_API_KEYS=f"{KEY_A}:alpha,{KEY_B}:beta", KANAWA_RATE_LIMIT="0", KANAWA_AUTH_FAILURES="0")
    kanawa = str(Path(sys.executable).parent / "kanawa")
    command = [kanawa, "serve", "--port", str(port), "--log-level", "warning"]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180  # the process imports the server and every protocol's SDK
    while True:
        try:
            with urllib.request.urlopen(f"{url}/a2a/locator/.well-known/agent-card.json", timeout=2):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                pytest.fail(f"kanawa serve did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
    try:
        yield ServeProcess(url, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, 9)
            process.wait()


@pytest.fixture
async def client(live: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live.url, timeout=httpx.Timeout(20.0)) as http:
        yield http


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where tests leave files for people (screenshots); gitignored."""
    root = Path(__file__).resolve().parents[2] / "test-artifacts"
    root.mkdir(exist_ok=True)
    return root


async def wait_for(predicate: Any, *, tries: int = 500, pause: float = 0.01) -> None:
    """Poll an async predicate until it holds (a readiness wait, not a timing assertion)."""
    for _ in range(tries):
        if await predicate():
            return
        await asyncio.sleep(pause)
    raise AssertionError("condition never held")
