"""Fixtures for budget tests: a real Redis (the one at 127.0.0.1:6379, else a private ``redis-server``
started once per test session on a free port), a fresh key prefix per test (other developers' tests
share the machine's Redis), and guards on either backend."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kanawa.agents.budget import MemoryBudgetStore, RedisBudgetStore, TokenGuard

DEFAULT_REDIS = ("127.0.0.1", 6379)


def _answers_ping(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_redis_server(binary: str, port: int, workdir: Path) -> subprocess.Popen[bytes]:
    """A private ``redis-server`` on ``port`` (no persistence), answering when this returns."""
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        if _answers_ping("127.0.0.1", port):
            return process
        time.sleep(0.05)
    process.kill()
    process.wait()
    pytest.fail("redis-server did not start")


def stop_redis_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://`` URL of a running Redis: the machine's at 127.0.0.1:6379 when it answers, else one
    started here (``redis-server`` from the system packages) for the whole test session."""
    if _answers_ping(*DEFAULT_REDIS):
        yield "redis://127.0.0.1:6379/0"
        return
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("no Redis answers at 127.0.0.1:6379 and redis-server is not installed")
    port = _free_port()
    process = start_redis_server(binary, port, tmp_path_factory.mktemp("redis"))
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop_redis_server(process)


@pytest.fixture
def key_prefix() -> str:
    """A key prefix no other test (of this run or of anyone else's) uses."""
    return f"kanawa-test:{uuid.uuid4().hex}:"


async def delete_keys(redis_url: str, key_prefix: str) -> None:
    """Delete a test's keys."""
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    try:
        keys = [key async for key in client.scan_iter(match=key_prefix + "*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


GuardFactory = Callable[..., TokenGuard]


@pytest.fixture(params=["memory", "redis"])
async def make_guard(request: pytest.FixtureRequest, key_prefix: str) -> AsyncIterator[GuardFactory]:
    """``make_guard(**kwargs)`` → a :class:`TokenGuard` on the backend of the test's parameter (every
    guard of one test shares the backend's store: one budget); closed after the test."""
    made: list[TokenGuard] = []
    backend: str = request.param
    if backend == "redis":
        url: str = request.getfixturevalue("redis_url")
        store: MemoryBudgetStore | RedisBudgetStore = RedisBudgetStore(url, key_prefix=key_prefix)
    else:
        store = MemoryBudgetStore()

    def factory(**kwargs: Any) -> TokenGuard:
        guard = TokenGuard(store=store, **kwargs)
        made.append(guard)
        return guard

    yield factory
    await store.aclose()
    if backend == "redis":
        await delete_keys(url, key_prefix)


@pytest.fixture(autouse=True)
def no_redis_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards built without ``store=``/``redis_url=`` keep their totals in memory here, even on a
    machine that sets ``KANAWA_REDIS_URL`` (the tests that want Redis say so)."""
    monkeypatch.delenv("KANAWA_REDIS_URL", raising=False)
