"""Run the Node clients of ``tests/clients/node/`` (the official ``openai`` TypeScript SDK and the
Vercel AI SDK, installed by ``make node-clients`` from the committed lock) against a served app.

A script gets the server's ``/v1`` address and an API key through ``KANAWA_BASE_URL`` and
``KANAWA_API_KEY``, the variables the documented scripts read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
NODE_CLIENTS = ROOT / "tests" / "clients" / "node"
DOCUMENTED = sorted(p.name for p in NODE_CLIENTS.glob("*.mjs") if p.name != "probe.mjs")
"""The scripts the protocol pages show (every ``.mjs`` but the tests' own probe)."""


def missing_reason() -> str | None:
    """Why the Node clients cannot run here, or ``None`` when they can."""
    if shutil.which("node") is None:
        return "node is not installed: the OpenAI TypeScript SDK and Vercel AI SDK tests need Node.js 18+"
    if not (NODE_CLIENTS / "node_modules" / ".installed").is_file():
        return "the Node clients are not installed: run `make node-clients` (npm ci in tests/clients/node)"
    return None


@dataclass(frozen=True)
class NodeRun:
    """What one script did: its exit code and output."""

    returncode: int
    stdout: str
    stderr: str

    def lines(self) -> list[str]:
        assert self.returncode == 0, f"the script failed ({self.returncode}):\n{self.stderr[-4000:]}"
        return self.stdout.rstrip("\n").splitlines()

    def json(self) -> Any:
        return json.loads(self.lines()[-1])


def run_node(
    script: str,
    *args: str,
    base_url: str,
    api_key: str,
    extra_env: dict[str, str] | None = None,
    timeout: float = 60,
) -> NodeRun:
    """Run ``tests/clients/node/<script>`` with node against ``base_url`` (the server's ``/v1``),
    with ``extra_env`` added to its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KANAWA_"))}
    env.update(KANAWA_BASE_URL=base_url, KANAWA_API_KEY=api_key, NODE_NO_WARNINGS="1")
    env.update(extra_env or {})
    node = shutil.which("node")
    assert node is not None
    proc = subprocess.run(
        [node, script, *args],
        cwd=NODE_CLIENTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return NodeRun(proc.returncode, proc.stdout, proc.stderr)
