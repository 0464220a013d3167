"""The hostile-tenant figures of issue 30, each measured on a real ``kanawa serve`` on loopback.

1. **Slots left after 10 bad A2A stream requests**: with ``KANAWA_MAX_STREAMS=10``, ten
   ``SendStreamingMessage`` requests whose message's ``metadata`` holds ``NaN``; then how many streams the
   tenant can still open (held open on the ``hold`` agent until one is refused), and how many runs the
   bad requests started. A server that gives every slot back scores 10 and starts no run.
2. **MCP with 3 stalled readers**: three MCP sessions call the ``big`` tool (an 8 MiB answer) over
   sockets that never read; the server's RSS rise once the three runs have ended, and whether the
   server cut the readers (``KANAWA_SSE_WRITE_TIMEOUT=2``: the bytes each got when it finally read).
   For scale, the RSS rise of the same three calls read as they come (what making the answers costs).
3. **A2A ``ListTasks`` amplification**: 12 tasks of 8 MiB each, then one ``ListTasks`` with
   ``includeArtifacts``: the answer's bytes, the server's RSS rise, and the slowest answer another
   tenant got from ``GET /v1/runs`` meanwhile.

``python bench/hostile_figures.py --label after`` measures this checkout and writes its figures under
that label in ``bench/results/hostile_figures.json`` and ``.md``, keeping the others; ``--label before
--src <checkout>/src`` serves another checkout's kanawa (a ``git worktree`` of the commit before).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from _common import RESULTS, machine, write_results

ROOT = Path(__file__).resolve().parents[1]
KEY_A = "kw-bench-hostile-alpha-0123456789"
KEY_B = "kw-bench-hostile-beta-01234567890"
AUTH_A = {"Authorization": f"Bearer {KEY_A}"}
AUTH_B = {"Authorization": f"Bearer {KEY_B}"}
MAX_STREAMS = 10
BAD_REQUESTS = 10
STALLED = 3
TASKS = 12
MIB = 1024 * 1024
MCP_ACCEPT = "application/json, text/event-stream"
MCP_VERSION = "2025-11-25"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SOURCE: list[str] = []
"""``--src``: the ``src`` folder the server imports kanawa from (another checkout's: "before")."""


@contextlib.contextmanager
def served(**env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``kanawa serve bench.hostile_agents:agents`` on a free loopback port, with ``env`` set."""
    port = _free_port()
    environ = {
        **os.environ,
        **({"PYTHONPATH": SOURCE[0]} if SOURCE else {}),
        "KANAWA_API_KEYS": f"{KEY_A}:alpha,{KEY_B}:beta",
        "KANAWA_RATE_LIMIT": "0",
        "KANAWA_AUTH_FAILURES": "0",
        **env,
    }
    kanawa = str(Path(sys.executable).parent / "kanawa")
    command = [kanawa, "serve", "bench.hostile_agents:agents", "--port", str(port), "--log-level", "error"]
    process = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/v1/runs", headers=AUTH_A, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("kanawa serve did not start")
            time.sleep(0.1)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def settled_rss(pid: int, *, within: float = 20.0) -> float:
    """The process's RSS once three samples 0.5 s apart agree within 1 MiB (or after ``within`` s)."""
    samples = [rss_mib(pid)]
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        time.sleep(0.5)
        samples.append(rss_mib(pid))
        if len(samples) >= 3 and max(samples[-3:]) - min(samples[-3:]) < 1.0:
            break
    return samples[-1]


def a2a_message(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": os.urandom(8).hex(), "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def runs_of(url: str, agent: str) -> list[dict[str, Any]]:
    listed = httpx.get(f"{url}/v1/runs", headers=AUTH_A, timeout=30).json()["runs"]
    return [run for run in listed if run["agent"] == agent]


def wait_until(predicate: Any, *, within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("condition never held")
        time.sleep(0.2)


# --- 1. slots --------------------------------------------------------------------------------------


async def _open_streams(url: str, most: int) -> int:
    """How many ``hold`` runs' streams the tenant can open at once (stops at the first refusal)."""
    opened = 0
    async with (
        httpx.AsyncClient(base_url=url, headers=AUTH_A, timeout=30) as http,
        contextlib.AsyncExitStack() as held,
    ):
        for _ in range(most):
            response = await held.enter_async_context(
                http.stream("POST", "/v1/runs", json={"agent": "hold", "input": "wait"})
            )
            if response.status_code != 200:
                break
            opened += 1
    return opened


def slots_after_bad_streams() -> dict[str, Any]:
    bad = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": a2a_message("hello", metadata={"k": float("nan")})},
    }
    body = json.dumps(bad).encode()  # json writes NaN bare, as a hostile client does
    with served(KANAWA_MAX_STREAMS=str(MAX_STREAMS), KANAWA_MAX_RUNS="200") as (url, _):
        statuses = []
        for _ in range(BAD_REQUESTS):
            answer = httpx.post(
                f"{url}/a2a/echo",
                content=body,
                headers={**AUTH_A, "Content-Type": "application/json"},
                timeout=30,
            )
            statuses.append(answer.status_code)
        started = len(runs_of(url, "echo"))
        left = asyncio.run(_open_streams(url, MAX_STREAMS))
    return {
        "max_streams": MAX_STREAMS,
        "bad_requests": BAD_REQUESTS,
        "bad_request_statuses": sorted(set(statuses)),
        "runs_started_by_bad_requests": started,
        "slots_left": left,
    }


# --- 2. MCP stalled readers ------------------------------------------------------------------------


def _mcp_session(http: httpx.Client) -> str:
    opened = http.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": MCP_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "1"},
            },
        },
        headers={**AUTH_A, "Accept": MCP_ACCEPT},
    )
    opened.raise_for_status()
    session = opened.headers["mcp-session-id"]
    http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={
            **AUTH_A,
            "Accept": MCP_ACCEPT,
            "mcp-session-id": session,
            "mcp-protocol-version": MCP_VERSION,
        },
    )
    return session


