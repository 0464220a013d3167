"""A running agent's events as MCP progress messages (``notifications/progress``).

A host that sent a ``progressToken`` with ``tools/call`` sees the run as it streams: each piece of the
answer text, each tool call and result, each handoff — one notification apiece, ``progress`` counting
up. Reasoning, tool-argument deltas and bookkeeping steps are not shown (the first is the model's
private text, the rest repeat what a tool call step says in full). Events of a handed-off agent are
shown with its name in brackets.

A run the service runs reaches a transport as stored chunks, not events (it may run in another
process): :func:`chunk_progress` tells the same story from a chunk
(:mod:`kanawa.server.runs.chunks` names the types), so a host sees the same messages over HTTP as
over stdio.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kanawa.loop.events import (
    HandoffEnded,
    HandoffStarted,
    NestedEvent,
    ToolCallStep,
    ToolResultStep,
)
from kanawa.types import TextDelta


def progress_message(event: object) -> str | None:
    """What a host is told about ``event``, or ``None`` when it is not shown."""
    if isinstance(event, TextDelta):
        return event.text or None
    if isinstance(event, ToolCallStep):
        return f"calling {event.call.name}"
    if isinstance(event, ToolResultStep):
        outcome = "failed" if event.result.is_error else "answered"
        return f"{event.result.name} {outcome}"
    if isinstance(event, HandoffStarted):
        return f"handed over to {event.target}"
    if isinstance(event, HandoffEnded):
        return f"back from {event.target}"
    if isinstance(event, NestedEvent):
        inner = progress_message(event.event)
        return None if inner is None else f"[{event.agent}] {inner}"
    return None  # reasoning, argument deltas, thinking and final steps: nothing a host shows


def chunk_progress(chunk: Mapping[str, Any], *, top_agent: str) -> str | None:
    """What a host is told about a run's stored chunk, or ``None`` when it is not shown; chunks of
    an agent other than ``top_agent`` (the one called) come from a handed-off agent."""
    data = chunk.get("data")
    if not isinstance(data, dict):
        return None
    kind = chunk.get("type")
    message: str | None = None
    if kind == "delta":
        message = _delta_text(data)
    elif kind == "tool_call":
        message = f"calling {data.get('name')}"
    elif kind == "tool_response":
        message = f"{data.get('name')} {'failed' if data.get('is_error') else 'answered'}"
    elif kind == "handoff_start":
        message = f"handed over to {data.get('target')}"
    elif kind == "handoff_end":
        message = f"back from {data.get('target')}"
    agent = chunk.get("agent")
    if message is None or agent == top_agent:
        return message
    return f"[{agent}] {message}"


def batch_progress(chunks: Iterable[Mapping[str, Any]], *, top_agent: str) -> list[str]:
    """The messages of chunks that arrived together: as :func:`chunk_progress` says, but the text
    deltas of one agent that follow each other are one message — a host reading behind the run gets
    the same text in fewer notifications."""
    out: list[str] = []
    text_of: object = None  # the agent whose text the last message is, or None
    for chunk in chunks:
        data = chunk.get("data")
        agent = chunk.get("agent")
        if chunk.get("type") == "delta" and isinstance(data, dict):
            text = _delta_text(data)
            if text is None:
                continue  # reasoning: nothing is shown, and the text around it still joins up
            if text_of == agent and out:
                out[-1] += text
                continue
            out.append(text if agent == top_agent else f"[{agent}] {text}")
            text_of = agent
            continue
        message = chunk_progress(chunk, top_agent=top_agent)
        if message is not None:
            out.append(message)
            text_of = None
    return out


def _delta_text(data: Mapping[str, Any]) -> str | None:
    text = data.get("text")
    return text if isinstance(text, str) and text else None


__all__ = ["batch_progress", "chunk_progress", "progress_message"]
