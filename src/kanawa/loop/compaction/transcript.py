"""A history as plain text for a summariser, in pieces that fit its request.

Rendering the older turns as a transcript (rather than sending them as messages) means the summary
request carries no tool calls at all: nothing to pair, nothing a provider could reject, and any
model can summarise any provider's history.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import assert_never

from kanawa.llm.tokens import TextCounter
from kanawa.types import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage


def render_message(message: Message) -> str:
    """One message as transcript lines: ``user: …``, ``assistant: …``, ``assistant called tool(args)``,
    ``tool result (tool): …``."""
    if isinstance(message, SystemMessage):
        return f"system: {message.content}"
    if isinstance(message, UserMessage):
        return f"user: {message.text}"
    if isinstance(message, AssistantMessage):
        lines = [f"assistant: {message.text}"] if message.text else []
        lines.extend(f"assistant called {call.name}({call.arguments})" for call in message.tool_calls)
        return "\n".join(lines) if lines else "assistant: (no text)"
    if isinstance(message, ToolMessage):
        failed = " failed" if message.is_error else ""
        return f"tool result{failed} ({message.name or message.tool_call_id}): {message.text}"
    assert_never(message)


def transcript_chunks(messages: Sequence[Message], *, max_tokens: int, count: TextCounter) -> Iterator[str]:
    """The transcript of ``messages`` in pieces of about ``max_tokens`` tokens, split between messages
    (a single longer message is cut by characters, at four per token)."""
    piece: list[str] = []
    size = 0
    for message in messages:
        text = render_message(message)
        tokens = count(text)
        if tokens > max_tokens:
            if piece:
                yield "\n".join(piece)
                piece, size = [], 0
            step = max_tokens * 4
            for start in range(0, len(text), step):
                yield text[start : start + step]
            continue
        if size + tokens > max_tokens and piece:
            yield "\n".join(piece)
            piece, size = [], 0
        piece.append(text)
        size += tokens
    if piece:
        yield "\n".join(piece)


__all__ = ["render_message", "transcript_chunks"]
