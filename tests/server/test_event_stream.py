"""The run stream's own lifecycle (kanawa.server.http.event_stream): a gone client's stream ends while its
run goes on, a finished stream leaves no task behind, pings come from a timer while the stream is
idle, and a server told to exit ends its open streams instead of waiting for their runs."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from kanawa.server.http.app import create_app
from kanawa.server.http.direct import DirectSender
from kanawa.server.http.event_stream import PING, OpenStreams
from kanawa.server.http.protocols.kanawa_sse import sse_frames
from tests.server.agents import server_agents
from tests.server.conftest import KEY_A, LiveServer, free_port, settings_for
from tests.server.sse import AUTH_A, read_stream

ROOT = Path(__file__).resolve().parents[2]


def _streams(server: LiveServer) -> OpenStreams:
    streams: OpenStreams = server.app.state.streams
    return streams


def _until(condition: Any, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


@pytest.fixture(scope="module", params=["embedded", "redis"])
def served(request: pytest.FixtureRequest) -> Any:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    server = LiveServer(
        create_app(agents=server_agents(), settings=settings_for(request.param, redis))
    ).start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_gone_clients_stream_ends_at_once_and_its_run_goes_on(served: LiveServer) -> None:
    """The run sleeps 3 s a step: without the disconnect watcher its stream would stay open (and in
    the server's books) until the run's next chunk."""
    async with httpx.AsyncClient(base_url=served.url) as http:
        async with http.stream("POST", "/v1/runs", json={"agent": "slow", "input": "3"}, headers=AUTH_A) as r:
            run_id = r.headers["x-run-id"]
            assert _until(lambda: len(_streams(served)) == 1)
        started = time.monotonic()
        assert _until(lambda: len(_streams(served)) == 0, timeout=2.0)
        assert time.monotonic() - started < 1.5
        info = (await http.get(f"/v1/runs/{run_id}", headers=AUTH_A)).json()
        assert info["status"] == "running"  # a disconnect is not a cancel
        await http.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_A)


async def test_finished_streams_leave_no_task_and_no_timer_behind(served: LiveServer) -> None:
    streams = _streams(served)
    async with httpx.AsyncClient(base_url=served.url) as http:

        async def one() -> None:
            async with http.stream(
                "POST", "/v1/runs", json={"agent": "calc", "input": "2+3?"}, headers=AUTH_A
            ) as r:
                events, _ = await read_stream(r)
            assert events[-1].chunk["type"] == "done"

        await asyncio.gather(*(one() for _ in range(20)))
    # the disconnect watchers end by themselves once their responses are complete (nothing cancelled)
    assert _until(lambda: len(streams) == 0 and not streams._watchers)


async def test_pings_come_while_the_stream_is_idle_and_stop_when_it_is_closed() -> None:
    sent: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["body"])

    sender = DirectSender(send, encode=sse_frames)
    sender.keep_alive(0.02, PING)
    await asyncio.sleep(0.07)
    assert sent == []  # not attached: the response task holds the line and sends itself
    sender.attach(0)
    await asyncio.sleep(0.09)
    pings = len(sent)
    assert pings >= 2
    assert set(sent) == {PING}
    sender.close()
    await asyncio.sleep(0.07)
    assert len(sent) == pings
    assert sender.failed
    assert not sender.attached
    sender.attach(5)  # a closed sender never takes the line again
    assert not sender.attached
    await sender.wait()  # and a response task waiting on it goes on at once


def test_a_server_told_to_exit_ends_its_open_streams() -> None:
    """uvicorn waits for open responses before it shuts down: a stream of a run that sleeps 30 s a
    step would hold the exit for minutes. SIGINT must end the stream and the process within seconds."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(PYTHONPATH=str(ROOT), KANAWA_API_KEYS=f"{KEY_A}:alpha", KANAWA_GC_FREEZE="0")
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "kanawa"),
            "serve",
            "tests.server.agents:server_agents",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as http:
            for _ in range(300):
                try:
                    if http.get("/v1/agents", headers=AUTH_A).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.05)
            with http.stream("POST", "/v1/runs", json={"agent": "slow", "input": "30"}, headers=AUTH_A) as r:
                assert r.status_code == 200
                proc.send_signal(signal.SIGINT)
                started = time.monotonic()
                body = b"".join(r.iter_bytes())  # ends cleanly (a cut chunked body would raise)
                ended = time.monotonic() - started
        assert b"error" not in body
        assert ended < 5
        _, errors = proc.communicate(timeout=10)
        assert proc.returncode == 0, errors
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_clients_cut_at_random_points_leave_no_stream_open(served: LiveServer) -> None:
    """Forty clients drop their connections at random byte offsets, all at once, while their runs
    stream (and a step's burst may be going out directly from the run's writer): every stream must be
    out of the server's books soon after, and every run must still finish."""
    import random

    rng = random.Random(11)
    streams = _streams(served)
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:

        async def cut(offset: int) -> str:
            async with http.stream(
                "POST", "/v1/runs", json={"agent": "story", "input": "go"}, headers=AUTH_A
            ) as r:
                await read_stream(r, cut_after_bytes=offset)
                return str(r.headers["x-run-id"])

        run_ids = await asyncio.gather(*(cut(rng.randrange(1, 4000)) for _ in range(40)))
        assert _until(lambda: len(streams) == 0 and not streams._watchers)

        async def finished() -> bool:
            infos = [(await http.get(f"/v1/runs/{run_id}", headers=AUTH_A)).json() for run_id in run_ids]
            return all(info["status"] == "completed" for info in infos)

        deadline = time.monotonic() + 20
        while not await finished():
            assert time.monotonic() < deadline, "a run did not finish after its client left"
            await asyncio.sleep(0.1)


async def test_after_the_exit_signal_open_and_new_streams_end() -> None:
    """A request already under way when the server is told to exit opens its stream after the
    watcher ended the others: that stream must end too, or the graceful shutdown waits for its run."""
    from sse_starlette.sse import AppStatus

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        return None

    streams = OpenStreams()
    before = DirectSender(send, encode=sse_frames)
    before.attach(0)
    streams.opened(before, receive)
    watcher = asyncio.create_task(streams.end_at_shutdown())
    await asyncio.sleep(0.01)
    assert not before.failed
    AppStatus.should_exit = True
    try:
        await asyncio.wait_for(watcher, timeout=2)
    finally:
        AppStatus.should_exit = False
    assert before.failed
    after = DirectSender(send, encode=sse_frames)
    streams.opened(after, receive)
    assert after.failed
    after.attach(3)
    assert not after.attached
    for task in list(streams._watchers):
        task.cancel()