def _stalled_call(port: int, session: str) -> socket.socket:
    """A ``tools/call`` of ``big`` sent over a socket that reads nothing (a tiny receive buffer)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "big", "arguments": {"input": "go"}},
        }
    ).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {KEY_A}\r\n"
        f"Accept: {MCP_ACCEPT}\r\nContent-Type: application/json\r\nmcp-session-id: {session}\r\n"
        f"mcp-protocol-version: {MCP_VERSION}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    return sock


def _drain(sock: socket.socket, *, within: float = 30.0) -> tuple[int, bool]:
    """Read what the server sends until it closes (or ``within`` s of silence): bytes, closed."""
    sock.settimeout(within)
    got = 0
    try:
        while chunk := sock.recv(1 << 20):
            got += len(chunk)
    except TimeoutError:
        return got, False
    return got, True


def _mcp_readers(*, stall: bool) -> tuple[float, float, list[tuple[int, bool]]]:
    """Three MCP calls of ``big`` on a fresh server, over sockets that read nothing until the end
    (``stall``) or read as the answer comes: baseline RSS, RSS once the answers are out (or stuck),
    and per socket the bytes it got and whether the server closed it."""
    with served(KANAWA_SSE_WRITE_TIMEOUT="2") as (url, process):
        port = int(url.rsplit(":", 1)[1])
        with httpx.Client(base_url=url, timeout=60) as http:
            sessions = [_mcp_session(http) for _ in range(STALLED)]
            warm = http.post(  # the SDK's call path loaded before the baseline
                "/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"input": "hi"}},
                },
                headers={
                    **AUTH_A,
                    "Accept": MCP_ACCEPT,
                    "mcp-session-id": sessions[0],
                    "mcp-protocol-version": MCP_VERSION,
                },
            )
            warm.raise_for_status()
        baseline = settled_rss(process.pid)
        sockets = [_stalled_call(port, session) for session in sessions]
        if not stall:
            got = [_drain(sock, within=120) for sock in sockets]
            return baseline, settled_rss(process.pid), got
        wait_until(lambda: sum(r["status"] != "running" for r in runs_of(url, "big")) >= STALLED)
        time.sleep(10)  # the answers are written (or stuck) and past the 2 s write timeout
        stuck = settled_rss(process.pid)
        delivered = [_drain(sock) for sock in sockets]
        for sock in sockets:
            sock.close()
        return baseline, stuck, delivered


def mcp_stalled_readers() -> dict[str, Any]:
    baseline, stuck, delivered = _mcp_readers(stall=True)
    base_reading, after_reading, _ = _mcp_readers(stall=False)
    return {
        "stalled_readers": STALLED,
        "answer_mib": 8,
        "rss_baseline_mib": round(baseline, 1),
        "rss_rise_mib": round(stuck - baseline, 1),
        "rss_rise_reading_mib": round(after_reading - base_reading, 1),
        "bytes_delivered_each": [got for got, _ in delivered],
        "cut_by_server": all(closed and got < 8 * MIB for got, closed in delivered),
    }


# --- 3. ListTasks ---------------------------------------------------------------------------------


def _rpc(url: str, method: str, params: dict[str, Any], *, key: dict[str, str] = AUTH_A) -> httpx.Response:
    return httpx.post(
        f"{url}/a2a/big",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers=key,
        timeout=300,
    )


async def _list_while_probing(url: str, pid: int) -> tuple[int, float, float, int]:
    """ListTasks with artifacts, while tenant B asks ``GET /v1/runs`` every 50 ms: the answer's
    bytes, B's slowest answer (ms), the server's peak RSS (MiB) and the answer's status."""
    slowest = 0.0
    peak = rss_mib(pid)
    done = asyncio.Event()

    async def probe(http: httpx.AsyncClient) -> None:
        nonlocal slowest, peak
        while not done.is_set():
            began = time.perf_counter()
            await http.get("/v1/runs", headers=AUTH_B)
            slowest = max(slowest, time.perf_counter() - began)
            peak = max(peak, rss_mib(pid))
            await asyncio.sleep(0.05)

    async with httpx.AsyncClient(base_url=url, timeout=300) as http:
        prober = asyncio.create_task(probe(http))
        answer = await http.post(
            "/a2a/big",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "ListTasks",
                "params": {"includeArtifacts": True, "pageSize": 100},
            },
            headers=AUTH_A,
        )
        peak = max(peak, rss_mib(pid))
        done.set()
        await prober
    return len(answer.content), slowest * 1000, peak, answer.status_code


