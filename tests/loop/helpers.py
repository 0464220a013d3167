"""Shared builders for the loop tests: scripted responses, tool calls and a runner drain."""

from __future__ import annotations

from collections.abc import Sequence

from kanawa.loop.events import OutputT, RunEvent
from kanawa.loop.result import RunResult
from kanawa.loop.runner import AgentLoopRunner
from kanawa.types import (
    AssistantMessage,
    LLMResponse,
    Message,
    StopReason,
    SystemMessage,
    ToolCall,
    Usage,
    UserMessage,
)


def call(name: str, arguments: str = "{}", call_id: str | None = None) -> ToolCall:
    return ToolCall(call_id or f"call_{name}_{abs(hash(arguments)) % 10_000}", name, arguments)


def tools_response(
    *calls: ToolCall, stop: StopReason | None = StopReason.TOOL_USE, text: str = ""
) -> LLMResponse:
    return LLMResponse(
        AssistantMessage(text=text, tool_calls=tuple(calls)),
        stop,
        usage=Usage(input_tokens=10, output_tokens=5, requests=1),
        model="m",
    )


def text_response(text: str, stop: StopReason | None = StopReason.END_TURN) -> LLMResponse:
    return LLMResponse(
        AssistantMessage(text=text),
        stop,
        usage=Usage(input_tokens=10, output_tokens=5, requests=1),
        model="m",
    )


def conversation(text: str = "hi") -> list[Message]:
    return [SystemMessage("be brief"), UserMessage(text)]


async def drain(runner: AgentLoopRunner[OutputT]) -> tuple[list[RunEvent[OutputT]], RunResult[OutputT]]:
    events = [event async for event in runner]
    return events, runner.result


def kinds(events: Sequence[object]) -> list[str]:
    return [getattr(e, "kind", type(e).__name__) for e in events]
