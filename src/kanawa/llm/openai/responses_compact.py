"""OpenAI's native compaction (``POST /v1/responses/compact``) as kanawa messages.

The endpoint takes a conversation (``instructions`` + ``input`` items, as a Responses request sends
them) and returns a shorter one: the user messages, then one opaque ``compaction`` item whose
``encrypted_content`` carries what the model needs of the rest. kanawa keeps that item the way it keeps
a reasoning item — an :class:`~kanawa.types.AssistantMessage` whose OpenAI
:class:`~kanawa.types.ReasoningPart` payload is the item — so it is replayed verbatim on the next
request (:mod:`kanawa.llm.openai.responses_payload`), survives a checkpoint like any message, and is
dropped for other providers as their reasoning would be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kanawa.types import (
    AssistantMessage,
    JsonObject,
    JsonValue,
    Message,
    ReasoningPart,
    UserMessage,
)

PROVIDER = "openai"


def compacted_messages(output: Sequence[JsonValue]) -> list[Message]:
    """The messages for a compaction's ``output`` items: user (and assistant) messages as text, the
    ``compaction`` item — and any item kanawa has no message for — as an opaque payload."""
    messages: list[Message] = []
    for raw in output:
        if not isinstance(raw, Mapping):
            continue
        item: JsonObject = dict(raw)
        role = item.get("role")
        if item.get("type", "message") == "message" and role in ("user", "assistant"):
            text = _text(item.get("content"))
            messages.append(UserMessage(text) if role == "user" else AssistantMessage(text=text))
        else:
            messages.append(AssistantMessage(reasoning=(ReasoningPart(provider=PROVIDER, payload=item),)))
    return messages


def _text(content: JsonValue) -> str:
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                pieces.append(str(part["text"]))
    return "".join(pieces)


__all__ = ["compacted_messages"]
