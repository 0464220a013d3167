"""A run's state as JSON text: the conversation, the loop's counters, usage and the next ``seq``.

A checkpoint is written after every completed step (a tool round, a thinking step, the final answer)
so a run can continue from it: on another worker after its worker died (durable runs), or after a
human answered an approval request. It holds exactly what the loop needs to go on — the messages,
system message first, with every recorded tool result (so no completed call is executed again) —
plus what the loop counts over the whole run and must not forget on the way (the steps, towards
``max_steps``; the tool calls, towards ``max_tool_calls_per_tool`` and the duplicate-call guard; the
phase — a run asked for its structured answer stays without tools, its decode retries counted), the
usage and cost so far and the ``seq`` the next chunk gets.

The checkpoint saved when a person answers an approval request also carries their decisions: the run
goes on from it by running the approved calls first (wherever it goes on — in Celery mode, on a
worker). The first step completed after that saves a checkpoint without them, so a redelivered run
never applies a decision twice.

Every field added after the first version is optional on reading: a checkpoint saved by an older
version still loads (with no tool calls counted, the tool-use phase, no cost and no decisions).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from kanawa.loop.approval import Approvals
from kanawa.loop.state import ToolCallRecord
from kanawa.types import (
    AssistantMessage,
    ContentPart,
    FilePart,
    ImagePart,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)

_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cached_tokens",
    "requests",
    "cache_write_tokens",
)
"""A checkpoint's usage is these counts, in this order (a checkpoint written before a count was added
has fewer, and the missing ones read as 0)."""


def _part(part: ContentPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"kind": "text", "text": part.text}
    if isinstance(part, ImagePart):
        data = base64.b64encode(part.data).decode() if part.data is not None else None
        return {"kind": "image", "url": part.url, "data": data, "media_type": part.media_type}
    return {
        "kind": "file",
        "data": base64.b64encode(part.data).decode(),
        "media_type": part.media_type,
        "filename": part.filename,
    }


def _unpart(obj: dict[str, Any]) -> ContentPart:
    kind = obj.get("kind")
    if kind == "text":
        return TextPart(str(obj["text"]))
    if kind == "image":
        raw = obj.get("data")
        return ImagePart(
            url=obj.get("url"),
            data=base64.b64decode(raw) if raw is not None else None,
            media_type=str(obj.get("media_type", "image/png")),
        )
    if kind == "file":
        return FilePart(
            base64.b64decode(obj["data"]),
            media_type=str(obj.get("media_type", "application/octet-stream")),
            filename=obj.get("filename"),
        )
    raise ValueError(f"unknown content part kind {kind!r}")


def _call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "provider_details": dict(call.provider_details) if call.provider_details is not None else None,
        "invalid_arguments": call.invalid_arguments,
    }


def encode_message(message: Message) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        return {"role": "user", "parts": [_part(p) for p in message.parts]}
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "parts": [_part(p) for p in message.parts],
            "is_error": message.is_error,
            "name": message.name,
        }
    return {
        "role": "assistant",
        "text": message.text,
        "tool_calls": [_call(c) for c in message.tool_calls],
        "reasoning": [
            {"text": r.text, "provider": r.provider, "payload": dict(r.payload) if r.payload else None}
            for r in message.reasoning
        ],
        "provider_details": dict(message.provider_details) if message.provider_details else None,
    }


def decode_message(obj: dict[str, Any]) -> Message:
    role = obj.get("role")
    if role == "system":
        return SystemMessage(str(obj["content"]))
    if role == "user":
        return UserMessage([_unpart(p) for p in obj["parts"]])
    if role == "tool":
        return ToolMessage(
            str(obj["tool_call_id"]),
            [_unpart(p) for p in obj["parts"]],
            is_error=bool(obj.get("is_error")),
            name=str(obj.get("name", "")),
        )
    if role == "assistant":
        return AssistantMessage(
            text=str(obj.get("text", "")),
            tool_calls=tuple(
                ToolCall(
                    str(c["id"]),
                    str(c["name"]),
                    str(c["arguments"]),
                    provider_details=c.get("provider_details"),
                    invalid_arguments=c.get("invalid_arguments"),
                )
                for c in obj.get("tool_calls", ())
            ),
            reasoning=tuple(
                ReasoningPart(
                    text=str(r.get("text", "")), provider=str(r.get("provider", "")), payload=r.get("payload")
                )
                for r in obj.get("reasoning", ())
            ),
            provider_details=obj.get("provider_details"),
        )
    raise ValueError(f"unknown message role {role!r}")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a run stands after its last completed step."""

    agent: str
    messages: tuple[Message, ...]
    next_seq: int
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    fresh: bool = False
    """Nothing has run yet (the checkpoint a Celery-mode run starts from)."""
    tool_calls: tuple[ToolCallRecord, ...] = ()
    """The calls the loop accepted so far (``AgentLoopState.tool_call_history``)."""
    cost_usd: float | None = 0.0
    """USD spent so far (``None``: some response came from a model without a price)."""
    approvals: Approvals | None = None
    """A person's decisions the run goes on with (saved by the approval endpoint)."""
    decode_retries: int | None = None
    """The final-output phase with this many decode retries asked for; ``None``: the tool-use phase."""

    def dumps(self) -> str:
        return json.dumps(
            {
                "agent": self.agent,
                "messages": [encode_message(m) for m in self.messages],
                "next_seq": self.next_seq,
                "usage": [getattr(self.usage, name) for name in _USAGE_FIELDS],
                "steps": self.steps,
                "fresh": self.fresh,
                "tool_calls": [
                    [c.name, c.input_hash, c.timestamp, c.call_id, c.step] for c in self.tool_calls
                ],
                "cost_usd": self.cost_usd,
                "approvals": _encode_approvals(self.approvals),
                "decode_retries": self.decode_retries,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, text: str) -> Checkpoint:
        obj = json.loads(text)
        return cls(
            agent=str(obj["agent"]),
            messages=tuple(decode_message(m) for m in obj["messages"]),
            next_seq=int(obj["next_seq"]),
            usage=Usage(
                **{name: int(v) for name, v in zip(_USAGE_FIELDS, obj.get("usage", ()), strict=False)}
            ),
            steps=int(obj.get("steps", 0)),
            fresh=bool(obj.get("fresh", False)),
            tool_calls=tuple(
                ToolCallRecord(str(name), str(digest), float(at), call_id=str(call_id), step=int(step))
                for name, digest, at, call_id, step in obj.get("tool_calls", ())
            ),
            cost_usd=None if obj.get("cost_usd", 0.0) is None else float(obj.get("cost_usd", 0.0)),
            approvals=_decode_approvals(obj.get("approvals")),
            decode_retries=None if obj.get("decode_retries") is None else int(obj["decode_retries"]),
        )


def _encode_approvals(approvals: Approvals | None) -> dict[str, Any] | None:
    if approvals is None:
        return None
    return {"approved": list(approvals.approved), "rejected": dict(approvals.rejected)}


def _decode_approvals(obj: dict[str, Any] | None) -> Approvals | None:
    if obj is None:
        return None
    return Approvals(
        approved=tuple(str(i) for i in obj.get("approved", ())),
        rejected={str(k): str(v) for k, v in obj.get("rejected", {}).items()},
    )


__all__ = ["Checkpoint", "decode_message", "encode_message"]
