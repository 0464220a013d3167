"""Gemini ``GenerateContentResponse`` chunks → kanawa stream events and one :class:`LLMResponse`.

Pure and incremental: :class:`ResponseAssembler` is fed the SDK's parsed chunks (one for
``generateContent``, many for ``streamGenerateContent?alt=sse``) and returns the events each chunk
produces; :meth:`ResponseAssembler.finish` builds the response, so ``chat()`` and ``stream()`` agree.

Parts
    * text parts → :class:`TextDelta`, joined into ``message.text``;
    * ``thought: true`` parts (thought summaries, sent when ``include_thoughts`` is on) →
      :class:`ReasoningDelta`, joined into one ``ReasoningPart(provider="gemini")``;
    * ``functionCall`` parts → :class:`ToolCallStarted` then one :class:`ToolCallArgsDelta` with the
      whole JSON (Gemini never streams arguments in pieces). The call's id is Gemini's when it sent
      one, else ``call_<responseId>_<n>`` — stable for a given response, unique across turns;
    * ``thoughtSignature`` on any of them is kept for replay (see :mod:`kanawa.llm.gemini.payload`);
    * other output parts (inline images, executable code) are not part of kanawa's message model and
      are skipped.

Stop reasons (seed 003's provider table)
    ``STOP`` → ``end_turn`` **even when the response holds function calls**: that is what Gemini
    sends, and the loop's ``StandardTerminationPolicy`` checks for tool calls before treating
    ``end_turn`` as final. The adapter does not rewrite it. ``MAX_TOKENS`` → ``max_tokens``. Gemini
    reports a hit stop sequence as ``STOP`` too, so ``stop_sequence`` never appears. Every other
    reason (``SAFETY``, ``RECITATION``, ``BLOCKLIST``, ``PROHIBITED_CONTENT``, ``SPII``,
    ``MALFORMED_FUNCTION_CALL``, ``OTHER`` …) and a blocked prompt (``promptFeedback.blockReason``)
    → ``None`` — the model did not finish its turn normally — with the raw value in
    ``message.provider_details`` (``finish_reason`` / ``block_reason``) for the caller to inspect.

Usage
    ``promptTokenCount`` (+ ``toolUsePromptTokenCount``) → ``input_tokens``;
    ``candidatesTokenCount + thoughtsTokenCount`` → ``output_tokens`` (Gemini's candidate count
    excludes thinking, but thinking is billed as output, and kanawa's ``reasoning_tokens`` is a
    subset of ``output_tokens``); ``thoughtsTokenCount`` → ``reasoning_tokens``;
    ``cachedContentTokenCount`` (part of the prompt count) → ``cached_tokens``. In a stream each
    chunk's ``usageMetadata`` is the running total, so the last one wins.
"""

from __future__ import annotations

import json
import uuid

from google.genai import types

from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.gemini.payload import CALL_ID_KEY, PROVIDER, SIGNATURE_KEY, encode_signature
from kanawa.llm.stream_parts import DeltaAccumulator
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

_STOP_REASONS: dict[str, StopReason] = {
    "STOP": StopReason.END_TURN,
    "MAX_TOKENS": StopReason.MAX_TOKENS,
}
_NORMAL_FINISH = frozenset({*_STOP_REASONS, "FINISH_REASON_UNSPECIFIED"})


def stop_reason(finish_reason: str | None) -> StopReason | None:
    """kanawa's stop reason for a Gemini ``finishReason`` (module table; unknown → ``None``)."""
    return _STOP_REASONS.get(finish_reason or "")


