"""The service under hostile clients, bounded: slow readers on a large run, stream floods (and, below,
failed-auth bursts, a flood of short runs, two workers sharing limits). Loopback only; every loop is
bounded in count and time.

The slow-reader test runs the server in its own process (:mod:`tests.server.hostile_server`) so its
resident memory can be measured with psutil while clients that never read hold streams open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import psutil
import pytest
from redis.asyncio import Redis

from kanawa.server.http.app import create_app
from kanawa.server.store.redis.store import RedisRunStore
from tests.server.agents import server_agents
from tests.server.conftest import ROOT, LiveServer, free_port, settings_for
from tests.server.sse import AUTH_A, AUTH_B, KEY_A, KEY_B, parse_blocks

MiB = 1024 * 1024


@pytest.fixture(scope="module", params=["embedded", "redis"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class ServerProcess:
    """``tests.server.hostile_server`` in a subprocess on a free loopback port."""

    process: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss(self) -> int:
        return int(psutil.Process(self.process.pid).memory_info().rss)

    async def let_go(self, sock: socket.socket, deadline: float) -> bool:
        """Whether the server has closed or reset its end of ``sock``'s connection by ``deadline``,
        seen from the kernel's table of the server's sockets, so the client never has to read."""
        port = sock.getsockname()[1]
        accepted = False  # a connection still in the listen queue is no socket of the server's yet
        while time.monotonic() < deadline:
            held = any(
                connection.raddr
                and connection.raddr.port == port
                and connection.status == psutil.CONN_ESTABLISHED
                for connection in psutil.Process(self.process.pid).net_connections(kind="tcp")
            )
            if accepted and not held:
                return True
            accepted = accepted or held
            await asyncio.sleep(0.05)
        return False


@contextlib.contextmanager
def server_process(mode: str, redis: str | None, **env: str) -> Iterator[ServerProcess]:
    port = free_port()
    variables = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "KANAWA_API_KEYS": f"{KEY_A}:alpha,{KEY_B}:beta",
        "KANAWA_RATE_LIMIT": "0",
        "KANAWA_SSE_PING": "0.5",
        "KANAWA_GC_FREEZE": "0",
        **env,
    }
    if mode == "redis":
        assert redis is not None
        variables["KANAWA_REDIS_URL"] = redis
        variables["KANAWA_REDIS_PREFIX"] = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    log = tempfile.TemporaryFile()  # noqa: SIM115 - the server's stderr for as long as it runs
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.server.hostile_server", str(port)],
        env=variables,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        for _ in range(300):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(log.read().decode(errors="replace"))
            time.sleep(0.05)
        else:
            raise RuntimeError("the server did not start")
        yield ServerProcess(process, port)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.seek(0)
        errors = log.read().decode(errors="replace")
        log.close()
        assert "Traceback" not in errors, errors


def _stalled_reader(port: int, run_id: str) -> socket.socket:
    """A client that asks for a run's events with a tiny receive buffer and never reads."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: the window it offers
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {KEY_A}\r\n\r\n".encode()
    )
    return sock


def _cut(sock: socket.socket, deadline: float) -> bool:
    """Whether the server cut the connection (reset, or closed after what it had sent) by ``deadline``."""
    sock.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            if not sock.recv(1 << 20):
                return True
        except TimeoutError:
            continue
        except OSError:
            return True
    return False


def _drain(sock: socket.socket, deadline: float) -> bytes | None:
    """Everything the server still sends, until it closes or resets the connection by ``deadline``
    (``None``: it did not)."""
    sock.settimeout(0.5)
    received = bytearray()
    while time.monotonic() < deadline:
        try:
            piece = sock.recv(1 << 20)
        except TimeoutError:
            continue
        except OSError:
            return bytes(received)
        if not piece:
            return bytes(received)
        received += piece
    return None


