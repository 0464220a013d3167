"""A running agent's events as MCP progress messages (``notifications/progress``).

A host that sent a ``progressToken`` with ``tools/call`` sees the run as it streams: each piece of the
answer text, each tool call and result, each handoff — one notification apiece, ``progress`` counting
up. Reasoning, tool-argument deltas and bookkeeping steps are not shown (the first is the model's
private text, the rest repeat what a tool call step says in full). Events of a handed-off agent are
shown with its name in brackets. A tool call is told when the model starts it (``ToolCallStarted``),
before the tool runs — the loop records the call step with its result, after it ran — and the step
of a call told already says nothing more.

A run the service runs reaches a transport as stored chunks, not events (it may run in another
process): the server's MCP door tells the same story from its chunks
(:mod:`kanawa.server.http.protocols.mcp.progress`), so a host sees the same messages over HTTP as
over stdio.
"""

from __future__ import annotations

from kanawa.loop.events import (
    HandoffEnded,
    HandoffStarted,
    NestedEvent,
    ToolCallStep,
    ToolResultStep,
)
from kanawa.types import TextDelta, ToolCallStarted


def progress_message(event: object, announced: set[str] | None = None) -> str | None:
    """What a host is told about ``event``, or ``None`` when it is not shown; ``announced`` holds
    the ids of the calls told at their start (one set per run)."""
    if isinstance(event, TextDelta):
        return event.text or None
    if isinstance(event, ToolCallStarted):
        if announced is None:
            return None
        announced.add(event.id)
        return f"calling {event.name}"
    if isinstance(event, ToolCallStep):
        return None if announced is not None and event.call.id in announced else f"calling {event.call.name}"
    if isinstance(event, ToolResultStep):
        outcome = "failed" if event.result.is_error else "answered"
        return f"{event.result.name} {outcome}"
    if isinstance(event, HandoffStarted):
        return f"handed over to {event.target}"
    if isinstance(event, HandoffEnded):
        return f"back from {event.target}"
    if isinstance(event, NestedEvent):
        inner = progress_message(event.event, announced)
        return None if inner is None else f"[{event.agent}] {inner}"
    return None  # reasoning, argument deltas, thinking and final steps: nothing a host shows


__all__ = ["progress_message"]
