"""Memory a ``kanawa serve`` process holds for MCP clients that stop reading, against an earlier checkout.

Issue 30, finding 3: a client that sends ``tools/call`` over ``/mcp`` and never reads its answer kept
the whole answer buffered in the server (8 MB each, +115 MiB for 3) and was never cut. Here a server
process runs an agent whose answer is :data:`ANSWER_BYTES` of text in one delta; :data:`READERS`
raw sockets (receive buffer 4 KiB) each send that call in a session and read nothing. The server's
RSS is read from ``/proc`` when it is idle (after one answer read in full, so the allocator is warm),
once the stalled calls' runs have completed, again after the write timeout
(``KANAWA_SSE_WRITE_TIMEOUT``, :data:`WRITE_TIMEOUT` here) has passed twice over — each reader then
tells whether its connection was cut — and after the session is deleted (its event log, kept for
resumes, freed with it). RSS is what the process holds from the system; glibc's mmap threshold is
pinned (:data:`MMAP_THRESHOLD`) so that it follows what is alive rather than the allocator's history.

``--base PATH`` measures ``PATH/src`` (a checkout of an earlier commit) the same way in the same run.
Writes bench/results/mcp_stalled_readers.json and .md.
Run: ``python bench/mcp_stalled_readers.py --base ../kanawa-before``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, write_results

ANSWER_BYTES = 8 * 1024 * 1024
READERS = 3
WRITE_TIMEOUT = 5.0
MMAP_THRESHOLD = 128 * 1024
"""glibc's mmap threshold, pinned for the server: a large block freed goes back to the system at once
(by default glibc raises the threshold after the first large free, and later answers come from the
heap, whose freed pages RSS keeps counting)."""
RUN_TTL = 2.0
"""Finished runs leave the run store this soon, so that what stays is the protocol's (the run store's
share is bounded on its own: ``KANAWA_TENANT_RUN_BYTES``)."""
KEY = "kw-bench-mcp-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
PROTOCOL = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


def serve(port: int) -> None:
    """The server process: the ``big`` agent behind ``kanawa serve``'s app on loopback."""
    import uvicorn

    from kanawa import Agent
    from kanawa.llm.testing import FunctionLLM, ModelRequest, Script
    from kanawa.server.http.app import create_app
    from kanawa.server.http.head_limits import serve_config
    from kanawa.server.settings import ServerSettings
    from kanawa.types import AssistantMessage, LLMResponse, ResponseCompleted, StopReason, TextDelta

    def answer(request: ModelRequest) -> Script:
        text = "x" * ANSWER_BYTES
        return [
            TextDelta(text),
            ResponseCompleted(LLMResponse(AssistantMessage(text=text), StopReason.END_TURN)),
        ]

    settings = ServerSettings(
        api_keys=f"{KEY}:bench",
        rate_limit=0,
        auth_failures=0,
        sse_write_timeout=WRITE_TIMEOUT,
        gc_freeze=False,
    )
    app = create_app(
        agents={"big": Agent("big", "Answers at length.", model=FunctionLLM(answer))}, settings=settings
    )
    uvicorn.Server(serve_config(app, settings, host="127.0.0.1", port=port, log_level="warning")).run()


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _session(http: Any) -> dict[str, str]:
    """A session opened by hand: the headers of its requests."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "b", "version": "1"},
        },
    }
    opened = await http.post("/mcp", json=init, headers={**AUTH, "Accept": ACCEPT})
    headers = {**AUTH, "Accept": ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = PROTOCOL
    await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def _call(call_id: int) -> dict[str, Any]:
    params = {"name": "big", "arguments": {"input": "go"}}
    return {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": params}


def _stalled_reader(port: int, headers: dict[str, str], call_id: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    payload = json.dumps(_call(call_id)).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    sock.sendall(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{head}"
        f"Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )
    return sock


def _was_cut(sock: socket.socket) -> bool:
    """Whether the server closed this connection (read what is buffered; an open one times out)."""
    sock.settimeout(2.0)
    try:
        while sock.recv(1 << 16):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


async def measure(base: Path | None) -> dict[str, Any]:
    import httpx

    port = _free_port()
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(MMAP_THRESHOLD))
    if base is not None:
        env["PYTHONPATH"] = str(base / "src")
    server = await asyncio.create_subprocess_exec(sys.executable, __file__, "--serve", str(port), env=env)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:
            for _ in range(600):
                try:
                    await http.get("/v1/runs", headers=AUTH)
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            headers = await _session(http)
            warm = await http.post("/mcp", json=_call(2), headers=headers)  # read in full
            assert len(warm.content) > ANSWER_BYTES, warm.status_code
            await asyncio.sleep(1.0)
            idle = rss_bytes(server.pid)
            readers = [_stalled_reader(port, headers, 10 + n) for n in range(READERS)]
            for _ in range(1200):  # until the stalled calls' runs have completed
                runs = (await http.get("/v1/runs", headers=AUTH)).json()["runs"]
                if sum(run["status"] == "completed" for run in runs) >= 1 + READERS:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)
            stalled = rss_bytes(server.pid)
            await asyncio.sleep(2 * WRITE_TIMEOUT)
            after = rss_bytes(server.pid)
            cut = [_was_cut(sock) for sock in readers]
            for sock in readers:
                sock.close()
            await http.delete("/mcp", headers=headers)  # the session ends: its event log goes
            await asyncio.sleep(1.0)
            deleted = rss_bytes(server.pid)
    finally:
        server.terminate()
        await server.wait()
    mib = 1024 * 1024
    return {
        "rss_idle_mib": round(idle / mib, 1),
        "rss_stalled_mib": round(stalled / mib, 1),
        "rss_after_write_timeout_mib": round(after / mib, 1),
        "held_while_stalled_mib": round((stalled - idle) / mib, 1),
        "held_after_write_timeout_mib": round((after - idle) / mib, 1),
        "held_after_session_deleted_mib": round((deleted - idle) / mib, 1),
        "readers_cut": sum(cut),
        "readers": READERS,
    }


def table(results: dict[str, Any], base: str | None) -> str:
    lines = [
        "# MCP clients that stop reading",
        "",
        f"{READERS} raw `/mcp` clients (4 KiB receive buffer) each call a tool whose answer is "
        f"{ANSWER_BYTES // (1024 * 1024)} MiB and read nothing; the server's RSS over its idle RSS "
        f"once the runs completed, and after twice the write timeout ({WRITE_TIMEOUT:g} s)."
        + (f" `base` is `{base}`, measured in the same run." if base else ""),
        "",
        "| system | idle RSS | held while stalled | after the write timeout | after `DELETE` of the session"
        " | readers cut |",
        "|---|---|---|---|---|---|",
    ]
    for system, row in results.items():
        lines.append(
            f"| {system} | {row['rss_idle_mib']} MiB | +{row['held_while_stalled_mib']} MiB"
            f" | +{row['held_after_write_timeout_mib']} MiB | +{row['held_after_session_deleted_mib']} MiB"
            f" | {row['readers_cut']} of {row['readers']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="a checkout of an earlier commit to measure too")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    results: dict[str, Any] = {}
    if args.base is not None:
        results["base"] = asyncio.run(measure(args.base))
    results["kanawa"] = asyncio.run(measure(None))
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    base = None
    if args.base is not None:
        base = subprocess.run(
            ["git", "-C", str(args.base), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    data = {"machine": machine(), "measured": started, "base": base, **results}
    write_results("mcp_stalled_readers", data, table(results, base))


if __name__ == "__main__":
    main()
