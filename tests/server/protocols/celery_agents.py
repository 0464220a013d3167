"""Agents the Celery-mode tests of A2A and ``/mcp`` drive (the workers load them through
:func:`tests.server.durable_agents.agents`). Everything they tell the test crosses processes through
the cluster's Redis, never an in-process event: the web process and the worker that runs the agent are
separate processes.

* ``locator`` calls ``whereami`` (which answers the id of the process it ran in), then answers with
  it: ``Ran in process <pid>.`` — the test checks that process is a pool process of a worker.
* ``gated`` tells :data:`TALE` in 8-character deltas and, after :data:`HALF` of them, waits until the
  test pushes to :func:`gate_key` of its question (noting ``waiting`` in :func:`mark_key` of its
  question); its answer ends with the process that told it. Cancelled while it waits, it writes
  ``cancelled`` there.
* ``sitter`` calls ``sit``, which writes ``started:<pid>:<run id>`` to :func:`mark_key` of its question and
  waits; cancelled, it writes ``cancelled:<pid>`` there.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any

import redis.asyncio as aioredis

from kanawa import Agent, RunContext, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.types import AssistantMessage, Message, StreamEvent, ToolCall, UserMessage

TALE = "A joiner cut two beams so true that they locked without a nail and held for three hundred years."
HALF = 5
"""Deltas ``gated`` sends before it waits for its gate."""
WAIT_S = 120
"""Longest wait of a gate or of ``sit`` (the test opens or cancels it long before)."""


def gate_key(prefix: str, question: str) -> str:
    """Push to it to let ``gated`` finish its answer to ``question``."""
    return f"{prefix}test:gate:{question}"


def mark_key(prefix: str, question: str) -> str:
    """Where ``gated`` and ``sit`` note what happened to the run of ``question``."""
    return f"{prefix}test:mark:{question}"


def told(pid: int) -> str:
    """How ``gated`` ends its answer."""
    return f" Told by process {pid}."


def _redis() -> tuple[aioredis.Redis, str]:
    client = aioredis.Redis.from_url(os.environ["KANAWA_REDIS_URL"], socket_timeout=WAIT_S + 30)
    return client, os.environ.get("KANAWA_REDIS_PREFIX", "kanawa:")


async def _mark(question: str, what: str) -> None:
    client, prefix = _redis()
    try:
        await client.set(mark_key(prefix, question), what, ex=600)
    finally:
        await client.aclose()


def _last_user_text(messages: Sequence[Message]) -> str:
    return next((m.text for m in reversed(messages) if isinstance(m, UserMessage)), "")


class RedisGatedLLM(FunctionLLM):
    """Streams its answer, stopping after :data:`HALF` text deltas until the question's gate (a Redis
    list) gets an item."""

    async def stream(self, messages: Sequence[Message], **kwargs: Any) -> AsyncIterator[StreamEvent]:  # type: ignore[override]
        question = _last_user_text(messages)
        sent = 0
        async for event in super().stream(messages, **kwargs):
            if event.kind == "text_delta":
                if sent == HALF:
                    client, prefix = _redis()
                    try:
                        await client.set(mark_key(prefix, question), "waiting", ex=600)
                        await client.blpop([gate_key(prefix, question)], timeout=WAIT_S)
                    except asyncio.CancelledError:
                        await asyncio.shield(_mark(question, "cancelled"))
                        raise
                    finally:
                        await client.aclose()
                sent += 1
            yield event


def _tale(request: ModelRequest) -> Script:
    return TALE + told(os.getpid())


@tool
def whereami() -> str:
    """Say which process this is."""
    return str(os.getpid())


def _locate(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("call_where", "whereami", "{}"),))
    return f"Ran in process {request.tool_results[-1].text}."


@tool
async def sit(ctx: RunContext[Any], question: str) -> str:
    """Wait until cancelled, noting it in Redis.

    Args:
        question: the question the run was asked (names the mark)
    """
    await _mark(question, f"started:{os.getpid()}:{ctx.run_id}")
    try:
        await asyncio.sleep(WAIT_S)
    except asyncio.CancelledError:
        await asyncio.shield(_mark(question, f"cancelled:{os.getpid()}"))
        raise
    return "never cancelled"


def _sitter(request: ModelRequest) -> Script:
    if not request.tool_results:
        arguments = json.dumps({"question": request.last_user_text})
        return AssistantMessage(tool_calls=(ToolCall("call_sit", "sit", arguments),))
    return "done sitting"


def celery_protocol_agents() -> dict[str, Agent[Any, Any]]:
    """``locator``, ``gated`` and ``sitter`` (module docstring)."""
    return {
        "locator": Agent("locator", "Say where it runs.", tools=[whereami], model=FunctionLLM(_locate)),
        "gated": Agent("gated", "Tell a tale, waiting half way.", tools=(), model=RedisGatedLLM(_tale)),
        "sitter": Agent("sitter", "Sit until cancelled.", tools=[sit], model=FunctionLLM(_sitter)),
    }
