"""One process of the shared-budget test: ``python -m tests.agents.budget._worker CONFIG_JSON``.

Runs ``runs`` agent runs concurrently against a Redis budget and prints one JSON line: per run, the
model requests it made, the tokens its responses reported and whether it was blocked.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from kanawa.agents.budget import TokenGuard
from kanawa.types import Usage
from tests.agents.budget._support import Counted, run_to_end


async def one_run(guard: TokenGuard, tool_turns: int) -> dict[str, Any]:
    async def pause() -> None:
        await asyncio.sleep(0.001)

    counted = Counted(
        tool_turns=tool_turns, usage=Usage(input_tokens=100, output_tokens=10, requests=1), pause=pause
    )
    usage, blocked = await run_to_end(counted.agent(guard))
    return {"requests": counted.requests, "tokens": usage.total_tokens, "blocked": blocked}


async def wait_for_all(config: dict[str, Any]) -> None:
    """Start together: each process checks in, then waits until every process has."""
    from redis.asyncio import Redis

    client = Redis.from_url(config["url"])
    try:
        await client.incr(config["ready_key"])
        for _ in range(1000):
            if int(await client.get(config["ready_key"]) or 0) >= config["processes"]:
                return
            await asyncio.sleep(0.01)
        raise SystemExit("the other processes did not start")
    finally:
        await client.aclose()


async def main(config: dict[str, Any]) -> None:
    await wait_for_all(config)
    guard = TokenGuard(
        redis_url=config["url"],
        key_prefix=config["prefix"],
        session=config["session"],
        max_requests=config.get("max_requests"),
        max_tokens=config.get("max_tokens"),
    )
    try:
        runs = await asyncio.gather(*(one_run(guard, config["tool_turns"]) for _ in range(config["runs"])))
    finally:
        await guard.aclose()
    print(json.dumps(runs))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