async def _events(client: httpx.AsyncClient, run_id: str, after: int) -> list[tuple[int, bytes]]:
    headers = {**AUTH_A, "Last-Event-ID": str(after)}
    buffer = b""
    async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        async for part in response.aiter_bytes():
            buffer += part
    events, _, _ = parse_blocks(buffer)
    return [(event.id, repr(event.chunk).encode()) for event in events if event.id is not None]


SLOW_READERS = 16
RSS_BOUND = {"embedded": 64 * MiB, "redis": 128 * MiB}
"""What the stalled readers of a 10 MiB run may add to the server's memory all together. Before
the send cap each one pinned the whole run (its frames in one send, buffered for the socket):
+114 MiB (embedded) and +412 MiB (Redis) for 16 of them. After it one holds one batch, at least one
chunk — here chunks of 1 MiB — and in Redis mode a few copies of it (the reply, its text, its frame,
the send buffer): measured +1 to +13 MiB embedded, +42 to +76 MiB Redis."""


async def test_slow_readers_hold_bounded_memory_and_are_cut(
    mode: str, request: pytest.FixtureRequest
) -> None:
    redis = request.getfixturevalue("redis_url") if mode == "redis" else None
    with server_process(mode, redis, KANAWA_SSE_WRITE_TIMEOUT="3") as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=httpx.Timeout(60.0)) as client:
            started = await client.post("/v1/runs", json={"agent": "bulk", "input": "go"}, headers=AUTH_A)
            assert started.status_code == 200
            run_id = started.headers["x-run-id"]
            assert len(started.content) > 10 * MiB
            whole = await _events(client, run_id, 0)
            assert whole[-1][0] == len(whole)
            await asyncio.sleep(0.5)
            before = server.rss()
            readers = [_stalled_reader(server.port, run_id) for _ in range(SLOW_READERS)]
            try:
                peak = before
                for _ in range(20):  # 2 s: long enough to buffer a whole run for each of them
                    await asyncio.sleep(0.1)
                    peak = max(peak, server.rss())
                grown = peak - before
                print(f"{SLOW_READERS} stalled readers of a 10 MiB run: +{grown / MiB:.1f} MiB ({mode})")
                assert grown < RSS_BOUND[mode], f"+{grown / MiB:.0f} MiB for {SLOW_READERS} stalled readers"
                deadline = time.monotonic() + 15.0
                cut = await asyncio.to_thread(lambda: [_cut(sock, deadline) for sock in readers])
                assert all(cut), "a stalled stream outlived the write timeout"
            finally:
                for sock in readers:
                    sock.close()
            # a client that was cut resumes where it likes and gets every chunk after it
            middle = len(whole) // 2
            assert await _events(client, run_id, middle) == whole[middle:]
            assert await _events(client, run_id, 0) == whole


def _stalled_openai_reader(port: int) -> socket.socket:
    """A client that starts a streaming Responses request with a tiny receive buffer and never reads."""
    body = b'{"model":"bulk","input":"go","stream":true}'
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        b"POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer %b\r\nContent-Length: %d\r\n\r\n%b" % (KEY_A.encode(), len(body), body)
    )
    return sock


