"""Handoffs (seed 002 §3-1 "ハンドオフ"): an agent hands the conversation to another agent and gets it
back.

A handoff is offered to the model as a tool, ``transfer_to_<agent>``, so every tool-safety rule of the
loop applies to it unchanged (offered-tools check, argument validation, duplicate rules, guardrails on
tool calls). The story of one handoff:

1. The source's model calls ``transfer_to_eval(message="…")``.
2. The depth is the source run's ``handoff_depth`` + 1; past the limit (``MAX=3`` by default,
   ``Agent(max_handoff_depth=)``) :class:`~kanawa.loop.errors.HandoffDepthExceeded` aborts the whole
   run, however deep it was raised (seed 002 §7: "Coordinator abort").
3. The target runs on the conversation so far (without the source's system message and without the
   turn that asked for the handoff, whose calls are still unanswered), plus ``message`` when the model
   gave one, with the source run's ``deps``, tracer and streaming mode. Its events reach the source's
   stream as :class:`~kanawa.loop.events.NestedEvent` carrying the target's name, between
   :class:`~kanawa.loop.events.HandoffStarted` and :class:`~kanawa.loop.events.HandoffEnded`; the trace
   gets ``handoff_start`` / ``handoff_end`` events.
4. ``source.on_handoff_return(target, result, context)`` (override it, or pass ``on_return=`` to
   :class:`Handoff`) turns the target's :class:`~kanawa.loop.result.RunResult` into the tool result the
   source's model sees — by default the target's answer text — and the source's loop goes on.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from kanawa.context import RunContext
from kanawa.loop.errors import HandoffDepthExceeded
from kanawa.loop.events import HandoffEnded, HandoffStarted, NestedEvent
from kanawa.loop.result import RunResult
from kanawa.tools.base import Tool
from kanawa.tools.decorator import make_tool
from kanawa.trace.events import TraceEvent
from kanawa.types import AssistantMessage, Message, SystemMessage, UserMessage

if TYPE_CHECKING:
    from kanawa.agents.agent import Agent

MAX_HANDOFF_DEPTH = 3
"""Seed 002 §3-1: ``MAX=3`` — the fourth nested handoff raises ``HandoffDepthExceeded``."""

DEFAULT_HANDOFF_TIMEOUT = 600.0
"""Seconds a handed-off agent's whole run may take (it is a tool call of the source's loop, and a tool's
default timeout — a minute — is too short for an agent that runs tools of its own)."""

OnReturn = Callable[["Agent[Any, Any]", RunResult[Any], RunContext[Any]], Awaitable[str] | str]
"""``(target, result, context) -> text``: what the source's model is told when the target is done."""


@dataclass(frozen=True, slots=True)
class Handoff:
    """How an agent may hand off to ``target``: the tool's ``name`` (default ``transfer_to_<target>``)
    and ``description`` (default: the target's name and first instruction line), ``on_return`` (default:
    the source agent's :meth:`~kanawa.agents.agent.Agent.on_handoff_return`) and ``timeout`` (seconds
    for the target's whole run)."""

    target: Agent[Any, Any]
    _: KW_ONLY
    name: str | None = None
    description: str | None = None
    on_return: OnReturn | None = None
    timeout: float | None = DEFAULT_HANDOFF_TIMEOUT

    def tool_name(self) -> str:
        return self.name or transfer_tool_name(self.target.name)


def transfer_tool_name(agent_name: str) -> str:
    """``transfer_to_<agent>``, with anything a provider rejects in a tool name replaced by ``_``."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", agent_name.strip()).strip("_").lower() or "agent"
    return f"transfer_to_{slug}"[:64]


def handoff_tools(source: Agent[Any, Any], handoffs: Sequence[Agent[Any, Any] | Handoff]) -> list[Tool]:
    """The ``transfer_to_…`` tools of ``source``'s handoffs."""
    return [_handoff_tool(source, h if isinstance(h, Handoff) else Handoff(h)) for h in handoffs]


def _handoff_tool(source: Agent[Any, Any], handoff: Handoff) -> Tool:
    target = handoff.target
    description = handoff.description or _describe(target)

    async def transfer(
        ctx: RunContext[Any],
        message: Annotated[
            str, Field(description="What the other agent should do, in a sentence or two (optional).")
        ] = "",
    ) -> str:
        return await run_handoff(source, handoff, ctx, message)

    return make_tool(transfer, name=handoff.tool_name(), description=description, timeout=handoff.timeout)


def _describe(target: Agent[Any, Any]) -> str:
    first = next((line.strip() for line in target.instructions.splitlines() if line.strip()), "")
    about = f": {first[:200]}" if first else ""
    return f"Hand the conversation to the agent {target.name!r}{about}. It answers and hands back."


async def run_handoff(source: Agent[Any, Any], handoff: Handoff, ctx: RunContext[Any], message: str) -> str:
    """Run ``handoff.target`` on ``ctx``'s conversation and return what the source's model sees."""
    target = handoff.target
    depth = ctx.handoff_depth + 1
    limit = source.max_handoff_depth
    call_id = ctx.tool_call_id or ""
    if depth > limit:
        raise HandoffDepthExceeded(
            depth=depth, limit=limit, chain=(*ctx.handoff_path, source.name, target.name)
        )
    _trace(ctx, "handoff_start", source.name, target.name, depth, call_id)
    ctx.emit(HandoffStarted(ctx.step, source.name, target.name, depth, call_id))
    runner = target._start_handoff(
        _handed_over(ctx.messages, message), context=ctx, source=source.name, compaction=source.compaction
    )
    error: BaseException | None = None
    try:
        async for event in runner:
            ctx.emit(event if isinstance(event, NestedEvent) else NestedEvent(target.name, depth, event))
        result = runner.result
        on_return = handoff.on_return or source.on_handoff_return
        text = on_return(target, result, ctx)
        if not isinstance(text, str):
            text = await text
    except BaseException as exc:
        error = exc
        raise
    finally:
        _trace(ctx, "handoff_end", source.name, target.name, depth, call_id, error=error)
    ctx.emit(HandoffEnded(ctx.step, source.name, target.name, depth, call_id, text))
    return text


def _handed_over(conversation: Sequence[Message], message: str) -> list[Message]:
    """The conversation the target gets: no system message (the target brings its own), and not the
    source's last turn (its tool calls, this handoff included, have no results yet)."""
    messages: list[Message] = [m for m in conversation if not isinstance(m, SystemMessage)]
    if messages and isinstance(messages[-1], AssistantMessage) and messages[-1].tool_calls:
        messages.pop()
    if message.strip():
        messages.append(UserMessage(message))
    if not messages:
        raise ValueError("a handoff needs a conversation to hand over")
    return messages


def _trace(
    ctx: RunContext[Any],
    name: str,
    source: str,
    target: str,
    depth: int,
    call_id: str,
    *,
    error: BaseException | None = None,
) -> None:
    tracer = ctx.tracer
    if tracer is None or not tracer.enabled:
        return
    tracer.emit(
        TraceEvent(
            "handoff_start" if name == "handoff_start" else "handoff_end",
            tracer.session,
            source,
            run_id=ctx.run_id,
            step=ctx.step,
            call_id=call_id or None,
            error=None if error is None else type(error).__name__,
            data={"target": target, "depth": depth},
        )
    )


__all__ = [
    "DEFAULT_HANDOFF_TIMEOUT",
    "MAX_HANDOFF_DEPTH",
    "Handoff",
    "OnReturn",
    "handoff_tools",
    "run_handoff",
    "transfer_tool_name",
]
