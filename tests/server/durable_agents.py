"""Agents for the Celery-mode tests. ``counted`` counts its executions in Redis and, before running,
checks whether its call's result is already recorded in the run's checkpoint: running such a call
again would be a durability bug, and the tool itself counts it as a violation.

``launcher`` stops for a person's approval of ``launch`` (which records the id of the process it ran
in), then does its rounds; ``capped`` calls ``held`` until ``max_tool_calls_per_tool`` stops it. Once
a test has set :func:`hold_key`, the next execution of ``held`` round :data:`HELD_ROUND` takes the key,
announces the process it runs in and waits — a deterministic point for the test to kill that
process; the round's re-execution on another worker goes on. (A flag in the run's input would change
the run's token counts, and the test compares the run with an uninterrupted one.) ``typed`` wants a
structured answer: its model holds the same way in the request for that answer (no tools, the
schema), and counts a violation if it is offered tools after it was asked for the answer."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import redis
from pydantic import BaseModel

from kanawa import Agent, RunContext, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.loop.config import AgentConfiguration
from kanawa.types import AssistantMessage, ToolCall, UserMessage
from tests.server.agents import server_agents

ROUNDS = 4
ANSWER = "All four rounds are done and each ran once. " * 2


def _redis() -> tuple[redis.Redis, str]:
    # an explicit socket timeout: a Celery worker process has a short default one, shorter than a wait
    # of the held round
    client = redis.Redis.from_url(os.environ["KANAWA_REDIS_URL"], socket_timeout=90)
    return client, os.environ.get("KANAWA_REDIS_PREFIX", "kanawa:")


def _count(client: redis.Redis, prefix: str, run: str, call_id: str) -> int:
    """Count one execution of ``call_id`` (returns how many there were), and a violation when its
    result was already recorded."""
    raw = client.get(f"{prefix}run:{run}:checkpoint")
    if raw is not None:
        recorded = {m.get("tool_call_id") for m in json.loads(raw)["messages"] if m["role"] == "tool"}
        if call_id in recorded:
            client.incr(f"{prefix}test:{run}:violations")
            client.expire(f"{prefix}test:{run}:violations", 600)
    executions = int(client.incr(f"{prefix}test:{run}:executions:{call_id}"))
    client.expire(f"{prefix}test:{run}:executions:{call_id}", 600)  # the Redis may be shared
    return executions


@tool
def counted(ctx: RunContext[Any], n: int) -> str:
    """Count one execution of round ``n``.

    Args:
        n: the round
    """
    client, prefix = _redis()
    try:
        _count(client, prefix, ctx.run_id, f"call_{n}")
    finally:
        client.close()
    return f"round {n} done"


HELD_ROUND = 1
CAP = 3


def hold_key(prefix: str) -> str:
    """Set it to make the next execution of the held round wait (to be killed)."""
    return f"{prefix}test:hold-next"


@tool
def held(ctx: RunContext[Any], n: int) -> str:
    """Count one execution of round ``n`` (the held round waits to be killed once after
    :func:`hold_key` was set).

    Args:
        n: the round
    """
    client, prefix = _redis()
    run = ctx.run_id
    try:
        _count(client, prefix, run, f"call_{n}")
        client.sadd(f"{prefix}test:{run}:calls", f"call_{n}")
        client.expire(f"{prefix}test:{run}:calls", 600)
        if n == HELD_ROUND and client.getdel(hold_key(prefix)) is not None:
            client.set(f"{prefix}test:{run}:holding", os.getpid(), ex=600)
            client.blpop([f"{prefix}test:{run}:never"], timeout=60)  # the test kills this process
    finally:
        client.close()
    return f"round {n} done"


@tool(requires_approval=True)
def launch(ctx: RunContext[Any]) -> str:
    """Launch (a person approves it first); records the process it ran in."""
    client, prefix = _redis()
    try:
        _count(client, prefix, ctx.run_id, "launch_1")
        client.rpush(f"{prefix}test:{ctx.run_id}:launch-pids", os.getpid())
        client.expire(f"{prefix}test:{ctx.run_id}:launch-pids", 600)
    finally:
        client.close()
    return "launched"


async def _durable(request: ModelRequest) -> Script:
    await asyncio.sleep(0.03)
    done = len(request.tool_results)
    if done < ROUNDS:
        return AssistantMessage(tool_calls=(ToolCall(f"call_{done}", "counted", f'{{"n": {done}}}'),))
    return ANSWER


LAUNCHED = "Launched, then all rounds ran once."


async def _launcher(request: ModelRequest) -> Script:
    await asyncio.sleep(0.03)
    done = len(request.tool_results)
    if done == 0:
        return AssistantMessage(tool_calls=(ToolCall("launch_1", "launch", "{}"),))
    if done - 1 < ROUNDS:
        n = done - 1
        return AssistantMessage(tool_calls=(ToolCall(f"call_{n}", "held", f'{{"n": {n}}}'),))
    return LAUNCHED


async def _capped(request: ModelRequest) -> Script:
    """Asks for one more round every time: only ``max_tool_calls_per_tool`` ends the run."""
    await asyncio.sleep(0.03)
    n = len(request.tool_results)
    return AssistantMessage(tool_calls=(ToolCall(f"call_{n}", "held", f'{{"n": {n}}}'),))


class Verdict(BaseModel):
    score: int


VERDICT = Verdict(score=7)


async def _typed(request: ModelRequest) -> Script:
    await asyncio.sleep(0.03)
    asked = bool(request.tool_results) and isinstance(request.messages[-1], UserMessage)
    if request.response_schema is None:
        if asked:  # asked for the structured answer, yet offered tools: the phase was lost
            client, prefix = _redis()
            try:
                client.incr(f"{prefix}test:typed-violations")
                client.expire(f"{prefix}test:typed-violations", 600)
            finally:
                client.close()
        if not request.tool_results:
            return AssistantMessage(tool_calls=(ToolCall("call_0", "counted", '{"n": 0}'),))
        return "I would say seven."
    client, prefix = _redis()
    try:
        token = client.getdel(hold_key(prefix))
        if token is not None:
            client.set(f"{prefix}test:{token.decode()}:holding", os.getpid(), ex=600)
            client.blpop([f"{prefix}test:never"], timeout=60)  # the test kills this process
    finally:
        client.close()
    return VERDICT.model_dump_json()


def agents() -> dict[str, Any]:
    """The agents, a composite servable (:mod:`tests.server.composite_agents`) and the agents of the
    A2A and ``/mcp`` Celery tests (:mod:`tests.server.protocols.celery_agents`)."""
    from tests.server.composite_agents import Relay
    from tests.server.protocols.celery_agents import celery_protocol_agents

    registry: dict[str, Any] = {**server_agents(), "relay": Relay(), **celery_protocol_agents()}
    registry["durable"] = Agent("durable", "Run the rounds.", tools=[counted], model=FunctionLLM(_durable))
    registry["launcher"] = Agent(
        "launcher", "Launch, then run the rounds.", tools=[launch, held], model=FunctionLLM(_launcher)
    )
    registry["capped"] = Agent(
        "capped",
        "Run rounds until stopped.",
        tools=[held],
        model=FunctionLLM(_capped),
        config=AgentConfiguration(max_tool_calls_per_tool=CAP),
    )
    registry["typed"] = Agent(
        "typed", "Grade it.", tools=[counted], model=FunctionLLM(_typed), output_type=Verdict
    )
    return registry