async def test_a_stalled_openai_stream_is_cut_after_the_write_timeout(
    mode: str, request: pytest.FixtureRequest
) -> None:
    """An OpenAI stream is a run stream like kanawa's own: its client stops reading (the run's
    ``mcp_call`` items are 10 MiB), the send waits past ``KANAWA_SSE_WRITE_TIMEOUT`` and the
    connection is cut — the run goes on, and the response can be resumed whole."""
    redis = request.getfixturevalue("redis_url") if mode == "redis" else None
    with server_process(mode, redis, KANAWA_SSE_WRITE_TIMEOUT="2") as server:
        sock = _stalled_openai_reader(server.port)
        try:
            assert await server.let_go(sock, time.monotonic() + 30.0), "the stalled stream was not cut"
            received = await asyncio.to_thread(_drain, sock, time.monotonic() + 30.0)
        finally:
            sock.close()
        assert received is not None, "the stalled stream was not cut"
        assert b"response.output_item.added" in received  # it had begun, then it was cut …
        assert b"response.completed" not in received  # … before its end, which a reader would have had
        async with httpx.AsyncClient(base_url=server.url, headers=AUTH_A, timeout=60.0) as client:
            (run,) = [run for run in (await client.get("/v1/runs")).json()["runs"] if run["agent"] == "bulk"]
            response_id = f"resp_{run['id']}"
            for _ in range(600):
                retrieved = (await client.get(f"/v1/responses/{response_id}")).json()
                if retrieved["status"] != "in_progress":
                    break
                await asyncio.sleep(0.05)
            assert retrieved["status"] == "completed"
            assert [item["type"] for item in retrieved["output"]].count("mcp_call") == 10


