"""Server CPU per streamed event of each wire protocol kanawa serves, against its own SSE chunks.

The same agent — a scripted model streaming :data:`DELTAS` text deltas, then its answer and usage —
is streamed through each protocol by the same app, in one process, in one run:

- ``kanawa_sse``: ``POST /v1/runs``, kanawa's chunk protocol (the reference);
- ``openai_responses``: ``POST /v1/responses`` with ``"stream": true`` (Responses streaming events);
- ``openai_chat``: ``POST /v1/chat/completions`` with ``"stream": true`` (``chat.completion.chunk``);
- ``ai_sdk``: ``POST /ai-sdk/{agent}``, the Vercel AI SDK's UI message stream (a chat of its own per
  request: no chat id);
- ``a2a``: ``POST /a2a/<agent>`` calling ``SendStreamingMessage`` (A2A 1.0 artifact-update events);
- ``a2a_v03``: the same endpoint calling A2A 0.3's ``message/stream`` (0.3 artifact-update events);
- ``mcp``: ``POST /mcp``, a ``tools/call`` with a ``progressToken`` on MCP protocol 2026-07-28 (one
  request, no session): each delta a ``notifications/progress`` on the call's SSE stream.

The app is driven through ASGI directly (no sockets, no HTTP parser, no client): a request is one
``http.request`` message, and ``send`` only counts the bytes. So what is measured is the server's
own work — the run, the store and the protocol's adapter — with uvicorn's per-send cost, the same for
every protocol, left out; a protocol's cost over kanawa's SSE is then as visible as it gets. Each
session's model yields to the event loop between deltas, as a provider's stream does between reads,
so every delta is its own event on the wire.

A measurement is :data:`SESSIONS` concurrent sessions; CPU is ``time.process_time()`` around it (the
process's user + system time: the whole batch, setup of each request included), divided by the deltas
streamed. The systems take turns for ``--reps`` rounds (a drift of the machine touches all of them
alike) and each system's median is reported, with its ratio to ``kanawa_sse`` (target ≤ 1.10×): the
median over the rounds of the system's cost ÷ the reference's in the same round (the ratio of the
two medians is reported beside it; on a quiet machine they agree to a percent or two).
``--profile SYSTEM`` prints a cProfile of one system's batch instead (where an adapter's cost is).
Writes bench/results/protocol_cost.json and .md. Run: ``python bench/protocol_cost.py`` (``make bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import pstats
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, write_results

DELTAS = 400
"""Text deltas per session's answer (8 characters each)."""
SESSIONS = 40
"""Sessions streamed at once in one measurement."""
TARGET = 1.10
KEY = "bench-key-0123456789"
RUN_TTL = 20.0
"""Seconds a finished bench run is kept: about two rounds of every system's sessions, swept as new
runs start, so the heap does not grow through the bench (longer than any one batch takes)."""
AGENT = "bench"
TEXT = "kanawa streams each chunk once, in order. "


FRESH = "{fresh}"
"""In a request body: replaced by a new id in each request (a conversation's id, which a protocol
that keeps conversations must not be sent twice at once)."""


@dataclass(frozen=True)
class Protocol:
    """How one system's streaming request is made."""

    path: str
    body: dict[str, Any]
    headers: tuple[tuple[bytes, bytes], ...] = ()


PROTOCOLS: dict[str, Protocol] = {
    "kanawa_sse": Protocol("/v1/runs", {"agent": AGENT, "input": "go"}),
    "openai_responses": Protocol("/v1/responses", {"model": AGENT, "input": "go", "stream": True}),
    "openai_chat": Protocol(
        "/v1/chat/completions",
        {"model": AGENT, "messages": [{"role": "user", "content": "go"}], "stream": True},
    ),
    "ag_ui": Protocol(
        f"/ag-ui/{AGENT}",
        {"threadId": FRESH, "runId": "run", "messages": [{"id": "m", "role": "user", "content": "go"}]},
    ),
    "ai_sdk": Protocol(
        f"/ai-sdk/{AGENT}", {"messages": [{"role": "user", "parts": [{"type": "text", "text": "go"}]}]}
    ),
    "a2a": Protocol(
        f"/a2a/{AGENT}",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendStreamingMessage",
            "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]}},
        },
    ),
    "a2a_v03": Protocol(
        f"/a2a/{AGENT}",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/stream",
            "params": {
                "message": {
                    "kind": "message",
                    "messageId": "m1",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "go"}],
                }
            },
        },
    ),
    # MCP protocol 2026-07-28: one POST per call, no session; each delta is a notifications/progress
    "mcp": Protocol(
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": AGENT,
                "arguments": {"input": "go"},
                "_meta": {
                    "progressToken": 1,
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        },
        (
            (b"accept", b"application/json, text/event-stream"),
            (b"mcp-protocol-version", b"2026-07-28"),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", AGENT.encode()),
        ),
    ),
}


