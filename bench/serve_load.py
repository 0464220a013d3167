"""Concurrent SSE sessions against ``kanawa serve`` (seed 002 §8 "Load: 同時 100 セッション").

Three servers, each in its own process with one uvicorn worker (uvloop and httptools, which uvicorn
picks up for all three alike), measured in one run by the same lean aiohttp client on uvloop (its own
process):

- ``bare``: a plain sse-starlette endpoint streaming the same chunks at the same pace — the ceiling;
- ``embedded``: kanawa's app, runs buffered in memory;
- ``redis``: kanawa's app with ``KANAWA_REDIS_URL`` (each chunk is an ``XADD``, group-committed; the
  SSE clients of a run started here are fed by its writer once the ``XADD`` succeeded);
- ``bare_gc`` (at 1,000 sessions only): the bare endpoint with the garbage-collector settings kanawa's
  server applies to itself (``KANAWA_GC_THRESHOLD``, ``KANAWA_GC_FREEZE``): not the target's ceiling
  but the reference that shows what kanawa's own code costs apart from those settings.

Every session starts a run of a scripted agent that streams 40 text deltas 20 ms apart, then its
final answer, usage and ``done`` chunk (the bare endpoint sends the same chunk texts). At 100, 500 and
1,000 concurrent sessions: sessions held at once, events/s (the 43 events both send per session;
kanawa's 4 ``trace`` chunks are counted apart), time to first event, latency of each event (client
receive time minus the chunk's ``time``), the added latency against the bare endpoint, errors, lost
chunks (a gap in ``seq``), server memory per open session (peak RSS minus the RSS after a warm-up,
over the sessions held at once) and server CPU time per session.

A thousand clients connecting at once make one run's throughput swing by a third either way (how
fast the connections are accepted decides how many streams overlap: see :data:`MIN_REPS_AT`), so
each point is measured ``--reps`` times (default 3; 5 at 1,000 sessions) on a fresh server, the
systems taking turns, and the run with the median events/s is reported, with the range of all.
Writes bench/results/serve_load.json and .md.
Run: ``python bench/serve_load.py`` (``make bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, percentile, write_results

DELTAS = 40
PACE = 0.02
TEXT = "kanawa streams each chunk once, in order. "
SESSIONS = (100, 500, 1000)
SYSTEMS = ("bare", "embedded", "redis", "bare_gc")
GC_REFERENCE_AT = 1000
"""``bare_gc`` runs at this many sessions only (where the collector's passes weigh most)."""
MIN_REPS_AT: dict[int, int] = {1000: 5}
"""Runs per point at least, where one run decides least: a thousand clients connect within ~0.3 s,
and uvloop (libuv) accepts one connection per event-loop iteration, so once the first streams keep
the loop busy the connections still waiting are accepted at a few hundred a second — a run in which
the last 1–2 % of them were not accepted before that takes about a second longer, whichever server
it is (traced: the client's connects all complete within 0.3 s, the server's ``connection_made`` for
the last ones comes ~2 s later, with no TCP retransmission)."""
KEY = "bench-key-0123456789"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


# ------------------------------------------------------------------------------------------- servers


def _paced_agents() -> dict[str, Any]:
    from kanawa import Agent
    from kanawa.llm.testing import FunctionLLM
    from kanawa.llm.testing.models import ModelRequest, Script, response_from
    from kanawa.types import StreamEvent, Usage

    class PacedLLM(FunctionLLM):
        """Streams its answer one delta every PACE seconds, like a model generating."""

        async def stream(self, messages: Any, **kwargs: Any) -> AsyncIterator[StreamEvent]:  # type: ignore[override]
            async for event in super().stream(messages, **kwargs):
                if event.kind == "text_delta":
                    await asyncio.sleep(PACE)
                yield event

    text = (TEXT * ((DELTAS * 8) // len(TEXT) + 1))[: DELTAS * 8]
    # the usage a provider reports with its answer (so no token estimate is made for it, as with a
    # real provider): the scripted model costs the server what a provider's stream would
    reply = response_from(text, model="bench", usage=Usage(input_tokens=12, output_tokens=80, requests=1))

    def answer(request: ModelRequest) -> Script:
        model.requests.clear()
        return reply

    model = PacedLLM(answer)
    return {"bench": Agent("bench", "Stream.", tools=(), model=model)}


def _bare_app(lifespan: Any = None) -> Any:
    from fastapi import FastAPI
    from sse_starlette import EventSourceResponse

    from kanawa.trace.serialize import iso_time

    app = FastAPI(lifespan=lifespan)
    text = (TEXT * ((DELTAS * 8) // len(TEXT) + 1))[: DELTAS * 8]
    pieces = [text[i : i + 8] for i in range(0, len(text), 8)]

    async def events() -> AsyncIterator[bytes]:
        seq = 0
        for piece in pieces:
            await asyncio.sleep(PACE)
            seq += 1
            body = {
                "time": iso_time(time.time()),
                "agent": "bench",
                "type": "delta",
                "data": {"text": piece},
                "seq": seq,
            }
            yield f"id: {seq}\r\ndata: {json.dumps(body, separators=(',', ':'))}\r\n\r\n".encode()
        for kind, data in (
            ("final", {"step": 1, "output": text, "text": text}),
            ("usage", {"requests": 1}),
            ("done", {"status": "completed", "termination_reason": "completed"}),
        ):
            seq += 1
            body = {"time": iso_time(time.time()), "agent": "bench", "type": kind, "data": data, "seq": seq}
            yield f"id: {seq}\r\ndata: {json.dumps(body, separators=(',', ':'))}\r\n\r\n".encode()

    @app.post("/v1/runs")
    async def runs() -> EventSourceResponse:
        return EventSourceResponse(events(), ping=600)

    return app


@contextlib.asynccontextmanager
async def _kanawa_gc_settings(app: Any) -> AsyncIterator[None]:
    """What kanawa's server does to the collector once it is up (``ServerSettings`` defaults)."""
    import gc

    from kanawa.server.settings import ServerSettings

    defaults = ServerSettings()
    gc.set_threshold(defaults.gc_threshold, *gc.get_threshold()[1:])
    if defaults.gc_freeze:
        gc.collect()
        gc.freeze()
    yield


def serve(system: str, port: int) -> None:
    import uvicorn

    if system in ("bare", "bare_gc"):
        app = _bare_app(_kanawa_gc_settings if system == "bare_gc" else None)
    else:
        try:
            from kanawa.server.http.app import create_app
        except ImportError:  # a checkout from before the server's layers (PYTHONPATH)
            from kanawa.server.app import create_app  # type: ignore[no-redef]
        from kanawa.server.settings import ServerSettings

        chosen: dict[str, Any] = {
            "api_keys": f"{KEY}:bench",
            "redis_url": REDIS_URL if system == "redis" else None,
            "redis_prefix": f"kanawa-bench-{os.getpid()}:",
            "run_ttl": 120,
            "sse_ping": 600,
            "rate_limit": 0,
            "max_runs": 100_000,
            "max_streams": 100_000,  # one tenant holds every session's stream; the other limits at defaults
            "run_buffer": 1000,
        }
        known = ServerSettings.__dataclass_fields__  # an earlier checkout (PYTHONPATH) may lack some
        settings = ServerSettings(**{name: value for name, value in chosen.items() if name in known})
        app = create_app(agents=_paced_agents(), settings=settings)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", backlog=4096, timeout_keep_alive=30)


# -------------------------------------------------------------------------------------------- client


def _parse_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


async def _session(http: Any, url: str, out: dict[str, Any], held: list[int]) -> None:
    start = time.time()
    first: float | None = None
    seqs: list[int] = []
    latencies: list[float] = []
    try:
        async with http.post(
            f"{url}/v1/runs",
            json={"agent": "bench", "input": "go"},
            headers={"Authorization": f"Bearer {KEY}"},
        ) as response:
            if response.status != 200:
                out["errors"] += 1
                return
            held[0] += 1
            out["held_max"] = max(out["held_max"], held[0])
            try:
                # whatever the socket holds at once, split into lines here: one await per read, not
                # one per line (the client shares the 2 cores with the server it measures)
                rest = b""
                done = False
                async for data in response.content.iter_any():
                    now = time.time()
                    lines = (rest + data).split(b"\n")
                    rest = lines.pop()
                    for line in lines:
                        if not line.startswith(b"data:"):
                            continue
                        chunk = json.loads(line[5:])
                        if first is None:
                            first = now
                        seqs.append(chunk["seq"])
                        if chunk["type"] == "trace":
                            out["trace_events"] += 1
                        else:
                            latencies.append(now - _parse_time(chunk["time"]))
                        if chunk["type"] == "done":
                            done = True
                            break
                    if done:
                        break
            finally:
                held[0] -= 1
    except Exception:
        out["errors"] += 1
        return
    if not seqs or seqs != list(range(1, len(seqs) + 1)) or len([s for s in seqs]) == 0:
        out["lost"] += 1
    out["events"] += len(latencies)
    out["latencies"].extend(latencies)
    if first is not None:
        out["ttfe"].append(first - start)


async def load(url: str, sessions: int, server_pid: int) -> dict[str, Any]:
    import aiohttp
    import psutil

    server = psutil.Process(server_pid)
    baseline = server.memory_info().rss
    cpu_before = server.cpu_times()
    out: dict[str, Any] = {
        "errors": 0,
        "lost": 0,
        "events": 0,
        "trace_events": 0,
        "latencies": [],
        "ttfe": [],
        "held_max": 0,
    }
    held = [0]
    peak = baseline
    stop = asyncio.Event()

    async def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, server.memory_info().rss)
            await asyncio.sleep(0.05)

    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    timeout = aiohttp.ClientTimeout(total=300)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        sampler = asyncio.create_task(sample())
        started = time.perf_counter()
        await asyncio.gather(*(_session(http, url, out, held) for _ in range(sessions)))
        elapsed = time.perf_counter() - started
        stop.set()
        await sampler
    cpu_after = server.cpu_times()
    server_cpu = (cpu_after.user + cpu_after.system) - (cpu_before.user + cpu_before.system)
    lat = [x * 1000 for x in out["latencies"]]
    ttfe = [x * 1000 for x in out["ttfe"]]
    return {
        "sessions": sessions,
        "held_max": out["held_max"],
        "errors": out["errors"],
        "lost": out["lost"],
        "events": out["events"],
        "trace_events": out["trace_events"],
        "events_per_s": round(out["events"] / elapsed, 1),
        "wall_s": round(elapsed, 3),
        "server_cpu_ms_per_session": round(server_cpu * 1000 / sessions, 2),
        "ttfe_p50_ms": round(percentile(ttfe, 50), 2),
        "ttfe_p99_ms": round(percentile(ttfe, 99), 2),
        "latency_p50_ms": round(percentile(lat, 50), 2),
        "latency_p99_ms": round(percentile(lat, 99), 2),
        "rss_baseline_mib": round(baseline / 2**20, 1),
        "rss_peak_mib": round(peak / 2**20, 1),
        "kib_per_session": round((peak - baseline) / 1024 / max(out["held_max"], 1), 1),
    }


# ------------------------------------------------------------------------------------------ driver


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int) -> None:
    for _ in range(400):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"server on port {port} did not start")


def measure(system: str, sessions: int, *, src: Path | None = None) -> dict[str, Any]:
    """One run of ``sessions`` against a fresh server; ``src``: the server imports kanawa from there
    (another checkout's ``src``, first on ``PYTHONPATH``) instead of this one's."""
    port = _free_port()
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(src), env.get("PYTHONPATH"))))
    proc = subprocess.Popen([sys.executable, __file__, "--serve", system, "--port", str(port)], env=env)
    try:
        _wait_port(port)
        warm = subprocess.run(
            [
                sys.executable,
                __file__,
                "--client",
                f"http://127.0.0.1:{port}",
                "--sessions",
                "20",
                "--pid",
                str(proc.pid),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        del warm
        run = subprocess.run(
            [
                sys.executable,
                __file__,
                "--client",
                f"http://127.0.0.1:{port}",
                "--sessions",
                str(sessions),
                "--pid",
                str(proc.pid),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        return dict(json.loads(run.stdout.strip().splitlines()[-1]))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ------------------------------------------------------------------------------------- slow readers

SLOW_READERS = 32
BULK_PIECES = 10
BULK_PIECE_CHARS = 1024 * 1024


def _bulk_agents() -> dict[str, Any]:
    """``bulk``: one step of :data:`BULK_PIECES` tool calls of a MiB of letters each (a ~10 MiB run)."""
    import hashlib

    from kanawa import Agent, tool
    from kanawa.llm.testing import FunctionLLM
    from kanawa.llm.testing.models import ModelRequest, Script
    from kanawa.loop.config import AgentConfiguration
    from kanawa.types import AssistantMessage, ToolCall

    letters = bytes(ord("a") + value % 26 for value in range(256))

    @tool
    def piece(n: int) -> str:
        """A large piece of text.

        Args:
            n: which piece
        """
        raw = b"".join(
            hashlib.sha256(b"%d-%d" % (n, index)).digest() for index in range(BULK_PIECE_CHARS // 32)
        )
        return raw.translate(letters).decode()

    def answer(request: ModelRequest) -> Script:
        if request.tool_results:
            return "sent"
        return AssistantMessage(
            tool_calls=tuple(ToolCall(f"c{n}", "piece", f'{{"n": {n}}}') for n in range(BULK_PIECES))
        )

    config = AgentConfiguration(max_tool_calls_per_tool=None)
    return {"bulk": Agent("bulk", "Send pieces.", tools=[piece], model=FunctionLLM(answer), config=config)}


def serve_bulk(system: str, port: int) -> None:
    import uvicorn

    from kanawa.server.http.app import create_app
    from kanawa.server.settings import ServerSettings

    settings = ServerSettings(
        api_keys=f"{KEY}:bench",
        redis_url=REDIS_URL if system == "redis" else None,
        redis_prefix=f"kanawa-bench-{os.getpid()}:",
        run_ttl=120,
        rate_limit=0,
    )
    uvicorn.run(
        create_app(agents=_bulk_agents(), settings=settings), host="127.0.0.1", port=port, log_level="error"
    )


def slow_readers(system: str) -> dict[str, Any]:
    """Server memory per client that asks for a ~10 MiB run's events and never reads (a 4 KiB receive
    buffer): peak RSS over 2 s after :data:`SLOW_READERS` of them connect, minus the RSS before."""
    import http.client

    import psutil

    port = _free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve-bulk", system, "--port", str(port)])
    readers: list[socket.socket] = []
    try:
        _wait_port(port)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
        connection.request("POST", "/v1/runs", body='{"agent": "bulk", "input": "go"}', headers=headers)
        response = connection.getresponse()
        run_id = response.getheader("x-run-id")
        run_bytes = len(response.read())
        connection.close()
        time.sleep(0.5)
        server = psutil.Process(proc.pid)
        before = server.memory_info().rss
        for _ in range(SLOW_READERS):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", port))
            sock.sendall(
                f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n\r\n".encode()
            )
            readers.append(sock)
        peak = before
        for _ in range(20):
            time.sleep(0.1)
            peak = max(peak, server.memory_info().rss)
        return {
            "readers": SLOW_READERS,
            "run_mib": round(run_bytes / 2**20, 1),
            "grown_mib": round((peak - before) / 2**20, 1),
            "kib_per_reader": round((peak - before) / 1024 / SLOW_READERS, 1),
        }
    finally:
        for sock in readers:
            sock.close()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def slow_table(rows: dict[str, dict[str, Any]]) -> str:
    lines = [
        "",
        "## Clients that never read",
        "",
        f"{SLOW_READERS} clients ask for the events of one finished run (its size below) with a 4 KiB "
        "receive buffer and never read; server memory is the peak RSS over 2 s after they connect "
        "minus the RSS before (the write timeout, 30 s, has not cut them yet).",
        "",
        "| system | run MiB | clients | server memory grown MiB | KiB per stalled client |",
        "|---|---:|---:|---:|---:|",
    ]
    for system, row in rows.items():
        lines.append(
            f"| {system} | {row['run_mib']} | {row['readers']} | {row['grown_mib']} | {row['kib_per_reader']:,} |"
        )
    return "\n".join(lines) + "\n"


def _range(run: dict[str, Any]) -> str:
    spread = run.get("events_per_s_runs") or []
    return f" [{min(spread):,.0f}–{max(spread):,.0f}]" if len(spread) > 1 else ""


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = [
        "# Concurrent SSE sessions (`bench/serve_load.py`)",
        "",
        f"Each session streams a scripted run: {DELTAS} text deltas {int(PACE * 1000)} ms apart, then final, usage and done "
        "(kanawa also sends its 4 trace chunks, not counted in events/s: both columns count the same 43 events per session). "
        "`bare_gc` (1,000 sessions only) is the bare endpoint with the garbage-collector settings kanawa's server applies to itself "
        "(young-generation threshold 10,000, startup objects frozen): a reference apart from the target's ceiling. "
        "One uvicorn worker per server (uvloop and httptools for all of them); client (aiohttp on uvloop), servers and "
        "redis-server share the 2 cores. Server CPU is the server process's user + system time over the run. "
        "Each row is the median (by events/s) of several runs on fresh servers, the systems taking turns; "
        "the events/s range of all runs is in brackets; errors and lost chunks are counted over all runs.",
        "",
        "| sessions | system | held at once | errors | lost | events/s | first event p50 / p99 ms | event latency p50 / p99 ms | added p50 / p99 ms | KiB per open session | server CPU ms per session |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for sessions in SESSIONS:
        bare = results["bare"].get(str(sessions))
        for system in SYSTEMS:
            r = results[system].get(str(sessions))
            if r is None:
                continue
            added = (
                f"{r['latency_p50_ms'] - bare['latency_p50_ms']:.1f} / {r['latency_p99_ms'] - bare['latency_p99_ms']:.1f}"
                if bare is not None and system != "bare"
                else "–"
            )
            lines.append(
                f"| {sessions} | {system} | {r['held_max']} | {r['errors']} | {r['lost']} | {r['events_per_s']:,.0f}{_range(r)} | "
                f"{r['ttfe_p50_ms']:.1f} / {r['ttfe_p99_ms']:.1f} | {r['latency_p50_ms']:.1f} / {r['latency_p99_ms']:.1f} | "
                f"{added} | {r['kib_per_session']:.1f} | {r['server_cpu_ms_per_session']:.2f} |"
            )
    lines.append("")
    for sessions in SESSIONS:
        bare = results["bare"].get(str(sessions))
        if bare is None:
            continue
        for system in ("embedded", "redis"):
            r = results[system].get(str(sessions))
            if r is None:
                continue
            lines.append(
                f"- {sessions} sessions, {system}: throughput {r['events_per_s'] / bare['events_per_s']:.2f}× the bare endpoint's, "
                f"memory per session {r['kib_per_session'] / max(bare['kib_per_session'], 0.1):.2f}× its, "
                f"server CPU per session {r['server_cpu_ms_per_session'] / max(bare['server_cpu_ms_per_session'], 0.01):.2f}× its"
            )
            tuned = results.get("bare_gc", {}).get(str(sessions))
            if tuned is not None:
                lines.append(
                    f"  - against bare_gc (the bare endpoint with kanawa's GC settings): throughput "
                    f"{r['events_per_s'] / tuned['events_per_s']:.2f}×, memory per session "
                    f"{r['kib_per_session'] / max(tuned['kib_per_session'], 0.1):.2f}×, server CPU per session "
                    f"{r['server_cpu_ms_per_session'] / max(tuned['server_cpu_ms_per_session'], 0.01):.2f}×"
                )
    m = machine()
    lines.append(
        f"- Python {m['python']} on {m['machine']}; latency = client receive time − the chunk's `time` (ms resolution)."
    )
    return "\n".join(lines) + "\n"


BEFORE_AFTER_SYSTEMS = ("embedded", "redis")
BEFORE_AFTER_TARGET = 0.95


def before_after(base: Path, reps: int, only: list[int]) -> dict[str, Any]:
    """This checkout's server against ``base``'s (another checkout of kanawa), in one run: at each
    size, ``reps`` rounds in which five servers take turns, each on a fresh process — the bare
    endpoint, then embedded and Redis, now and before; per system and size the median of each
    measure over the rounds, now ÷ before for throughput and for memory per session (before ÷ now:
    less memory is better), and each side's throughput and CPU per session against the bare
    endpoint's in the same rounds (the issue's target: ≥ 0.95× its events/s at 1,000 sessions)."""
    label = _checkout_label(base)
    out: dict[str, Any] = {"base": label, "reps": reps, "target_ratio": BEFORE_AFTER_TARGET}
    for sessions in only:
        runs: dict[str, list[dict[str, Any]]] = {}
        for round_ in range(reps):
            order = [(system, when) for system in BEFORE_AFTER_SYSTEMS for when in ("now", "before")]
            if round_ % 2:  # neither side always goes first
                order = [(system, when) for system, when in order[::-1]]
            for system, when in [("bare", "now"), *order]:
                run = measure(system, sessions, src=base / "src" if when == "before" else None)
                runs.setdefault(f"{system}/{when}", []).append(run)
                print(system, when, sessions, run, file=sys.stderr)
        bare = _medians(runs["bare/now"])
        out.setdefault("bare", {})[str(sessions)] = bare
        for system in BEFORE_AFTER_SYSTEMS:
            now, before = runs[f"{system}/now"], runs[f"{system}/before"]
            point = {"now": _medians(now), "before": _medians(before)}
            point["throughput_ratio"] = round(
                point["now"]["events_per_s"] / point["before"]["events_per_s"], 3
            )
            point["memory_ratio"] = round(
                point["before"]["kib_per_session"] / max(point["now"]["kib_per_session"], 0.1), 3
            )
            for when in ("now", "before"):
                side = point[when]
                side["throughput_vs_bare"] = round(side["events_per_s"] / bare["events_per_s"], 3)
                side["cpu_vs_bare"] = round(
                    side["server_cpu_ms_per_session"] / bare["server_cpu_ms_per_session"], 3
                )
            out.setdefault(system, {})[str(sessions)] = point
    return out


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def median(key: str) -> float:
        values = sorted(float(run[key]) for run in runs)
        middle = len(values) // 2
        return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2

    return {
        "events_per_s": round(median("events_per_s"), 1),
        "events_per_s_runs": [run["events_per_s"] for run in runs],
        "kib_per_session": round(median("kib_per_session"), 2),
        "kib_per_session_runs": [run["kib_per_session"] for run in runs],
        "server_cpu_ms_per_session": round(median("server_cpu_ms_per_session"), 3),
        "server_cpu_ms_per_session_runs": [run["server_cpu_ms_per_session"] for run in runs],
        "errors": sum(run["errors"] for run in runs),
        "lost": sum(run["lost"] for run in runs),
    }


def _checkout_label(base: Path) -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(base), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return str(base)
    return head.stdout.strip()


def before_after_table(data: dict[str, Any]) -> str:
    lines = [
        f"# The server now against `{data['base']}` (`bench/serve_load.py --base`)",
        "",
        "The load of `serve_load.md` (each session a run of 40 text deltas 20 ms apart), served by",
        f"this checkout and by `{data['base']}`, with the bare endpoint as the reference: five servers",
        "taking turns on fresh processes in each round (bare, then embedded and Redis, now and before);",
        f"each figure is the median of {data['reps']} rounds (all rounds in brackets). Targets: now ≥",
        f"{data['target_ratio']:.2f}× before in throughput and in memory per session (for memory, before ÷",
        "now: a server that holds less per session scores higher), and the issue's: ≥ 0.95× the bare",
        "endpoint's events/s at 1,000 sessions.",
        "",
        "| sessions | store | events/s now / before | throughput now ÷ before | ÷ bare now / before "
        "| KiB per session now / before | memory before ÷ now | server CPU ms per session now / before "
        "| CPU ÷ bare now / before | errors | lost |",
        "|---:|---|---|---:|---|---|---:|---|---|---:|---:|",
    ]
    for sessions, bare in data.get("bare", {}).items():
        runs = ", ".join(f"{v:,.0f}" for v in bare["events_per_s_runs"])
        cpu = ", ".join(f"{v:.2f}" for v in bare.get("server_cpu_ms_per_session_runs", []))
        lines.append(
            f"| {sessions} | bare | {bare['events_per_s']:,.0f} [{runs}] | – | – | "
            f"{bare['kib_per_session']:.1f} | – | {bare['server_cpu_ms_per_session']:.2f} [{cpu}] | – | "
            f"{bare['errors']} | {bare['lost']} |"
        )
    for system in BEFORE_AFTER_SYSTEMS:
        for sessions, point in data.get(system, {}).items():
            now, before = point["now"], point["before"]
            runs_now = ", ".join(f"{v:,.0f}" for v in now["events_per_s_runs"])
            runs_before = ", ".join(f"{v:,.0f}" for v in before["events_per_s_runs"])
            kib_now = ", ".join(f"{v:.1f}" for v in now["kib_per_session_runs"])
            kib_before = ", ".join(f"{v:.1f}" for v in before["kib_per_session_runs"])
            vs_bare = (
                f"{now['throughput_vs_bare']:.2f}× / {before['throughput_vs_bare']:.2f}×"
                if "throughput_vs_bare" in now
                else "–"
            )
            cpu_vs_bare = (
                f"{now['cpu_vs_bare']:.2f}× / {before['cpu_vs_bare']:.2f}×" if "cpu_vs_bare" in now else "–"
            )
            lines.append(
                f"| {sessions} | {system} | {now['events_per_s']:,.0f} [{runs_now}] / "
                f"{before['events_per_s']:,.0f} [{runs_before}] | {point['throughput_ratio']:.2f}× | "
                f"{vs_bare} | {now['kib_per_session']:.1f} [{kib_now}] / {before['kib_per_session']:.1f} "
                f"[{kib_before}] | {point['memory_ratio']:.2f}× | {now['server_cpu_ms_per_session']:.2f} / "
                f"{before['server_cpu_ms_per_session']:.2f} | {cpu_vs_bare} | {now['errors'] + before['errors']} | "
                f"{now['lost'] + before['lost']} |"
            )
    load = data.get("load_average")
    if load:
        lines.append("")
        lines.append(
            f"- Load average (1, 5, 15 min) before the run: {load['start']}; after it: {load['end']} "
            "(the machine's 2 cores are shared with other work: the rounds' ranges show how much it moved)."
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", choices=SYSTEMS)
    parser.add_argument("--serve-bulk", choices=("embedded", "redis"))
    parser.add_argument("--port", type=int)
    parser.add_argument("--client")
    parser.add_argument("--sessions", type=int)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--only", nargs="*", type=int, default=list(SESSIONS))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--systems",
        nargs="*",
        choices=SYSTEMS,
        default=list(SYSTEMS),
        help="measure only these (a quick comparison of two checkouts; the results file is left alone)",
    )
    parser.add_argument("--no-slow-readers", action="store_true", help="skip the slow-reader rows")
    parser.add_argument(
        "--base",
        type=Path,
        help="another checkout of kanawa: measure this one's server against it (before/after) instead",
    )
    args = parser.parse_args()
    if args.base is not None:
        load_start = [round(x, 2) for x in os.getloadavg()]
        data = before_after(args.base.resolve(), args.reps, args.only)
        data["load_average"] = {"start": load_start, "end": [round(x, 2) for x in os.getloadavg()]}
        write_results("serve_load_before_after", {"machine": machine(), **data}, before_after_table(data))
        return
    if args.serve:
        serve(args.serve, args.port)
        return
    if args.serve_bulk:
        serve_bulk(args.serve_bulk, args.port)
        return
    if args.client:
        import uvloop  # the client stays lean: the loop the servers run on too

        print(
            json.dumps(
                asyncio.run(load(args.client, args.sessions, args.pid), loop_factory=uvloop.new_event_loop)
            )
        )
        return
    results: dict[str, dict[str, dict[str, Any]]] = {system: {} for system in SYSTEMS}
    for sessions in args.only:
        runs: dict[str, list[dict[str, Any]]] = {system: [] for system in SYSTEMS}
        for _ in range(max(args.reps, MIN_REPS_AT.get(sessions, 1), 1)):
            for system in SYSTEMS:  # in turns: a drift of the machine touches all of them alike
                if system not in args.systems or (system == "bare_gc" and sessions != GC_REFERENCE_AT):
                    continue
                runs[system].append(measure(system, sessions))
                print(system, sessions, runs[system][-1], file=sys.stderr)
        for system, measured in runs.items():
            if not measured:
                continue
            ordered = sorted(measured, key=lambda run: run["events_per_s"])
            median = dict(ordered[len(ordered) // 2])
            median["errors"] = sum(run["errors"] for run in measured)  # over every run, not the median's
            median["lost"] = sum(run["lost"] for run in measured)
            median["events_per_s_runs"] = [run["events_per_s"] for run in measured]
            median["server_cpu_ms_per_session_runs"] = [run["server_cpu_ms_per_session"] for run in measured]
            results[system][str(sessions)] = median
    if args.no_slow_readers or set(args.systems) != set(SYSTEMS) or args.only != list(SESSIONS):
        print(json.dumps({system: points for system, points in results.items() if points}))
        return
    slow = {system: slow_readers(system) for system in ("embedded", "redis")}
    write_results(
        "serve_load",
        {"machine": machine(), "deltas": DELTAS, "pace_s": PACE, **results, "slow_readers": slow},
        table(results) + slow_table(slow),
    )


if __name__ == "__main__":
    main()