def list_tasks_bytes() -> dict[str, Any]:
    with served() as (url, process):
        for _ in range(TASKS):
            sent = _rpc(
                url,
                "SendMessage",
                {"message": a2a_message("go"), "configuration": {"returnImmediately": True}},
            )
            sent.raise_for_status()
        wait_until(lambda: sum(r["status"] == "completed" for r in runs_of(url, "big")) >= TASKS)
        listed = _rpc(url, "ListTasks", {"pageSize": 100})  # warm: the A2A SDK loaded
        listed.raise_for_status()
        baseline = settled_rss(process.pid)
        size, slowest_ms, peak, status = asyncio.run(_list_while_probing(url, process.pid))
    return {
        "tasks": TASKS,
        "answer_mib_each": 8,
        "status": status,
        "list_answer_bytes": size,
        "rss_rise_mib": round(peak - baseline, 1),
        "other_tenant_slowest_ms": round(slowest_ms, 1),
    }


# --- results ---------------------------------------------------------------------------------------


def table(results: dict[str, Any]) -> str:
    labels = [label for label in ("before", "after") if label in results] + sorted(
        label for label in results if label not in {"before", "after", "machine"}
    )
    rows = [
        ("slots left after 10 bad A2A stream requests (of 10)", "slots", "slots_left"),
        ("runs started by those bad requests", "slots", "runs_started_by_bad_requests"),
        ("statuses of those bad requests", "slots", "bad_request_statuses"),
        ("MCP: server RSS rise with 3 stalled readers of 8 MiB (MiB)", "mcp", "rss_rise_mib"),
        ("MCP: the same with 3 readers that read (MiB)", "mcp", "rss_rise_reading_mib"),
        ("MCP: stalled readers cut by the server", "mcp", "cut_by_server"),
        ("MCP: bytes each stalled reader got", "mcp", "bytes_delivered_each"),
        ("ListTasks(includeArtifacts), 12 tasks of 8 MiB: answer bytes", "list", "list_answer_bytes"),
        ("ListTasks: server peak RSS rise (MiB)", "list", "rss_rise_mib"),
        (
            "ListTasks: another tenant's slowest GET /v1/runs meanwhile (ms)",
            "list",
            "other_tenant_slowest_ms",
        ),
    ]
    lines = [
        "# Hostile-tenant figures (issue 30)",
        "",
        "Each measured on a real `kanawa serve` on loopback (`bench/hostile_figures.py`).",
        "",
        "| figure | " + " | ".join(labels) + " |",
        "|---|" + "---:|" * len(labels),
    ]
    for name, group, key in rows:
        cells = []
        for label in labels:
            value = results[label].get(group, {}).get(key, "")
            cells.append(
                f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "RSS is the server process's resident size, which keeps its peak (Python's allocator returns",
        "little to the system): for MCP it is dominated by making the three 8 MiB answers (the row",
        "with readers that read), so what stalled readers cost shows best in whether they are cut and",
        "what they got: a reader cut by the write timeout got only what the kernel's socket buffers held.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="after", help="the key the figures are written under")
    parser.add_argument("--only", choices=["slots", "mcp", "list"], action="append")
    parser.add_argument("--src", help="serve kanawa from this src folder (another checkout's)")
    args = parser.parse_args()
    if args.src:
        SOURCE.append(str(Path(args.src).resolve()))
    path = RESULTS / "hostile_figures.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    figures = results.setdefault(args.label, {})
    measures = {"slots": slots_after_bad_streams, "mcp": mcp_stalled_readers, "list": list_tasks_bytes}
    for name in args.only or list(measures):
        figures[name] = measures[name]()
        print(name, figures[name], flush=True)
    results["machine"] = machine()
    write_results("hostile_figures", results, table(results))


if __name__ == "__main__":
    main()