def usage_from(meta: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    """kanawa :class:`Usage` from Gemini's ``usageMetadata`` (module table)."""
    if meta is None:
        return Usage(requests=1)
    thoughts = meta.thoughts_token_count or 0
    return Usage(
        input_tokens=(meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0),
        output_tokens=(meta.candidates_token_count or 0) + thoughts,
        reasoning_tokens=thoughts,
        cached_tokens=meta.cached_content_token_count or 0,
        requests=1,
    )


def _enum_text(value: object) -> str | None:
    if value is None:
        return None
    raw = getattr(value, "value", value)
    return str(raw)


class ResponseAssembler:
    """Accumulates one Gemini response from its chunks (first candidate only — kanawa never asks
    for more than one)."""

    def __init__(self, *, model: str) -> None:
        self._model = model
        self._parts = DeltaAccumulator()
        self._signatures: list[ReasoningPart] = []
        self._finish_reason: str | None = None
        self._block_reason: str | None = None
        self._usage: types.GenerateContentResponseUsageMetadata | None = None
        self._response_id: str | None = None
        self._model_version: str | None = None
        self._fallback_prefix = uuid.uuid4().hex[:12]
        self._candidates_seen = False

    def feed(self, chunk: types.GenerateContentResponse) -> list[StreamEvent]:
        """Take one chunk; return the stream events it carries, in part order."""
        self._response_id = chunk.response_id or self._response_id
        self._model_version = chunk.model_version or self._model_version
        self._usage = chunk.usage_metadata or self._usage
        if chunk.prompt_feedback is not None and chunk.prompt_feedback.block_reason is not None:
            self._block_reason = _enum_text(chunk.prompt_feedback.block_reason)
        if not chunk.candidates:
            return []
        candidate = chunk.candidates[0]
        # The SDK builds an empty Candidate() out of anything (``"candidates": "x"``): only one with
        # content or a finish reason is a candidate Gemini sent.
        self._candidates_seen |= candidate.content is not None or candidate.finish_reason is not None
        self._finish_reason = _enum_text(candidate.finish_reason) or self._finish_reason
        events: list[StreamEvent] = []
        for part in (candidate.content.parts if candidate.content else None) or ():
            events.extend(self._part(part))
        return events

    def _part(self, part: types.Part) -> list[StreamEvent]:
        signature = encode_signature(part.thought_signature) if part.thought_signature else None
        if part.function_call is not None:
            return self._function_call(part.function_call, signature)
        if part.thought:
            if signature:
                self._keep_signature(signature, "thought")
            return self._parts.reasoning("thoughts", part.text or "")
        if signature:
            self._keep_signature(signature, "text")
        return self._parts.text("text", part.text or "")

    def _keep_signature(self, signature: str, where: str) -> None:
        payload: dict[str, JsonValue] = {SIGNATURE_KEY: signature, "part": where}
        self._signatures.append(ReasoningPart(provider=PROVIDER, payload=payload))

    def _function_call(self, call: types.FunctionCall, signature: str | None) -> list[StreamEvent]:
        """Gemini sends a call whole: announced with its arguments at once."""
        index = len(self._parts.calls())
        details: dict[str, JsonValue] = {}
        if call.id:
            call_id = call.id
            details[CALL_ID_KEY] = call.id
        else:
            call_id = f"call_{self._response_id or self._fallback_prefix}_{index}"
        if signature:
            details[SIGNATURE_KEY] = signature
        key = ("call", index)
        self._parts.part(key, "tool_call").extra["details"] = details or None
        self._parts.arguments(key, json.dumps(call.args or {}, ensure_ascii=False))
        return self._parts.tool_call(key, call_id=call_id, name=call.name or "", whole=True)

    def finish(self, *, streamed: bool) -> LLMResponse:
        """The assembled response.

        Raises :class:`LLMConnectionError` for a stream that ended before Gemini said it was done
        (no ``finishReason`` and no blocked prompt): the answer would silently be truncated.
        """
        if streamed and self._finish_reason is None and self._block_reason is None:
            raise LLMConnectionError(
                "the stream ended before Gemini sent a finish reason", provider=PROVIDER, model=self._model
            )
        if not self._candidates_seen and self._block_reason is None:
            # Gemini answers with candidates or with a blocked prompt's feedback; a body with neither
            # (``{}``, ``{"candidates": "x"}``, a JSON list) is not a response, whatever the SDK made of it.
            raise LLMConnectionError(
                "malformed Gemini response: no candidates and no prompt feedback",
                provider=PROVIDER,
                model=self._model,
            )
        reasoning: list[ReasoningPart] = []
        thoughts = self._parts.joined("reasoning")
        if thoughts:
            reasoning.append(ReasoningPart(text=thoughts, provider=PROVIDER))
        reasoning.extend(self._signatures)
        details: dict[str, JsonValue] = {}
        if self._finish_reason is not None and self._finish_reason not in _NORMAL_FINISH:
            details["finish_reason"] = self._finish_reason
        if self._block_reason is not None:
            details["block_reason"] = self._block_reason
        message = AssistantMessage(
            text=self._parts.joined("text"),
            tool_calls=tuple(
                ToolCall(part.call_id, part.name, part.content, provider_details=part.extra["details"])
                for part in self._parts.calls()
            ),
            reasoning=tuple(reasoning),
            provider_details=details or None,
        )
        return LLMResponse(
            message=message,
            stop_reason=None if self._block_reason else stop_reason(self._finish_reason),
            usage=usage_from(self._usage),
            model=self._model_version or self._model,
            response_id=self._response_id,
        )
