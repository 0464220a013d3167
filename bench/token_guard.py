"""TokenGuard throughput: budget counter updates per second from 100 concurrent runs sharing one budget.

Workload (identical for every system): 100 concurrent runs of one agent, each run 10 model requests
(9 tool turns of one ``add`` call, then a text answer), all runs in one session. The model is a
scripted function (no network), so what is measured is the loop plus the guard.

Systems:
  - ``plain``: the runs without a guard (the floor);
  - ``token_guard_memory``: ``TokenGuard(max_tokens=…, max_requests=…, max_cost_usd=…)``, totals in
    this process;
  - ``token_guard_redis``: the same guard with ``redis_url=`` (atomic Lua scripts on a local Redis);
  - ``redis_hincrby``: 100 concurrent tasks sending bare ``HINCRBY`` commands through redis-py, the
    ceiling for one client connection pool on this machine.

A guarded request makes two counter updates (the reservation before it, the charge after it) and, for
a response that asks for tools, one read before the tools run. "increments/s" counts the updates.
Limits are set high enough never to trip. Redis: the one at 127.0.0.1:6379, else a ``redis-server``
started for the run on a free port.

Usage: ``python bench/token_guard.py [--rounds 15]`` (writes bench/results/token_guard.{json,md}).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, write_results

RUNS, REQUESTS_PER_RUN, WARMUP_ROUNDS = 100, 10, 1


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def redis_server() -> tuple[str, subprocess.Popen[bytes] | None]:
    if _answers(6379):
        return "redis://127.0.0.1:6379/0", None
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("no Redis at 127.0.0.1:6379 and no redis-server to start")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        if _answers(port):
            return f"redis://127.0.0.1:{port}/0", proc
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("redis-server did not start")


def build_agent(guard: Any) -> Callable[[], Awaitable[Any]]:
    from kanawa import Agent, AgentConfiguration, FunctionLLM, tool
    from kanawa.llm.testing import ModelRequest
    from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolCall, Usage

    @tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    usage = Usage(input_tokens=120, output_tokens=12, requests=1)

    def respond(request: ModelRequest) -> LLMResponse:
        turn = len(request.tool_results)
        if turn < REQUESTS_PER_RUN - 1:
            message = AssistantMessage(tool_calls=(ToolCall(f"c{turn}", "add", f'{{"a": {turn}, "b": 1}}'),))
            return LLMResponse(message, StopReason.TOOL_USE, usage=usage, model="gpt-5")
        return LLMResponse(AssistantMessage(text="done"), StopReason.END_TURN, usage=usage, model="gpt-5")

    model = FunctionLLM(respond, model="gpt-5")
    config = AgentConfiguration(max_steps=REQUESTS_PER_RUN + 1, max_tool_calls_per_tool=REQUESTS_PER_RUN)
    agent = Agent(
        "bench", "Add.", tools=[add], model=model, config=config, guardrails=[guard] if guard else []
    )

    async def run_once() -> Any:
        result = await agent.arun("add")
        if len(model.requests) > 2_000:
            model.requests.clear()
        return result

    return run_once


async def measure_runs(guards: dict[str, Any], rounds: int) -> dict[str, dict[str, Any]]:
    """Time one batch of 100 concurrent runs per system per round, the systems taking turns in every
    round (so a noisy neighbour on the shared machine slows them alike); medians over the rounds."""
    runners = {name: build_agent(guard) for name, guard in guards.items()}
    walls: dict[str, list[float]] = {name: [] for name in guards}
    for i in range(WARMUP_ROUNDS + rounds):
        for name, run_once in runners.items():
            started = time.perf_counter()
            results = await asyncio.gather(*(run_once() for _ in range(RUNS)))
            wall = time.perf_counter() - started
            assert all(r.usage.requests == REQUESTS_PER_RUN for r in results)
            if i >= WARMUP_ROUNDS:
                walls[name].append(wall)
    requests = RUNS * REQUESTS_PER_RUN
    rows: dict[str, dict[str, Any]] = {}
    for name, guard in guards.items():
        wall = statistics.median(walls[name])
        row: dict[str, Any] = {
            "wall_s_per_100_runs": round(wall, 4),
            "requests_per_s": round(requests / wall, 1),
            "rounds": rounds,
        }
        if guard is not None:
            row["increments_per_s"] = round(2 * requests / wall, 1)
            row["checked_requests"] = (await guard.totals()).requests
        rows[name] = row
    return rows


async def measure_hincrby(url: str, rounds: int) -> dict[str, Any]:
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    key = f"kanawa-bench:{uuid.uuid4().hex}"
    per_task = 2 * REQUESTS_PER_RUN
    walls = []
    try:
        for i in range(WARMUP_ROUNDS + rounds):

            async def task() -> None:
                for _ in range(per_task):
                    await client.hincrby(key, "n", 1)

            started = time.perf_counter()
            await asyncio.gather(*(task() for _ in range(RUNS)))
            if i >= WARMUP_ROUNDS:
                walls.append(time.perf_counter() - started)
    finally:
        await client.delete(key)
        await client.aclose()
    wall = statistics.median(walls)
    return {"increments_per_s": round(RUNS * per_task / wall, 1), "rounds": rounds}


async def run(rounds: int) -> None:
    from kanawa.agents.budget import MemoryBudgetStore, TokenGuard

    url, proc = redis_server()
    limits = {"max_tokens": 10**12, "max_requests": 10**9, "max_cost_usd": 10.0**6}
    results: dict[str, Any] = {}
    try:
        memory = TokenGuard(store=MemoryBudgetStore(), **limits)
        prefix = f"kanawa-bench:{uuid.uuid4().hex}:"
        async with TokenGuard(redis_url=url, key_prefix=prefix, **limits) as redis_guard:
            try:
                guards = {"plain": None, "token_guard_memory": memory, "token_guard_redis": redis_guard}
                results.update(await measure_runs(guards, rounds))
            finally:
                await redis_guard.reset()
        results["redis_hincrby"] = await measure_hincrby(url, rounds)
    finally:
        if proc is not None:
            proc.terminate()
            with suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
    plain = results["plain"]["wall_s_per_100_runs"]
    for name in ("token_guard_memory", "token_guard_redis"):
        row = results[name]
        extra = row["wall_s_per_100_runs"] - plain
        row["overhead_ms_per_request"] = round(1000 * extra / (RUNS * REQUESTS_PER_RUN), 4)
    data = {
        "workload": {"concurrent_runs": RUNS, "requests_per_run": REQUESTS_PER_RUN, "redis": url},
        "machine": machine(),
        **results,
    }
    write_results("token_guard", data, table(results))


def table(results: dict[str, Any]) -> str:
    lines = [
        f"# TokenGuard: {RUNS} concurrent runs × {REQUESTS_PER_RUN} model requests, one shared budget",
        "",
        "| system | wall per 100 runs (s) | model requests/s | counter increments/s | overhead per request (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in ("plain", "token_guard_memory", "token_guard_redis"):
        row = results[name]
        increments = f"{row['increments_per_s']:,.0f}" if "increments_per_s" in row else "—"
        overhead = f"{row['overhead_ms_per_request']:.3f}" if "overhead_ms_per_request" in row else "—"
        lines.append(
            f"| {name} | {row['wall_s_per_100_runs']:.3f} | {row['requests_per_s']:,.0f} | {increments} | {overhead} |"
        )
    raw = results["redis_hincrby"]
    lines.append(f"| redis_hincrby (bare redis-py, no agent) | — | — | {raw['increments_per_s']:,.0f} | — |")
    lines += [
        "",
        "Each guarded request makes 2 counter updates (reserve before, charge after) plus one read before",
        "its tools run; Redis updates are Lua scripts (atomic). Medians of the rounds (systems take turns in each round); 2 shared CPU cores.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    asyncio.run(run(args.rounds))


if __name__ == "__main__":
    main()
