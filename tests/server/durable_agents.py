"""Agents for the Celery-mode tests. ``counted`` counts its executions in Redis and, before running,
checks whether its call's result is already recorded in the run's checkpoint: running such a call
again would be a durability bug, and the tool itself counts it as a violation."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import redis

from kanawa import Agent, RunContext, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.types import AssistantMessage, ToolCall
from tests.server.agents import server_agents

ROUNDS = 4
ANSWER = "All four rounds are done and each ran once. " * 2


def _redis() -> tuple[redis.Redis, str]:
    return redis.Redis.from_url(os.environ["KANAWA_REDIS_URL"]), os.environ.get(
        "KANAWA_REDIS_PREFIX", "kanawa:"
    )


@tool
def counted(ctx: RunContext[Any], n: int) -> str:
    """Count one execution of round ``n``.

    Args:
        n: the round
    """
    client, prefix = _redis()
    try:
        run = ctx.run_id
        call_id = f"call_{n}"
        raw = client.get(f"{prefix}run:{run}:checkpoint")
        if raw is not None:
            recorded = {m.get("tool_call_id") for m in json.loads(raw)["messages"] if m["role"] == "tool"}
            if call_id in recorded:
                client.incr(f"{prefix}test:{run}:violations")
                client.expire(f"{prefix}test:{run}:violations", 600)
        client.incr(f"{prefix}test:{run}:executions:{call_id}")
        client.expire(f"{prefix}test:{run}:executions:{call_id}", 600)  # the Redis may be shared
    finally:
        client.close()
    return f"round {n} done"


async def _durable(request: ModelRequest) -> Script:
    await asyncio.sleep(0.03)
    done = len(request.tool_results)
    if done < ROUNDS:
        return AssistantMessage(tool_calls=(ToolCall(f"call_{done}", "counted", f'{{"n": {done}}}'),))
    return ANSWER


def agents() -> dict[str, Agent[Any, Any]]:
    registry = server_agents()
    registry["durable"] = Agent("durable", "Run the rounds.", [counted], FunctionLLM(_durable))
    return registry
