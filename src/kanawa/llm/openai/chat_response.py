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
from dataclasses import dataclass, field
from typing import Any

from kanawa.llm.errors import LLMConnectionError
from kanawa.types import (
    AssistantMessage,
    JsonValue,
    LLMResponse,
    ReasoningDelta,
    ReasoningPart,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStarted,
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


def _int(mapping: object, key: str) -> int:
    value = mapping.get(key) if isinstance(mapping, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def parse_usage(usage: Mapping[str, Any]) -> Usage:
    """The ``usage`` object → :class:`Usage` (one request)."""
    return Usage(
        input_tokens=_int(usage, "prompt_tokens"),
        output_tokens=_int(usage, "completion_tokens"),
        reasoning_tokens=_int(usage.get("completion_tokens_details"), "reasoning_tokens"),
        cached_tokens=_int(usage.get("prompt_tokens_details"), "cached_tokens"),
        cache_write_tokens=_int(usage.get("prompt_tokens_details"), "cache_write_tokens"),
        requests=1,
    )


def reasoning_text(message: Mapping[str, Any]) -> str:
    """The reasoning a server attached to a message or delta (``reasoning_content`` or ``reasoning``)."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str):
            return value
    return ""


def malformed(detail: str) -> LLMConnectionError:
    """A 200 answer without the chat-completion shape: an error naming the provider, never an empty
    success (retryable: the next attempt may be clean)."""
    return LLMConnectionError(f"malformed chat completion: {detail}", provider=PROVIDER)


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
        raise malformed("`choices` is not a non-empty list of objects")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise malformed("the first choice has no `message` object")
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


@dataclass
class _Call:
    position: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    started: bool = False
    non_string: object = None  # arguments a server sent as an object/number instead of text


@dataclass
class ChunkAssembler:
    """Feed ``chat.completion.chunk`` objects in order; get the kanawa events each produces; then the
    assembled response from :meth:`finish`."""

    meta: dict[str, Any] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)
    by_index: dict[int, _Call] = field(default_factory=dict)
    by_id: dict[str, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    deltas: int = 0  # chunks that carried a choice with a delta

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        for key in ("id", "model"):
            if key not in self.meta and isinstance(chunk.get(key), str) and chunk[key]:
                self.meta[key] = chunk[key]
        if isinstance(chunk.get("usage"), Mapping):
            self.usage = chunk["usage"]
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
        events: list[StreamEvent] = []
        thought = reasoning_text(delta)
        if thought:
            self.reasoning.append(thought)
            events.append(ReasoningDelta(thought))
        content = _text(delta.get("content"))
        if content:
            self.text.append(content)
            events.append(TextDelta(content))
        if _text(delta.get("refusal")):
            self.refusal.append(delta["refusal"])
        fragments = delta.get("tool_calls")
        for fragment in fragments if isinstance(fragments, list) else []:
            if isinstance(fragment, Mapping):
                events.extend(self._tool_fragment(fragment))
        return events

    def _slot(self, fragment: Mapping[str, Any], name: str) -> _Call:
        index, call_id = fragment.get("index"), _text(fragment.get("id"))
        if call_id and call_id in self.by_id:
            return self.by_id[call_id]
        if isinstance(index, int) and index in self.by_index:
            slot = self.by_index[index]
            if not (call_id and slot.id and name):  # only a new id WITH a name starts another call
                return slot
        elif not isinstance(index, int) and not call_id and self.calls:
            return self.calls[-1]
        slot = _Call(len(self.calls))
        self.calls.append(slot)
        if isinstance(index, int):
            self.by_index[index] = slot
        return slot

    def _tool_fragment(self, fragment: Mapping[str, Any]) -> list[StreamEvent]:
        function = fragment.get("function")
        function = function if isinstance(function, Mapping) else {}
        name, arguments = _text(function.get("name")), _text(function.get("arguments"))
        slot = self._slot(fragment, name)
        raw_arguments = function.get("arguments")
        if raw_arguments is not None and not isinstance(raw_arguments, str):
            slot.non_string = raw_arguments
        call_id = _text(fragment.get("id"))
        if call_id and not slot.id:
            slot.id = call_id
            self.by_id[call_id] = slot
        if name and not slot.started:
            slot.name = name
        if arguments:
            slot.arguments.append(arguments)
        if slot.started:
            return [ToolCallArgsDelta(slot.position, slot.id, arguments)] if arguments else []
        if not slot.name:
            return []
        slot.started = True
        slot.id = slot.id or f"call_{slot.position}"
        self.by_id.setdefault(slot.id, slot)
        events: list[StreamEvent] = [ToolCallStarted(slot.position, slot.id, slot.name)]
        if slot.arguments:
            events.append(ToolCallArgsDelta(slot.position, slot.id, "".join(slot.arguments)))
        return events

    def finish(self) -> LLMResponse:
        """The completion this stream amounts to, parsed like a non-streamed one. A stream in which no
        chunk had the chunk shape (a choice with a ``delta``) is malformed, not an empty answer."""
        if not self.deltas and self.finish_reason is None:
            raise malformed("the stream had no chunk with a choice and a delta")
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{call.position}",
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.non_string
                        if call.non_string is not None
                        else "".join(call.arguments),
                    },
                }
                for call in self.calls
            ]
        completion: dict[str, Any] = {
            **self.meta,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        }
        if self.usage is not None:
            completion["usage"] = self.usage
        return parse_completion(completion)
