"""Anthropic Messages API answers → kanawa types, for whole messages and for SSE streams.

Both paths end in :func:`parse_message`: :class:`StreamAssembler` rebuilds the message object the
server would have returned without streaming, so ``chat()`` and ``stream()`` give the same
:class:`~kanawa.types.LLMResponse` (seed 002 §3-3). Wire data is handled as JSON mappings
(``Mapping[str, Any]``: provider pass-through), because unknown block and event types must be skipped
rather than coerced into the wrong SDK model.

Mapping decisions (seed 003 stop-reason table):

* ``end_turn`` → END_TURN, ``tool_use`` → TOOL_USE, ``max_tokens`` → MAX_TOKENS, ``stop_sequence`` →
  STOP_SEQUENCE; ``model_context_window_exceeded`` → MAX_TOKENS (output cut short by a limit);
  ``refusal`` → END_TURN (a final answer, possibly empty); ``pause_turn`` and anything unknown → ``None``
  (the loop then falls back to tools → text → empty). The raw value is kept in
  ``AssistantMessage.provider_details["stop_reason"]``.
* Text blocks are concatenated; ``tool_use`` → ``ToolCall(id, name, json.dumps(input))``;
  ``thinking`` / ``redacted_thinking`` → ``ReasoningPart(provider="anthropic", payload=<the block>)``
  so the signature round-trips verbatim. Server-tool blocks are not surfaced.
* Usage: Anthropic's ``input_tokens`` excludes cache traffic, so kanawa's ``input_tokens`` is
  ``input + cache_creation_input_tokens + cache_read_input_tokens`` (the whole prompt, as the other
  providers count it), ``cached_tokens`` is ``cache_read_input_tokens`` and ``cache_write_tokens`` is
  ``cache_creation_input_tokens`` (also kept in ``provider_details["cache_creation_input_tokens"]``).
  ``reasoning_tokens`` comes from ``output_tokens_details.thinking_tokens`` when the server reports it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.stream_parts import DeltaAccumulator, malformed, wire_int
from kanawa.types import (
    AssistantMessage,
    JsonValue,
    LLMResponse,
    ReasoningPart,
    StopReason,
    StreamEvent,
    ToolCall,
    ToolCallArgsDelta,
    Usage,
)

PROVIDER = "anthropic"

_STOP_REASONS: Mapping[str, StopReason | None] = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
    "refusal": StopReason.END_TURN,
    "pause_turn": None,
}


def map_stop_reason(raw: object) -> StopReason | None:
    """The provider's ``stop_reason`` → :class:`StopReason` (``None`` for pause/unknown/missing)."""
    return _STOP_REASONS.get(raw) if isinstance(raw, str) else None


def parse_usage(usage: Mapping[str, Any]) -> Usage:
    """The API's ``usage`` object → :class:`Usage` (one request)."""
    cache_read = wire_int(usage, "cache_read_input_tokens")
    prompt = wire_int(usage, "input_tokens") + wire_int(usage, "cache_creation_input_tokens") + cache_read
    details = usage.get("output_tokens_details")
    thinking = wire_int(details, "thinking_tokens") if isinstance(details, Mapping) else 0
    return Usage(
        input_tokens=prompt,
        output_tokens=wire_int(usage, "output_tokens"),
        reasoning_tokens=thinking,
        cached_tokens=cache_read,
        cache_write_tokens=wire_int(usage, "cache_creation_input_tokens"),
        requests=1,
    )


def arguments_text(tool_input: object) -> str:
    """A ``tool_use`` input → the argument text kanawa stores (compact JSON, non-ASCII kept).

    A string is the raw streamed JSON (the joined ``partial_json``); it is kept as is — the streamed
    deltas add up to exactly it, and if it does not parse, the tool invoker reports the parse error to
    the model instead of the adapter guessing.
    """
    if isinstance(tool_input, str):
        return tool_input
    return json.dumps(tool_input if tool_input is not None else {}, ensure_ascii=False, separators=(",", ":"))


