"""Chat Completions answers → kanawa types, for whole completions and for streamed chunks.

Both paths end in :func:`parse_completion`: :class:`ChunkAssembler` rebuilds the completion object a
non-streaming call would have returned, so ``chat()`` and ``stream()`` agree (seed 002 §3-3). Wire
data is handled as JSON mappings (``Mapping[str, Any]``: provider pass-through), because servers
differ in what they add or leave out. Only the first choice is read (kanawa never asks for ``n > 1``).

Decisions (seed 003 stop-reason table):

* ``finish_reason``: ``stop`` / ``eos`` / ``eos_token`` → END_TURN, ``tool_calls`` / ``function_call``
  → TOOL_USE, ``length`` → MAX_TOKENS, ``stop_sequence`` (TGI) → STOP_SEQUENCE; ``content_filter``,
  anything unknown and a missing value → ``None`` (the loop falls back to tools → text). ``stop`` with
  tool calls (older Ollama) stays END_TURN: the loop's policy looks for tool calls first. The raw
  value is kept in ``AssistantMessage.provider_details["finish_reason"]``.
* Reasoning from servers that return it (``reasoning_content``: vLLM/DeepSeek; ``reasoning``: newer
  vLLM, Ollama, OpenRouter — the first one present wins) → ``ReasoningPart(provider="openai-chat")``
  with no payload: it is display-only and never sent back.
* A ``refusal`` (structured outputs) becomes the text when there is no content, and is also kept in
  ``provider_details["refusal"]``, so the caller sees why no JSON came.
* Tool calls without an id (some local servers) get ``call_<n>`` so their results can refer to them.
* Usage: ``prompt_tokens`` / ``completion_tokens`` / ``prompt_tokens_details.cached_tokens`` /
  ``completion_tokens_details.reasoning_tokens``. A server that reports none gives zeros with
  ``requests=1`` and ``provider_details["usage_reported"] = False`` — no estimate is mixed into
  reported counts; a caller that budgets can estimate with ``count_tokens``.
* Streamed tool calls are assembled by ``index``. A fragment without an index continues the last call
  unless it brings a new id; a new id together with a name at an index already in use (servers that
  number every call 0) starts a new call; an id repeated on later fragments is ignored.
  ``ToolCallStarted`` is emitted once per call, when its name is known, followed by any argument text
  that arrived before it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kanawa.llm.stream_parts import DeltaAccumulator, malformed, wire_int
from kanawa.types import (
    AssistantMessage,
    JsonValue,
    LLMResponse,
    ReasoningPart,
    StopReason,
    StreamEvent,
    ToolCall,
    Usage,
)

PROVIDER = "openai-chat"

_FINISH_REASONS: Mapping[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "eos": StopReason.END_TURN,
    "eos_token": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
}


def map_finish_reason(raw: object) -> StopReason | None:
    """The choice's ``finish_reason`` → :class:`StopReason` (``None`` for filter/unknown/missing)."""
    return _FINISH_REASONS.get(raw) if isinstance(raw, str) else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def parse_usage(usage: Mapping[str, Any]) -> Usage:
    """The ``usage`` object → :class:`Usage` (one request)."""
    return Usage(
        input_tokens=wire_int(usage, "prompt_tokens"),
        output_tokens=wire_int(usage, "completion_tokens"),
        reasoning_tokens=wire_int(usage.get("completion_tokens_details"), "reasoning_tokens"),
        cached_tokens=wire_int(usage.get("prompt_tokens_details"), "cached_tokens"),
        cache_write_tokens=wire_int(usage.get("prompt_tokens_details"), "cache_write_tokens"),
        requests=1,
    )


def reasoning_text(message: Mapping[str, Any]) -> str:
    """The reasoning a server attached to a message or delta (``reasoning_content`` or ``reasoning``)."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str):
            return value
    return ""


def tool_call(call_id: str, name: str, arguments: object) -> ToolCall:
    """A :class:`ToolCall` from the wire. Arguments must be a string (seed 000 §6.1); servers that send
    an object, a number or ``null`` instead get a call the invoker refuses with its parse error (the
    value is kept as JSON text for the history), never a silent ``{}``."""
    if isinstance(arguments, str):
        return ToolCall(call_id, name, arguments)
    kind = "null" if arguments is None else type(arguments).__name__
    try:
        text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = ""
    return ToolCall(
        call_id, name, text, invalid_arguments=f"tool arguments must be a JSON object string, not {kind}"
    )


def parse_completion(data: Mapping[str, Any]) -> LLMResponse:
    """A ``chat.completion`` object (as JSON) → :class:`LLMResponse`."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise malformed("chat completion", "`choices` is not a non-empty list of objects", provider=PROVIDER)
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise malformed("chat completion", "the first choice has no `message` object", provider=PROVIDER)
    calls: list[ToolCall] = []
    raw_calls = message.get("tool_calls")
    for position, raw in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        if not isinstance(raw, Mapping):
            continue
        function = raw.get("function")
        function = function if isinstance(function, Mapping) else {}
        call_id = _text(raw.get("id")) or f"call_{position}"
        calls.append(tool_call(call_id, _text(function.get("name")), function.get("arguments", "")))
    content, refusal = _text(message.get("content")), _text(message.get("refusal"))
    thought = reasoning_text(message)
    raw_finish = choice.get("finish_reason")
    details: dict[str, JsonValue] = {"finish_reason": raw_finish if isinstance(raw_finish, str) else None}
    if refusal:
        details["refusal"] = refusal
    usage_data = data.get("usage")
    if isinstance(usage_data, Mapping):
        usage = parse_usage(usage_data)
    else:
        usage = Usage(requests=1)
        details["usage_reported"] = False
    assistant = AssistantMessage(
        text=content or refusal,
        tool_calls=tuple(calls),
        reasoning=(ReasoningPart(text=thought, provider=PROVIDER),) if thought else (),
        provider_details=details,
    )
    response_id = data.get("id")
    return LLMResponse(
        assistant,
        map_finish_reason(raw_finish),
        usage=usage,
        model=_text(data.get("model")),
        response_id=response_id if isinstance(response_id, str) and response_id else None,
    )