def bench_agents(deltas: int) -> dict[str, Any]:
    """One agent whose model streams ``deltas`` 8-character text deltas, yielding to the loop between
    them, and reports its usage with its answer (as a provider does: no token estimate is made)."""
    from kanawa import Agent
    from kanawa.llm.testing import FunctionLLM
    from kanawa.llm.testing.models import ModelRequest, Script, response_from
    from kanawa.types import StreamEvent, Usage

    class DeltaLLM(FunctionLLM):
        """Each delta arrives in an event-loop turn of its own, like a provider's stream's reads."""

        async def stream(self, messages: Any, **kwargs: Any) -> AsyncIterator[StreamEvent]:  # type: ignore[override]
            async for event in super().stream(messages, **kwargs):
                if event.kind == "text_delta":
                    await asyncio.sleep(0)
                yield event

    text = (TEXT * ((deltas * 8) // len(TEXT) + 1))[: deltas * 8]
    reply = response_from(text, model="bench", usage=Usage(input_tokens=12, output_tokens=deltas, requests=1))

    def answer(request: ModelRequest) -> Script:
        model.requests.clear()
        return reply

    model = DeltaLLM(answer)
    return {AGENT: Agent(AGENT, "Stream.", tools=(), model=model)}


def make_app(deltas: int) -> Any:
    from kanawa.server import ServerSettings, create_app

    settings = ServerSettings(
        api_keys=f"{KEY}:bench",
        run_ttl=RUN_TTL,
        sse_ping=600,
        rate_limit=0,
        max_runs=100_000,
        max_streams=100_000,
        run_buffer=deltas + 100,
    )
    return create_app(agents=bench_agents(deltas), settings=settings)


async def request(app: Any, protocol: Protocol) -> tuple[int, int]:
    """One streaming request through ASGI: its status and the bytes of its body."""
    body = json.dumps(protocol.body).replace(FRESH, uuid.uuid4().hex).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": protocol.path,
        "raw_path": protocol.path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"authorization", f"Bearer {KEY}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *protocol.headers,
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    sent = False
    disconnected = asyncio.get_running_loop().create_future()
    status = 0
    size = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await disconnected  # the client stays until the response has ended
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, size
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            size += len(message.get("body", b""))
            if not message.get("more_body", False) and not disconnected.done():
                disconnected.set_result(None)

    await app(scope, receive, send)
    if not disconnected.done():
        disconnected.set_result(None)
    return status, size


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[None]:
    async with app.router.lifespan_context(app):
        yield


async def batch(app: Any, protocol: Protocol, sessions: int) -> tuple[float, int]:
    """``sessions`` concurrent streams: the process CPU seconds they took and their body bytes."""
    start = time.process_time()
    results = await asyncio.gather(*(request(app, protocol) for _ in range(sessions)))
    cpu = time.process_time() - start
    bad = [status for status, _ in results if status != 200]
    if bad:
        raise RuntimeError(f"{protocol.path} answered {bad[0]} (is the endpoint served?)")
    return cpu, sum(size for _, size in results)


async def measure(systems: list[str], reps: int, deltas: int, sessions: int) -> dict[str, Any]:
    app = make_app(deltas)
    runs: dict[str, list[float]] = {system: [] for system in systems}
    sizes: dict[str, int] = {}
    async with served(app):
        for system in systems:  # a warm-up round: imports, first-use caches
            await batch(app, PROTOCOLS[system], sessions)
        for round_ in range(reps):
            # each round starts with the next system: none always follows the same neighbour; and
            # each batch starts from a collected heap with only the last round's runs kept (RUN_TTL),
            # so a batch late in a round does not pay for the garbage of the ones before it
            shift = round_ % len(systems)
            for system in systems[shift:] + systems[:shift]:
                gc.collect()
                cpu, size = await batch(app, PROTOCOLS[system], sessions)
                runs[system].append(cpu / (sessions * deltas) * 1e6)
                sizes[system] = size // sessions
                print(system, f"{runs[system][-1]:.2f} µs/event", file=sys.stderr)
    reference = runs.get("kanawa_sse")
    out: dict[str, Any] = {}
    for system, values in runs.items():
        median = statistics.median(values)
        row: dict[str, Any] = {
            "cpu_us_per_event": round(median, 3),
            "cpu_us_per_event_runs": [round(v, 3) for v in values],
            "bytes_per_session": sizes[system],
            "ratio_vs_kanawa_sse": None,
            "ratio_of_medians": None,
        }
        if reference:
            # each round's ratio to the reference measured in the same round, a few seconds apart: a
            # drift of the machine between rounds cancels out (the target is judged on their median)
            paired = [value / ref for value, ref in zip(values, reference, strict=True)]
            row["ratio_vs_kanawa_sse"] = round(statistics.median(paired), 3)
            row["ratio_of_medians"] = round(median / statistics.median(reference), 3)
        out[system] = row
    return out


async def profile(system: str, deltas: int, sessions: int, top: int) -> None:
    app = make_app(deltas)
    async with served(app):
        await batch(app, PROTOCOLS[system], sessions)
        profiler = cProfile.Profile()
        profiler.enable()
        await batch(app, PROTOCOLS[system], sessions)
        profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(top)


def table(results: dict[str, Any], *, deltas: int, sessions: int, reps: int) -> str:
    lines = [
        "# Per-event server CPU of each wire protocol",
        "",
        f"`bench/protocol_cost.py`: one agent streaming {deltas} text deltas per session, {sessions} sessions",
        "at once, through each protocol of the same app in one process (ASGI, no sockets); the median of",
        f"{reps} rounds, the systems taking turns. CPU is the process's user + system time over the",
        "sessions, per delta streamed. *vs kanawa SSE* is the median over the rounds of each round's",
        "ratio to kanawa's SSE in that round (drift between rounds cancels); *ratio of medians* divides",
        f"the two medians. Target: ≤ {TARGET:.2f}× kanawa's SSE.",
        "",
        "| system | endpoint | CPU per event | vs kanawa SSE | ratio of medians | rounds (µs) | bytes per session |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    for system, row in results.items():
        ratio = row["ratio_vs_kanawa_sse"]
        mark = "" if ratio is None or ratio <= TARGET else " (over)"
        runs = ", ".join(f"{v:.2f}" for v in row["cpu_us_per_event_runs"])
        lines.append(
            f"| {system} | `POST {PROTOCOLS[system].path}` | {row['cpu_us_per_event']:.2f} µs | "
            f"{ratio:.2f}×{mark} | {row['ratio_of_medians']:.2f}× | {runs} | {row['bytes_per_session']:,} |"
        )
    return "\n".join(lines) + "\n"


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when it is installed: the loop ``kanawa serve`` runs on."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--systems", nargs="*", choices=list(PROTOCOLS), default=list(PROTOCOLS))
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--deltas", type=int, default=DELTAS)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--profile", choices=list(PROTOCOLS))
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    runner = asyncio.Runner(loop_factory=_loop_factory())
    with runner:
        if args.profile:
            runner.run(profile(args.profile, args.deltas, args.sessions, args.top))
            return
        results = runner.run(measure(args.systems, args.reps, args.deltas, args.sessions))
    data = {
        "machine": machine(),
        "deltas": args.deltas,
        "sessions": args.sessions,
        "reps": args.reps,
        "target_ratio": TARGET,
        **results,
    }
    if set(args.systems) == set(PROTOCOLS):
        write_results(
            "protocol_cost", data, table(results, deltas=args.deltas, sessions=args.sessions, reps=args.reps)
        )
    else:  # a partial run is printed, never written over the committed results
        print(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()
