"""Python heap an open SSE session holds in ``kanawa serve``, measured exactly, against an earlier checkout.

``bench/serve_load.py`` measures memory per session as RSS over a real server, which is what a user
pays but moves by a few KiB from run to run (allocator arenas, socket buffers, the client's pace).
This script measures the part kanawa's own code decides, without that noise: :data:`SESSIONS`
streams of the same scripted agent are opened at once through the app's ASGI interface (no sockets;
the driver of ``bench/protocol_cost.py``), and halfway through their answers ``tracemalloc`` compares
the heap with the heap before they started. The difference over the sessions is the heap each open
session holds, to the byte, for the embedded store and for the Redis store.

``--base PATH`` runs the same measurement with ``PATH/src`` first on ``PYTHONPATH`` (a checkout of an
earlier commit, e.g. from before the server's layers) in the same run, and reports ours against it.
Writes bench/results/session_heap.json and .md. Run: ``python bench/session_heap.py --base ../old``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, write_results
from protocol_cost import AGENT, KEY, PROTOCOLS, request, served

SESSIONS = 200
DELTAS = 60
PACE = 0.02
"""Seconds between deltas: the sessions stay open while the heap is compared halfway through."""
REDIS_URL = os.environ.get("KANAWA_BENCH_REDIS", "redis://127.0.0.1:6379/0")
TEXT = "kanawa streams each chunk once, in order. "
STORES = ("embedded", "redis")


def paced_agents() -> dict[str, Any]:
    """One agent whose model streams :data:`DELTAS` deltas :data:`PACE` seconds apart."""
    from kanawa import Agent
    from kanawa.llm.testing import FunctionLLM
    from kanawa.llm.testing.models import ModelRequest, Script, response_from
    from kanawa.types import StreamEvent, Usage

    class PacedLLM(FunctionLLM):
        async def stream(self, messages: Any, **kwargs: Any) -> AsyncIterator[StreamEvent]:  # type: ignore[override]
            async for event in super().stream(messages, **kwargs):
                if event.kind == "text_delta":
                    await asyncio.sleep(PACE)
                yield event

    text = (TEXT * ((DELTAS * 8) // len(TEXT) + 1))[: DELTAS * 8]
    reply = response_from(text, model="bench", usage=Usage(input_tokens=12, output_tokens=DELTAS, requests=1))

    def answer(request: ModelRequest) -> Script:
        model.requests.clear()
        return reply

    model = PacedLLM(answer)
    return {AGENT: Agent(AGENT, "Stream.", tools=(), model=model)}


async def heap_per_session(store: str) -> dict[str, Any]:
    from kanawa.server import ServerSettings, create_app

    chosen: dict[str, Any] = {
        "api_keys": f"{KEY}:bench",
        "run_ttl": 600,
        "sse_ping": 600,
        "rate_limit": 0,
        "max_runs": 100_000,
        "max_streams": 100_000,
        "run_buffer": 1000,
    }
    if store == "redis":
        chosen |= {"redis_url": REDIS_URL, "redis_prefix": f"kanawa-heap-{os.getpid()}:"}
    app = create_app(agents=paced_agents(), settings=ServerSettings(**chosen))
    protocol = PROTOCOLS["kanawa_sse"]
    async with served(app):
        await asyncio.gather(*(request(app, protocol) for _ in range(20)))  # imports, first-use caches
        gc.collect()
        tracemalloc.start(1)
        before = tracemalloc.take_snapshot()
        sessions = [asyncio.create_task(request(app, protocol)) for _ in range(SESSIONS)]
        await asyncio.sleep(DELTAS * PACE / 2)
        gc.collect()
        during = tracemalloc.take_snapshot()
        tracemalloc.stop()
        statuses = await asyncio.gather(*sessions)
    if any(status != 200 for status, _ in statuses):
        raise RuntimeError(f"a session was refused: {sorted({status for status, _ in statuses})}")
    grown = sum(stat.size_diff for stat in during.compare_to(before, "filename"))
    return {"heap_bytes_per_session": round(grown / SESSIONS), "sessions": SESSIONS}


def measure_checkout(base: Path | None, store: str) -> dict[str, Any]:
    """One measurement in a fresh interpreter (with ``base/src`` first on the path when given)."""
    env = dict(os.environ)
    if base is not None:
        env["PYTHONPATH"] = str(base / "src")
    proc = subprocess.run(
        [sys.executable, __file__, "--child", store],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def table(results: dict[str, Any], base: str | None) -> str:
    lines = [
        "# Python heap per open session (`bench/session_heap.py`)",
        "",
        f"{SESSIONS} kanawa SSE streams of a scripted agent open at once through the app's ASGI interface; "
        "`tracemalloc` compares the heap halfway through their answers with the heap before they started. "
        "The median of the rounds is shown, the rounds in brackets."
        + (f" `base` is commit `{base}`, measured in the same run, the two taking turns." if base else ""),
        "",
        "| store | system | heap per open session | rounds (bytes) | base over ours |",
        "|---|---|---:|---|---:|",
    ]
    for store in STORES:
        reference = results.get("base", {}).get(store, {}).get("heap_bytes_per_session")
        for system, stores in results.items():
            row = stores[store]
            ratio = (
                f"{reference / row['heap_bytes_per_session']:.3f}×" if reference and system != "base" else "–"
            )
            runs = ", ".join(str(value) for value in row["rounds"])
            lines.append(
                f"| {store} | {system} | {row['heap_bytes_per_session'] / 1024:.2f} KiB | {runs} | {ratio} |"
            )
    m = machine()
    lines += ["", "- Above 1.00× ours holds less than base.", f"- Python {m['python']} on {m['machine']}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", choices=STORES)
    parser.add_argument("--base", type=Path, help="a checkout of an earlier commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(heap_per_session(args.child))))
        return
    checkouts: dict[str, Path | None] = {"kanawa": None}
    if args.base is not None:
        checkouts = {"base": args.base.resolve(), "kanawa": None}
    results: dict[str, dict[str, Any]] = {name: {} for name in checkouts}
    for store in STORES:
        rounds: dict[str, list[int]] = {name: [] for name in checkouts}
        for _ in range(args.rounds):
            for name, path in checkouts.items():  # in turns
                rounds[name].append(measure_checkout(path, store)["heap_bytes_per_session"])
                print(store, name, rounds[name][-1], file=sys.stderr)
        for name, values in rounds.items():
            results[name][store] = {
                "heap_bytes_per_session": sorted(values)[len(values) // 2],
                "rounds": values,
            }
    write_results("session_heap", results, table(results, _commit(args.base) if args.base else None))


def _commit(checkout: Path) -> str:
    """The short commit id of ``checkout`` (its path when it is not a git checkout)."""
    found = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() or str(checkout)


if __name__ == "__main__":
    main()
