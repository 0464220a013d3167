"""A tool that prints cannot corrupt ``kanawa mcp``'s stdio protocol: every line the process writes
to stdout, to the end of its life, is a JSON-RPC message, and what the tool printed is on stderr.
(A host does not set ``PYTHONUNBUFFERED``: ``print`` fills ``sys.stdout``'s buffer, flushed at exit.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[2]
KANAWA = str(Path(sys.executable).parent / "kanawa")


def _message(body: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", **body}) + "\n"


def test_what_a_tool_prints_goes_to_stderr_not_into_the_protocol() -> None:
    requests = "".join(
        (
            _message(
                {
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "guard-test", "version": "1"},
                    },
                }
            ),
            _message({"method": "notifications/initialized"}),
            _message(
                {"id": 2, "method": "tools/call", "params": {"name": "shouter", "arguments": {"input": "go"}}}
            ),
        )
    )
    with subprocess.Popen(
        [KANAWA, "mcp", "tests.mcp_server.noisy_agents:agents"],
        cwd=REPO,
        env={
            name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"
        },  # as a host runs it
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdin.write(requests.encode())
        proc.stdin.flush()
        replies: list[dict[str, object]] = []
        for line in proc.stdout:  # the answer to the call arrives before stdin is closed
            replies.append(json.loads(line))
            if replies[-1].get("id") == 2:
                break
        proc.stdin.close()  # the host hangs up: the process flushes what it holds and ends
        rest = proc.stdout.read()
        stderr = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0, stderr
    for line in rest.splitlines():  # nothing but JSON-RPC after the answer either
        assert json.loads(line)["jsonrpc"] == "2.0", line
    answer = replies[-1]["result"]
    assert isinstance(answer, dict)
    assert not answer.get("isError"), answer
    assert "I said HELLO" in json.dumps(answer)
    for printed in ("print() from a tool", "sys.stdout.write from a tool", "os.write(1) from a tool"):
        assert printed in stderr