@pytest.fixture(scope="module")
def capped(mode: str, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if mode == "redis" else None
    settings = settings_for(mode, redis, max_streams=4, max_run_streams=2)
    server = LiveServer(create_app(agents=server_agents(), settings=settings)).start()
    try:
        yield server
    finally:
        server.stop()


async def test_streams_are_capped_per_run_and_per_tenant(capped: LiveServer) -> None:
    slow = {"agent": "slow", "input": "10"}  # runs that stay running while the test holds streams
    async with (
        httpx.AsyncClient(base_url=capped.url, timeout=httpx.Timeout(20.0)) as client,
        contextlib.AsyncExitStack() as held,
    ):

        async def hold(method: str, url: str, **kwargs: object) -> httpx.Response:
            return await held.enter_async_context(client.stream(method, url, headers=AUTH_A, **kwargs))  # type: ignore[arg-type]

        first = await hold("POST", "/v1/runs", json=slow)  # a run's own stream counts for its tenant
        run_id = first.headers["x-run-id"]
        url = f"/v1/runs/{run_id}/events"
        for _ in range(2):
            assert (await hold("GET", url)).status_code == 200
        refused = await client.get(url, headers=AUTH_A)
        assert refused.status_code == 429  # the run's cap
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["detail"] == "this run has 2 streams open (the limit)"
        second = await hold("POST", "/v1/runs", json=slow)
        other_run = second.headers["x-run-id"]
        refused = await client.get(f"/v1/runs/{other_run}/events", headers=AUTH_A)
        assert refused.status_code == 429  # the tenant's cap
        assert refused.json()["detail"] == "this tenant has 4 streams open (the limit)"
        assert (await client.post("/v1/runs", json=slow, headers=AUTH_A)).status_code == 429
        # another tenant is not affected
        theirs = await client.post("/v1/runs", json={"agent": "echo", "input": "x"}, headers=AUTH_B)
        assert theirs.status_code == 200
        await held.aclose()
        # closed streams are counted out (once the server has seen the clients go)
        statuses = []
        for _ in range(100):
            async with client.stream("GET", f"/v1/runs/{other_run}/events", headers=AUTH_A) as again:
                statuses.append(again.status_code)
            if statuses[-1] == 200:
                break
            await asyncio.sleep(0.05)
        assert statuses[-1] == 200
        for target in (run_id, other_run):
            assert (await client.post(f"/v1/runs/{target}/cancel", headers=AUTH_A)).status_code == 202


@pytest.fixture(scope="module")
def throttled(mode: str, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if mode == "redis" else None
    server = LiveServer(
        create_app(agents=server_agents(), settings=settings_for(mode, redis, auth_failures=5))
    ).start()
    try:
        yield server
    finally:
        server.stop()


async def test_failed_authentication_is_throttled_per_address(throttled: LiveServer) -> None:
    """A burst of wrong keys from one address: 401 for the allowance, then 429 with ``Retry-After``
    for anything that address sends, a valid key included (it could otherwise go on guessing at full
    speed); the tenant's clients at other addresses are not locked out."""
    other_address = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
    async with (
        httpx.AsyncClient(base_url=throttled.url, timeout=httpx.Timeout(20.0)) as attacker,
        httpx.AsyncClient(
            base_url=throttled.url, timeout=httpx.Timeout(20.0), transport=other_address
        ) as tenant,
    ):
        statuses = []
        for attempt in range(40):  # a bounded burst
            wrong = {"Authorization": f"Bearer kw-guess-{attempt}"}
            statuses.append((await attacker.get("/v1/agents", headers=wrong)).status_code)
        assert statuses[:5] == [401] * 5
        assert set(statuses[5:]) == {429}
        refused = await attacker.get("/v1/agents", headers={"Authorization": "Bearer kw-guess-x"})
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 13
        assert refused.json()["detail"] == "too many failed authentications from this address"
        assert (await attacker.get("/v1/agents", headers=AUTH_A)).status_code == 429
        assert (await tenant.get("/v1/agents", headers=AUTH_A)).status_code == 200
        assert (await tenant.get("/v1/agents", headers=AUTH_B)).status_code == 200


async def test_a_flood_of_short_runs_stays_within_the_memory_budget(
    mode: str, request: pytest.FixtureRequest
) -> None:
    """A tenant's runs beyond its memory budget: the oldest finished ones are evicted (their records
    stay; a resume gets the ``chunks_expired`` error chunk, a resume at the last chunk a 204),
    another tenant's runs are untouched, and the store never counts more than the budgets allow — in
    Redis too, where what Redis itself reports for the kept keys (``MEMORY USAGE``) stays near the
    budget while the flood wrote several times as much."""
    budget = 64 * 1024
    redis = request.getfixturevalue("redis_url") if mode == "redis" else None
    settings = settings_for(mode, redis, tenant_run_bytes=budget, run_bytes=4 * budget)
    server = LiveServer(create_app(agents=server_agents(), settings=settings)).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=httpx.Timeout(20.0)) as client:
            theirs = await client.post("/v1/runs", json={"agent": "echo", "input": "kept"}, headers=AUTH_B)
            assert theirs.status_code == 200
            words = " ".join(f"w{n}" for n in range(400))  # ~2 KB of input: ~7 KB kept per run
            run_ids = []
            written = 0
            for _ in range(20):  # a bounded flood
                started = await client.post(
                    "/v1/runs", json={"agent": "echo", "input": words}, headers=AUTH_A
                )
                assert started.status_code == 200
                written += len(started.content)
                run_ids.append(started.headers["x-run-id"])
            oldest, newest = run_ids[0], run_ids[-1]
            record = await client.get(f"/v1/runs/{oldest}", headers=AUTH_A)
            assert record.status_code == 200
            assert record.json()["status"] == "completed"
            resumed = await client.get(f"/v1/runs/{oldest}/events", headers=AUTH_A)
            events, _, _ = parse_blocks(resumed.content)
            assert [event.chunk["type"] for event in events] == ["error"]
            assert events[0].chunk["data"]["code"] == "chunks_expired"
            at_end = {**AUTH_A, "Last-Event-ID": str(record.json()["last_seq"])}
            assert (await client.get(f"/v1/runs/{oldest}/events", headers=at_end)).status_code == 204
            store = server.app.state.manager.store
            if mode == "redis":  # the server's store is bound to its own event loop: read its counts here
                store = RedisRunStore(redis, prefix=settings.redis_prefix)
            try:
                assert await store.used_bytes("alpha") <= budget
                assert await store.used_bytes() <= 4 * budget
            finally:
                if mode == "redis":
                    await store.aclose()
            if mode == "redis":
                kept = await _redis_memory(redis, f"{settings.redis_prefix}run:*")
                assert written > 2 * budget  # what the flood streamed: ~140 KB
                assert kept <= budget * 3 // 2
            kept_events, _, _ = parse_blocks(
                (await client.get(f"/v1/runs/{newest}/events", headers=AUTH_A)).content
            )
            assert kept_events[-1].chunk["type"] == "done"
            other, _, _ = parse_blocks(
                (await client.get(f"/v1/runs/{theirs.headers['x-run-id']}/events", headers=AUTH_B)).content
            )
            assert other[-1].chunk["type"] == "done"
    finally:
        server.stop()


async def _redis_memory(url: str | None, pattern: str) -> int:
    """What Redis reports (``MEMORY USAGE``, every element sampled) for the keys matching ``pattern``."""
    assert url is not None
    probe = Redis.from_url(url)
    try:
        used = 0
        async for key in probe.scan_iter(match=pattern):
            used += await probe.memory_usage(key, samples=0) or 0
        return used
    finally:
        await probe.aclose()


@contextlib.contextmanager
def two_workers(redis: str, **env: str) -> Iterator[str]:
    """``kanawa serve --workers 2`` on Redis, the test agents; yields its URL."""
    port = free_port()
    variables = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "KANAWA_API_KEYS": f"{KEY_A}:alpha,{KEY_B}:beta",
        "KANAWA_REDIS_URL": redis,
        "KANAWA_REDIS_PREFIX": f"kanawa-test-{uuid.uuid4().hex[:8]}:",
        "KANAWA_SERVE_AGENTS": "tests.server.agents:server_agents",
        **env,
    }
    kanawa = os.path.join(os.path.dirname(sys.executable), "kanawa")
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [kanawa, "serve", "--workers", "2", "--port", str(port), "--host", "127.0.0.1"],
            env=variables,
            cwd=ROOT,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        try:
            for _ in range(400):
                with contextlib.suppress(OSError, httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200:
                        break
                if process.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(log.read().decode(errors="replace"))
                time.sleep(0.05)
            else:
                raise RuntimeError("kanawa serve --workers 2 did not start")
            yield f"http://127.0.0.1:{port}"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def _fresh_connections(url: str) -> httpx.AsyncClient:
    """A client that opens a new connection for every request, so both workers take requests."""
    limits = httpx.Limits(max_keepalive_connections=0, max_connections=8)
    return httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(20.0), limits=limits)


