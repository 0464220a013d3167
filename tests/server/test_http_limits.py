"""Request heads under hostile clients (:mod:`kanawa.server.http.head_limits`): an oversized head, an
endless header line, too many headers and a head that never completes are refused with 431/408 and
a closed connection — by the in-process server the suite runs and by ``kanawa serve --workers 2``,
whose worker processes' memory is measured while endless heads are sent to them.

Raw sockets on loopback only; every loop is bounded in bytes and in time.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kanawa.server.http.app import create_app
from tests.server.agents import server_agents
from tests.server.conftest import LiveServer, free_port, settings_for
from tests.server.sse import AUTH_A, KEY_A

ROOT = Path(__file__).resolve().parents[2]
ENDLESS_CAP = 24 * 1024 * 1024
"""The most an endless head sends before the test gives up on the server refusing it."""


@pytest.fixture(scope="module")
def strict() -> Iterator[LiveServer]:
    settings = settings_for("embedded", None, max_head_bytes=8192, max_headers=20, head_timeout=0.5)
    server = LiveServer(create_app(agents=server_agents(), settings=settings)).start()
    try:
        yield server
    finally:
        server.stop()


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    return sock


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (10 s at most)."""
    data = b""
    try:
        while True:
            piece = sock.recv(65536)
            if not piece:
                return data
            data += piece
    except ConnectionResetError:
        return data


def _send_endless_head(port: int, *, cap: int = ENDLESS_CAP) -> tuple[int, bytes]:
    """One header line that never ends, 64 KiB at a time, until the server refuses it or ``cap``
    bytes are sent; how many bytes went out, and what the server answered."""
    sock = _connect(port)
    sent = 0
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        piece = b"a" * 65536
        while sent < cap:
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
        sock.settimeout(5)
        try:
            return sent, _answer(sock)
        except TimeoutError:
            return sent, b""
    finally:
        sock.close()


def _status(answer: bytes) -> int | None:
    found = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    return int(found.group(1)) if found else None


def test_an_oversized_finished_head_is_431_and_the_connection_closes(strict: LiveServer) -> None:
    with _connect(strict.port) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 100_000 + b"\r\n\r\n")
        answer = _answer(sock)
    assert _status(answer) == 431, answer[:200]
    assert b"8192 bytes" in answer


def test_an_endless_header_line_is_refused_before_it_grows(strict: LiveServer) -> None:
    sent, answer = _send_endless_head(strict.port)
    assert sent < ENDLESS_CAP, "the server read on without refusing the head"
    assert answer == b"" or _status(answer) == 431


def test_too_many_header_lines_are_431(strict: LiveServer) -> None:
    lines = b"".join(b"X-H%d: 1\r\n" % n for n in range(40))  # ~400 bytes: under the size limit
    with _connect(strict.port) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + lines + b"\r\n")
        answer = _answer(sock)
    assert _status(answer) == 431
    assert b"at most 20 header lines" in answer


@pytest.mark.parametrize("start", [b"", b"GET /healthz HTTP/1.1\r\nHost: x\r\n"], ids=["silent", "slow"])
def test_a_head_that_never_completes_times_out_with_408(strict: LiveServer, start: bytes) -> None:
    with _connect(strict.port) as sock:
        sock.sendall(start)
        answer = _answer(sock)  # the server closes it (head_timeout 0.5 s); recv gives up after 10 s
    assert _status(answer) == 408


def test_heads_within_the_limits_are_served_and_kept_alive(strict: LiveServer) -> None:
    with httpx.Client(base_url=strict.url) as client:
        for _ in range(3):  # one connection: the head timer restarts for each request
            response = client.get("/v1/agents", headers={**AUTH_A, "X-Pad": "p" * 6000})
            assert response.status_code == 200
            time.sleep(0.3)
        assert client.get("/healthz").status_code == 200


# ------------------------------------------------------------------- kanawa serve --workers 2


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False).stdout
    return [int(line) for line in out.split()]


def test_kanawa_serve_with_two_workers_refuses_hostile_heads_with_bounded_memory(
    redis_url: str, tmp_path: Path
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(
        PYTHONPATH=str(ROOT),
        KANAWA_API_KEYS=f"{KEY_A}:alpha",
        KANAWA_REDIS_URL=redis_url,
        KANAWA_REDIS_PREFIX=f"kanawa-test-heads-{port}:",
        KANAWA_HEAD_TIMEOUT="0.5",
        KANAWA_GC_FREEZE="0",
    )
    kanawa = str(Path(sys.executable).parent / "kanawa")
    log = tmp_path / "serve.log"
    log_file = log.open("w")
    proc = subprocess.Popen(  # uvicorn's lifecycle lines (info) go to stderr, access lines to stdout
        [kanawa, "serve", "--port", str(port), "--workers", "2", "--log-level", "info"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log_file,
        start_new_session=True,
    )
    try:
        for _ in range(400):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        else:
            pytest.fail("kanawa serve did not start")
        for _ in range(400):  # the second worker may still be starting when the first answers
            if log.read_text().count("Application startup complete") == 2:
                break
            time.sleep(0.05)
        workers = [pid for pid in _children(proc.pid) if b"spawn" in _cmdline(pid)]
        assert len(workers) == 2, (workers, log.read_text())
        before = {pid: _rss_kib(pid) for pid in workers}
        sent = [_send_endless_head(port, cap=ENDLESS_CAP)[0] for _ in range(6)]
        assert all(s < ENDLESS_CAP for s in sent), f"a worker read an endless head on: {sent}"
        grown = {pid: _rss_kib(pid) - before[pid] for pid in workers}
        assert max(grown.values()) < 16 * 1024, f"worker RSS grew (KiB): {grown}"
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 40_000 + b"\r\n\r\n")
            assert _status(_answer(sock)) == 431, "the default limit is 32 KiB"
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            assert _status(_answer(sock)) == 408
        ok = httpx.get(f"http://127.0.0.1:{port}/v1/agents", headers={**AUTH_A, "X-Pad": "p" * 20_000})
        assert ok.status_code == 200
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=20)
        log_file.close()