def parse_message(data: object) -> LLMResponse:
    """A Messages API ``message`` object (as JSON) → :class:`LLMResponse`; anything without that shape
    (an object whose ``content`` is a list of objects) is :func:`malformed`, never an empty answer."""
    if not isinstance(data, Mapping):
        raise malformed(
            "Anthropic response",
            f"the message is a JSON {type(data).__name__}, not an object",
            provider=PROVIDER,
        )
    if not isinstance(data.get("content"), list) or not all(isinstance(b, Mapping) for b in data["content"]):
        raise malformed("Anthropic response", "`content` is not a list of content blocks", provider=PROVIDER)
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    content = data.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append(
                ToolCall(
                    str(block.get("id", "")), str(block.get("name", "")), arguments_text(block.get("input"))
                )
            )
        elif kind == "thinking":
            reasoning.append(
                ReasoningPart(
                    text=str(block.get("thinking") or ""), provider=PROVIDER, payload=_payload(block)
                )
            )
        elif kind == "redacted_thinking":
            reasoning.append(ReasoningPart(text="", provider=PROVIDER, payload=_payload(block)))
    usage_data = data.get("usage")
    usage = parse_usage(usage_data) if isinstance(usage_data, Mapping) else Usage(requests=1)
    raw_stop = data.get("stop_reason")
    details: dict[str, JsonValue] = {"stop_reason": raw_stop if isinstance(raw_stop, str) else None}
    if isinstance(data.get("stop_sequence"), str):
        details["stop_sequence"] = data["stop_sequence"]
    if isinstance(usage_data, Mapping) and wire_int(usage_data, "cache_creation_input_tokens"):
        details["cache_creation_input_tokens"] = wire_int(usage_data, "cache_creation_input_tokens")
    message = AssistantMessage(
        text="".join(texts), tool_calls=tuple(calls), reasoning=tuple(reasoning), provider_details=details
    )
    response_id = data.get("id")
    return LLMResponse(
        message,
        map_stop_reason(raw_stop),
        usage=usage,
        model=str(data.get("model") or ""),
        response_id=response_id if isinstance(response_id, str) else None,
    )


def _payload(block: Mapping[str, Any]) -> dict[str, JsonValue]:
    """A reasoning block as a plain JSON object, replayed verbatim on the next turn."""
    value: dict[str, JsonValue] = json.loads(json.dumps(block))
    return value


# ------------------------------------------------------------------------------------------ streams


