"""Every example a docs page quotes as a fragment runs, as its page says to run it, against a local
server (issue 31 part 6).

A page may show part of a program (``<!-- fragment: examples/x.py -->``, :mod:`tests.docs.blocks`);
then the whole program must run. The protocol pages' programs talk to a server: here that is
``kanawa serve`` started the way docs/server.md starts it (``KANAWA_API_KEYS=… kanawa serve
myapp:agents``, with :mod:`tests.docs.served_agents` as ``myapp``), one process for the module, and
each example runs in its own process with the arguments its page gives. :data:`RUNS` says how each
one is run and what it must print; a fragment naming an example not listed there fails
:func:`test_every_quoted_example_is_run_here`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.docs.blocks import ROOT, python_blocks
from tests.docs.served_agents import research
from tests.server.conftest import free_port

pytestmark = pytest.mark.timeout(300)  # a server process that imports the server and both SDKs

KEY = "kw-docs-alice-0123456789abcdef"
QUOTED = sorted({block.fragment_of for block in python_blocks() if block.fragment_of})


@dataclass(frozen=True)
class Served:
    url: str


@dataclass(frozen=True)
class Run:
    """How the docs run one example: its arguments (given the server) and what it must print."""

    argv: Callable[[Served], list[str]]
    check: Callable[[list[str]], None]


def _a2a_client(lines: list[str]) -> None:
    assert lines == [
        f"streamed: {research('When was the Eiffel Tower built?')}",
        f"tool result: {research('Who designed it?')}",
    ]


def _a2a_server_client(lines: list[str]) -> None:
    assert lines == ["Hello!", "TASK_STATE_COMPLETED"]


def _mcp_http_client(lines: list[str]) -> None:
    assert lines[0] == "agents: echo, researcher, storyteller"
    assert lines[1:3] == ["  … calling look_up", "  … look_up answered"]
    assert "answer: A joint that holds without nails (notes on joinery; you asked: tell me)" in lines
    assert re.fullmatch(r"run: [0-9a-f]{32}", lines[-1])


RUNS: dict[str, Run] = {
    # docs/a2a.md: `python examples/a2a_client.py http://127.0.0.1:9999/ my-token` (any A2A agent)
    "examples/a2a_client.py": Run(lambda s: [f"{s.url}/a2a/researcher", KEY], _a2a_client),
    # docs/a2a.md: `python examples/a2a_server_client.py http://127.0.0.1:8000/a2a/echo my-key`
    "examples/a2a_server_client.py": Run(lambda s: [f"{s.url}/a2a/echo", KEY], _a2a_server_client),
    # docs/mcp-server.md: `python examples/mcp_http_client.py http://127.0.0.1:8000/mcp kw-alice-key
    # storyteller "tell me"`
    "examples/mcp_http_client.py": Run(
        lambda s: [f"{s.url}/mcp", KEY, "storyteller", "tell me"], _mcp_http_client
    ),
}


def test_every_quoted_example_is_run_here() -> None:
    assert QUOTED, "the pages quote no example: the collector is broken"
    assert set(QUOTED) <= set(RUNS), f"quoted as fragments but never run: {sorted(set(QUOTED) - set(RUNS))}"
    assert set(RUNS) <= set(QUOTED), f"run here but quoted nowhere: {sorted(set(RUNS) - set(QUOTED))}"


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KANAWA_", "OPENAI_", "ANTHROPIC_"))}
    env.update(PYTHONPATH=str(ROOT), NO_COLOR="1")
    return env


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``KANAWA_API_KEYS=<key>:alice kanawa serve tests.docs.served_agents:agents --port <free>``."""
    port = free_port()
    log = tmp_path_factory.mktemp("docs-serve") / "serve.log"
    kanawa = str(Path(sys.executable).parent / "kanawa")
    command = [
        kanawa,
        "serve",
        "tests.docs.served_agents:agents",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**_environment(), "KANAWA_API_KEYS": f"{KEY}:alice"},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            if httpx.get(f"{url}/v1/agents", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise RuntimeError(f"kanawa serve did not start: {log.read_text()[-2000:]}")
        time.sleep(0.1)
    try:
        yield Served(url)
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.mark.parametrize("example", QUOTED)
def test_a_quoted_example_runs_against_a_local_server(example: str, served: Served) -> None:
    run = RUNS[example]
    done = subprocess.run(
        [sys.executable, str(ROOT / example), *run.argv(served)],
        cwd=ROOT,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"{example} failed:\n{done.stderr[-3000:]}"
    run.check(done.stdout.splitlines())