# ------------------------------------------------------------------------------------------ streams


class ChunkAssembler:
    """Feed ``chat.completion.chunk`` objects in order; get the kanawa events each produces; then the
    assembled response from :meth:`finish`. The deltas go through the shared
    :class:`~kanawa.llm.stream_parts.DeltaAccumulator`; a tool call's part key is its slot (the order
    its first fragment came in), found by id or index as servers send them."""

    __slots__ = ("by_id", "by_index", "deltas", "finish_reason", "meta", "parts", "refusal")

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {}
        self.parts = DeltaAccumulator()
        self.refusal: list[str] = []
        self.by_index: dict[int, int] = {}
        self.by_id: dict[str, int] = {}
        self.finish_reason: str | None = None
        self.deltas = 0  # chunks that carried a choice with a delta

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        for key in ("id", "model"):
            if key not in self.meta and isinstance(chunk.get(key), str) and chunk[key]:
                self.meta[key] = chunk[key]
        self.parts.merge_usage(chunk.get("usage"))
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return []
        choice = choices[0]
        if isinstance(choice.get("finish_reason"), str):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            return []
        self.deltas += 1
        events = self.parts.reasoning("reasoning", reasoning_text(delta))
        events += self.parts.text("text", _text(delta.get("content")))
        if _text(delta.get("refusal")):
            self.refusal.append(delta["refusal"])
        fragments = delta.get("tool_calls")
        for fragment in fragments if isinstance(fragments, list) else []:
            if isinstance(fragment, Mapping):
                events.extend(self._tool_fragment(fragment))
        return events

    def _slot(self, fragment: Mapping[str, Any], name: str) -> int:
        index, call_id = fragment.get("index"), _text(fragment.get("id"))
        if call_id and call_id in self.by_id:
            return self.by_id[call_id]
        calls = len(self.parts.calls())
        if isinstance(index, int) and index in self.by_index:
            slot = self.by_index[index]
            if not (call_id and self.parts.part(slot, "tool_call").call_id and name):
                return slot  # only a new id WITH a name starts another call
        elif not isinstance(index, int) and not call_id and calls:
            return calls - 1
        self.parts.part(calls, "tool_call")
        if isinstance(index, int):
            self.by_index[index] = calls
        return calls

    def _tool_fragment(self, fragment: Mapping[str, Any]) -> list[StreamEvent]:
        function = fragment.get("function")
        function = function if isinstance(function, Mapping) else {}
        name, arguments = _text(function.get("name")), _text(function.get("arguments"))
        slot = self._slot(fragment, name)
        part = self.parts.part(slot, "tool_call")
        raw_arguments = function.get("arguments")
        if raw_arguments is not None and not isinstance(raw_arguments, str):
            part.extra["non_string"] = raw_arguments  # arguments sent as an object/number, not text
        call_id = _text(fragment.get("id"))
        if part.started:
            return self.parts.arguments(slot, arguments)
        self.parts.arguments(slot, arguments)  # held until the call has a name
        events = self.parts.tool_call(slot, call_id=call_id, name=name)
        if part.call_id:
            self.by_id.setdefault(part.call_id, slot)
        return events

    def finish(self) -> LLMResponse:
        """The completion this stream amounts to, parsed like a non-streamed one. A stream in which no
        chunk had the chunk shape (a choice with a ``delta``) is malformed, not an empty answer."""
        if not self.deltas and self.finish_reason is None:
            raise malformed(
                "chat completion", "the stream had no chunk with a choice and a delta", provider=PROVIDER
            )
        message: dict[str, Any] = {"role": "assistant", "content": self.parts.joined("text") or None}
        reasoning = self.parts.joined("reasoning")
        if reasoning:
            message["reasoning_content"] = reasoning
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        calls = self.parts.calls()
        if calls:
            message["tool_calls"] = [
                {
                    "id": call.call_id or f"call_{slot}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.extra.get("non_string", call.content)},
                }
                for slot, call in enumerate(calls)
            ]
        completion: dict[str, Any] = {
            **self.meta,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        }
        if self.parts.usage:
            completion["usage"] = self.parts.usage
        return parse_completion(completion)