class StreamAssembler:
    """Feeds SSE events in order; returns the kanawa events each one produces; builds the final response.

    ``feed(name, data)`` handles ``message_start``, ``content_block_start`` / ``_delta`` / ``_stop``,
    ``message_delta`` and ``message_stop``; other names (``ping``, future events) are ignored. ``error``
    events are the adapter's job. Protocol violations raise :class:`LLMConnectionError`. A content
    block's fragments go to the shared :class:`~kanawa.llm.stream_parts.DeltaAccumulator` under the
    block's index; the block's own fields are kept beside them for the final message.
    """

    __slots__ = ("blocks", "message", "parts", "started", "stopped")

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.parts = DeltaAccumulator()
        self.blocks: dict[int, tuple[str, dict[str, Any]]] = {}  # index -> (type, the block's fields)
        self.started = False
        self.stopped = False

    def feed(self, name: str, data: Mapping[str, Any]) -> list[StreamEvent]:
        if name == "message_start":
            message = data.get("message")
            if not isinstance(message, Mapping):
                raise malformed("Anthropic response", "message_start without a message", provider=PROVIDER)
            self.message = dict(message)
            self.parts.merge_usage(message.get("usage"))
            self.started = True
            return []
        if name in ("message_delta", "message_stop", "content_block_start", "content_block_delta") and not (
            self.started
        ):
            raise malformed("Anthropic response", f"{name} before message_start", provider=PROVIDER)
        if name == "content_block_start":
            return self._start(data)
        if name == "content_block_delta":
            return self._delta(data)
        if name == "content_block_stop":
            return self._stop(data)
        if name == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, Mapping):
                for key in ("stop_reason", "stop_sequence"):
                    if key in delta:
                        self.message[key] = delta[key]
            self.parts.merge_usage(data.get("usage"))
        elif name == "message_stop":
            self.stopped = True
        return []

    def _index(self, data: Mapping[str, Any]) -> int:
        index = data.get("index")
        if not isinstance(index, int):
            raise malformed("Anthropic response", "content block event without an index", provider=PROVIDER)
        return index

    def _start(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        index = self._index(data)
        block = data.get("content_block")
        if not isinstance(block, Mapping):
            raise malformed(
                "Anthropic response", "content_block_start without a content_block", provider=PROVIDER
            )
        kind = str(block.get("type"))
        self.blocks[index] = (kind, dict(block))
        if kind == "text":
            return self.parts.text(index, str(block.get("text") or ""))
        if kind == "thinking":
            self.parts.part(index, "reasoning").extra["signature"] = [str(block.get("signature") or "")]
            return self.parts.reasoning(index, str(block.get("thinking") or ""))
        if kind == "tool_use":
            call_id, name = str(block.get("id", "")), str(block.get("name", ""))
            events = self.parts.tool_call(index, call_id=call_id, name=name, whole=True)
            initial = block.get("input")
            if isinstance(initial, Mapping) and initial:
                events += self.parts.arguments(index, arguments_text(dict(initial)))
            return events
        return []

    def _delta(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        index = self._index(data)
        block = self.blocks.get(index)
        delta = data.get("delta")
        if block is None or not isinstance(delta, Mapping):
            raise malformed(
                "Anthropic response", "content_block_delta for a block that never started", provider=PROVIDER
            )
        kind, shape = delta.get("type"), block[0]
        if kind == "text_delta" and shape == "text":
            return self.parts.text(index, str(delta.get("text") or ""))
        if kind == "input_json_delta" and shape == "tool_use":
            return self.parts.arguments(index, str(delta.get("partial_json") or ""))
        if kind == "thinking_delta" and shape == "thinking":
            return self.parts.reasoning(index, str(delta.get("thinking") or ""))
        if kind == "signature_delta" and shape == "thinking":
            self.parts.part(index, "reasoning").extra["signature"].append(str(delta.get("signature") or ""))
        return []

    def _stop(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        """A tool call that streamed no arguments gets ``{}`` as one last delta, so the deltas still add
        up to the final arguments."""
        index = data.get("index")
        part = self.parts.parts.get(index) if isinstance(index, int) else None
        if part is None or part.kind != "tool_call" or part.content.strip():
            return []
        part.fragments[:] = ["{}"]
        return [ToolCallArgsDelta(part.position, part.call_id, "{}")]

    def finish(self) -> LLMResponse:
        """The assembled response; raises when the stream ended before ``message_stop``."""
        if not self.stopped:
            raise LLMConnectionError("Anthropic stream ended before message_stop", provider=PROVIDER)
        content = [self._final_block(index) for index in sorted(self.blocks)]
        return parse_message({**self.message, "content": content, "usage": self.parts.usage})

    def _final_block(self, index: int) -> dict[str, Any]:
        kind, data = self.blocks[index]
        part = self.parts.parts.get(index)
        text = part.content if part is not None else ""
        if kind == "text":
            return {**data, "text": text}
        if kind == "thinking":
            signature = "".join(part.extra["signature"]) if part is not None else ""
            return {**data, "thinking": text, "signature": signature}
        if kind == "tool_use":
            # The joined ``partial_json`` is kept as it came (a string ``input`` is stored verbatim by
            # :func:`arguments_text`), so the streamed ``ToolCallArgsDelta`` texts always add up to the
            # final ``ToolCall.arguments``; parsing and re-dumping would change spacing and escapes.
            return {**data, "input": text}
        return data