async def test_rate_limit_and_max_runs_hold_across_two_workers(request: pytest.FixtureRequest) -> None:
    redis = request.getfixturevalue("redis_url")
    with two_workers(redis, KANAWA_RATE_LIMIT="30", KANAWA_MAX_RUNS="2") as url:
        async with _fresh_connections(url) as client:
            answers = await asyncio.gather(*(client.get("/v1/agents", headers=AUTH_A) for _ in range(120)))
            passed = sum(answer.status_code == 200 for answer in answers)
            limited = [answer for answer in answers if answer.status_code == 429]
            # a bucket of 30 (it refills 0.5 a second: a second or two more while the burst lasts)
            assert 30 <= passed <= 33, passed
            assert len(limited) == 120 - passed
            assert all(int(answer.headers["retry-after"]) >= 1 for answer in limited)

            async def start() -> tuple[int, str | None]:
                request = client.build_request(
                    "POST", "/v1/runs", json={"agent": "slow", "input": "2"}, headers=AUTH_B
                )
                response = await client.send(request, stream=True)
                await response.aclose()  # the run goes on; its stream is not needed
                return response.status_code, response.headers.get("x-run-id")

            started = await asyncio.gather(*(start() for _ in range(4)))
            statuses = sorted(status for status, _ in started)
            assert statuses == [200, 200, 429, 429], statuses
            for status, run_id in started:
                if status == 200:
                    cancel = await client.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_B)
                    assert cancel.status_code == 202
            # the cancelled runs give their places back: a new run starts (bounded wait)
            for _ in range(100):
                status, run_id = await start()
                if status == 200:
                    break
                await asyncio.sleep(0.1)
            assert status == 200
            await client.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_B)
