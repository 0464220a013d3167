"""``kanawa serve`` as a user starts it serves ``/mcp``: the command prints the address, the official
``mcp`` client lists the agents and calls one, and the run is the key's tenant's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.mcp_server.test_http import session_of
from tests.server.conftest import free_port
from tests.server.sse import AUTH_A, AUTH_B, KEY_A, KEY_B

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """``kanawa serve tests.mcp_server.agents:agents`` with two tenants' keys; its ``/mcp`` address."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(
        PYTHONPATH=str(ROOT),
        COLUMNS="200",
        NO_COLOR="1",
        KANAWA_API_KEYS=f"{KEY_A}:alpha,{KEY_B}:beta",
        KANAWA_TEST_MCP_MARKER=str(ROOT / ".cache" / "unused-marker"),
    )
    command = [str(Path(sys.executable).parent / "kanawa"), "serve", "tests.mcp_server.agents:agents"]
    proc = subprocess.Popen(
        [*command, "--port", str(port), "--log-level", "warning"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        printed = []
        for _ in range(50):
            printed.append(proc.stdout.readline())
            found = re.search(r"mcp\s+(http://\S+/mcp)", printed[-1])
            if found:
                break
        else:
            raise AssertionError(f"no /mcp address was printed: {printed}")
        url = found.group(1)
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url.removesuffix("/mcp") + "/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "kanawa serve did not start"
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()


async def test_kanawa_serve_serves_the_agents_over_mcp(served: str) -> None:
    base = served.removesuffix("/mcp")
    async with session_of(base, KEY_A) as session:
        listed = [tool.name for tool in (await session.list_tools()).tools]
        judged = await session.call_tool("judge", {"input": "from the command"})
    assert listed == ["storyteller", "judge", "counter", "broken", "waiter"]
    assert judged.structured_content == {"topic": "from the command", "score": 7}
    assert judged.meta is not None
    run_id = judged.meta["kanawa/run_id"]
    mine = _run(f"{base}/v1/runs/{run_id}", AUTH_A)
    assert mine.json()["status"] == "completed"
    assert _run(f"{base}/v1/runs/{run_id}", AUTH_B).status_code == 404  # another tenant's: missing


def _run(url: str, auth: dict[str, str]) -> httpx.Response:
    return httpx.get(url, headers=auth, timeout=30)
