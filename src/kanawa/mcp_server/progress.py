"""A running agent's events as MCP progress messages (``notifications/progress``).

A host that sent a ``progressToken`` with ``tools/call`` sees the run as it streams: each piece of the
answer text, each tool call and result, each handoff — one notification apiece, ``progress`` counting
up. Reasoning, tool-argument deltas and bookkeeping steps are not shown (the first is the model's
private text, the rest repeat what a tool call step says in full). Events of a handed-off agent are
shown with its name in brackets.
"""

from __future__ import annotations

from kanawa.loop.steps import (
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


__all__ = ["progress_message"]
