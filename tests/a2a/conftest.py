"""A real A2A server process (``tests/a2a/remote_server.py``) on loopback for the A2A client tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOKEN = "a2a-test-token-6f1c0b9e4d2a7788"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def remote_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a running A2A server that requires ``Bearer TOKEN``."""
    port = free_port()
    log = tmp_path_factory.mktemp("a2a") / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.a2a.remote_server", "--port", str(port), "--token", TOKEN],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120  # a loaded machine takes seconds to import the SDK
    while True:
        try:
            with urllib.request.urlopen(f"{url}.well-known/agent-card.json", timeout=1):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise RuntimeError(f"the A2A test server did not start: {log.read_text()[-2000:]}") from None
            time.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
