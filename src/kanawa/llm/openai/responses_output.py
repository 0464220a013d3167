"""Turn OpenAI Responses API output — whole or streamed — into kanawa types (seed 001 §3.7).

Works on the raw JSON (dicts), not the SDK's typed models, so new item and event types pass through
unharmed: unknown output items are skipped, unknown stream events ignored, and a reasoning item is kept
as the exact dict the server sent (``ReasoningPart.payload``) to be replayed verbatim next turn.

:func:`parse_response` reads a response object: text from ``output_text`` parts of ``message`` items
(refusal text counts as text, so a refused structured answer is visible rather than silently empty;
a top-level ``output_text`` string, as the SDK and some proxies add it, is used when no message item
carries text), ``function_call`` items → :class:`ToolCall` (``call_id``, ``name``, ``arguments``,
the item id in ``provider_details["item_id"]``), ``reasoning`` items → :class:`ReasoningPart`
(summary texts joined by a blank line; raw ``reasoning_text`` content when there is no summary),
usage with ``reasoning_tokens`` and ``cached_tokens``.

Stop reasons: a client-side stop hit → ``stop_sequence`` (``tool_use`` if calls came before it);
``status="incomplete"`` with reason ``max_output_tokens`` → ``max_tokens`` (even with function calls:
their arguments may be cut off); any function call → ``tool_use``; ``completed`` → ``end_turn``;
anything else (e.g. a content filter) → ``None``.

Stop sequences (GPT-5 rejects ``stop``): the answer text is cut at the earliest occurrence of any stop
sequence, and output items after the message where it occurred are dropped, as if the model had
stopped there. While streaming, :class:`StopScanner` holds back the last ``len(longest stop) - 1``
characters so no text past a stop sequence is ever yielded; the rest of the stream is still read (for
usage and reasoning items) but yields nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kanawa.llm.errors import LLMConnectionError, LLMError
from kanawa.llm.openai.audit import AuditContext, audit_failure, audit_success
from kanawa.llm.openai.chat_response import tool_call
from kanawa.llm.openai.common import error_for_code
from kanawa.llm.stream_parts import DeltaAccumulator, malformed, wire_int
from kanawa.types import (
    AssistantMessage,
    JsonObject,
    JsonValue,
    LLMResponse,
    ReasoningPart,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    ToolCall,
    Usage,
)

__all__ = [
    "ResponsesStreamAssembler",
    "StopScanner",
    "completed_response",
    "find_stop",
    "parse_response",
    "parse_usage",
]

PROVIDER = "openai"


def _obj(value: object) -> Mapping[str, JsonValue]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


MESSAGE_ITEMS_KEY = "openai_message_items"
"""``AssistantMessage.provider_details`` key: the response's message items as ``{"text", "phase"}``."""


def find_stop(text: str, stop: Sequence[str]) -> int:
    """Where ``text`` is cut for ``stop``: the start of the stop sequence that *completes* first, or -1.

    A server generating text stops as soon as any stop sequence is complete, so the sequence that
    ends earliest wins, even when another one started before it (text ``"XXbX"`` with stops ``["b",
    "XbX"]`` is cut at 2, where ``"b"`` completes, not at 1, where the longer ``"XbX"`` starts). When
    two sequences complete at the same character, the one that starts earlier wins (less text is
    released). Because the rule depends only on where each sequence ends, the streamed
    :class:`StopScanner` gives the same cut however the text is chunked.
    """
    best: tuple[int, int] | None = None  # (end, start) of the winning occurrence
    for s in stop:
        if s and (i := text.find(s)) >= 0 and (best is None or (i + len(s), i) < best):
            best = (i + len(s), i)
    return -1 if best is None else best[1]


def parse_usage(usage: object) -> Usage:
    """Usage from a response's ``usage`` object (missing fields count as 0)."""
    u = _obj(usage)
    return Usage(
        input_tokens=wire_int(u.get("input_tokens")),
        output_tokens=wire_int(u.get("output_tokens")),
        reasoning_tokens=wire_int(_obj(u.get("output_tokens_details")).get("reasoning_tokens")),
        cached_tokens=wire_int(_obj(u.get("input_tokens_details")).get("cached_tokens")),
        cache_write_tokens=wire_int(_obj(u.get("input_tokens_details")).get("cache_write_tokens")),
        requests=1,
    )


def _reasoning_part(item: Mapping[str, JsonValue]) -> ReasoningPart:
    texts = [_str(_obj(s).get("text")) for s in _list(item.get("summary"))]
    if not any(texts):
        texts = [_str(_obj(c).get("text")) for c in _list(item.get("content"))]
    payload: JsonObject = dict(item)
    return ReasoningPart(text="\n\n".join(t for t in texts if t), provider=PROVIDER, payload=payload)


def _message_text(item: Mapping[str, JsonValue]) -> str:
    pieces: list[str] = []
    for part in _list(item.get("content")):
        p = _obj(part)
        if p.get("type") == "output_text":
            pieces.append(_str(p.get("text")))
        elif p.get("type") == "refusal":
            pieces.append(_str(p.get("refusal")))
    return "".join(pieces)


def _tool_call(item: Mapping[str, JsonValue]) -> ToolCall:
    item_id = item.get("id")
    details: JsonObject | None = {"item_id": item_id} if isinstance(item_id, str) else None
    call = tool_call(
        _str(item.get("call_id")) or _str(item_id), _str(item.get("name")), item.get("arguments", "")
    )
    return replace(call, provider_details=details)


def check_response_shape(data: object, *, output_required: bool = True) -> Mapping[str, JsonValue]:
    """``data`` if it has the response-object shape: an object whose ``output`` is a list of objects
    (it may be absent from a stream's completion event, whose items came as events)."""
    if not isinstance(data, Mapping):
        raise malformed(
            "Responses API body",
            f"the response is a JSON {type(data).__name__}, not an object",
            provider=PROVIDER,
        )
    output = data.get("output")
    if output is None and not output_required:
        return data
    if not isinstance(output, list) or not all(isinstance(item, Mapping) for item in output):
        raise malformed("Responses API body", "`output` is not a list of objects", provider=PROVIDER)
    return data


def _stop_reason(data: Mapping[str, JsonValue], *, has_calls: bool, stopped: bool) -> StopReason | None:
    if stopped:
        return StopReason.TOOL_USE if has_calls else StopReason.STOP_SEQUENCE
    status = data.get("status")
    if status == "incomplete" and _obj(data.get("incomplete_details")).get("reason") == "max_output_tokens":
        return StopReason.MAX_TOKENS
    if has_calls:
        return StopReason.TOOL_USE
    if status in ("completed", None):
        return StopReason.END_TURN
    return None


def parse_response(data: Mapping[str, JsonValue], *, stop: Sequence[str] = ()) -> LLMResponse:
    """An :class:`LLMResponse` from a Responses API response object (rules in the module docstring)."""
    text = ""
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    stopped = False
    messages: list[JsonObject] = []
    for raw in _list(data.get("output")):
        item = _obj(raw)
        kind = item.get("type")
        if kind == "reasoning":
            reasoning.append(_reasoning_part(item))
        elif kind == "function_call":
            calls.append(_tool_call(item))
        elif kind == "message":
            piece = _message_text(item)
            text += piece
            phase = item.get("phase")
            messages.append({"text": piece, "phase": phase if isinstance(phase, str) else None})
            if stop and (cut := find_stop(text, stop)) >= 0:
                text, stopped = text[:cut], True
                break
    if not text and not stopped and isinstance(data.get("output_text"), str):
        text = _str(data.get("output_text"))
        if stop and (cut := find_stop(text, stop)) >= 0:
            text, stopped = text[:cut], True
    details: JsonObject | None = None
    if any(m["phase"] is not None for m in messages):
        # GPT-5.x labels each message item (``commentary`` / ``final_answer``); OpenAI asks clients to
        # send the label back unchanged, so the items are kept as they came (text and phase).
        details = {MESSAGE_ITEMS_KEY: list(messages)}
    message = AssistantMessage(
        text=text, tool_calls=tuple(calls), reasoning=tuple(reasoning), provider_details=details
    )
    return LLMResponse(
        message=message,
        stop_reason=_stop_reason(data, has_calls=bool(calls), stopped=stopped),
        usage=parse_usage(data.get("usage")),
        model=_str(data.get("model")),
        response_id=_str(data.get("id")) or None,
    )


class StopScanner:
    """Streams text while guaranteeing nothing at or after the cut :func:`find_stop` makes is released.

    It holds back the last ``len(longest stop) - 1`` characters, which is enough: the occurrence that
    completes first always lies wholly inside the held tail plus the new delta when its last character
    arrives, so the streamed cut equals ``find_stop`` on the whole text for any chunking.
    """

    def __init__(self, stop: Sequence[str]) -> None:
        self._stop = [s for s in stop if s]
        self._hold = max((len(s) for s in self._stop), default=1) - 1
        self._pending = ""
        self.hit = False

    def feed(self, delta: str) -> str:
        """Add ``delta``; return the text that is now safe to release (may be empty)."""
        if self.hit:
            return ""
        if not self._stop:
            return delta
        self._pending += delta
        cut = find_stop(self._pending, self._stop)
        if cut >= 0:
            out, self._pending, self.hit = self._pending[:cut], "", True
            return out
        keep = min(self._hold, len(self._pending))
        out = self._pending[: len(self._pending) - keep]
        self._pending = self._pending[len(self._pending) - keep :]
        return out

    def flush(self) -> str:
        """Release the held-back tail at the end of the text (no stop sequence was in it)."""
        out, self._pending = ("" if self.hit else self._pending), ""
        return out


class ResponsesStreamAssembler:
    """Folds Responses API stream events into kanawa stream events, in order.

    :meth:`feed` takes one decoded event and returns what to yield for it; on ``response.completed`` /
    ``response.incomplete`` that ends with the single :class:`ResponseCompleted` and :attr:`finished`
    turns true. ``response.failed`` and ``error`` events raise the mapped :class:`LLMError`. Events
    this class does not know are ignored.
    """

    def __init__(self, *, model: str, stop: Sequence[str] = (), request_id: str | None = None) -> None:
        self._model = model
        self._stop = tuple(stop)
        self._request_id = request_id
        self._scanner = StopScanner(self._stop)
        self._parts = DeltaAccumulator()  # text as released, reasoning, calls keyed ("call", output_index)
        self._items: dict[int, JsonObject] = {}
        self._reasoning_key: tuple[int, str, int] | None = None
        self._text = ""  # as the server sent it, before the stop scanner
        self.finished = False

    # ---------------------------------------------------------------- helpers
    def _reasoning(self, event: Mapping[str, JsonValue], kind: str, part_key: str) -> list[StreamEvent]:
        delta = _str(event.get("delta"))
        if not delta or self._scanner.hit:
            return []
        key = (wire_int(event.get("output_index")), kind, wire_int(event.get(part_key)))
        prefix = "\n\n" if self._reasoning_key is not None and key != self._reasoning_key else ""
        self._reasoning_key = key
        return self._parts.reasoning(key, prefix + delta)

    def _text_delta(self, delta: str) -> list[StreamEvent]:
        self._text += delta
        return self._parts.text("text", self._scanner.feed(delta))

    def _catch_up(self, final: LLMResponse) -> list[StreamEvent]:
        """Deltas for whatever the final response holds but the stream never showed (a server that
        sends only ``*.done`` events, or a held-back tail), so the deltas always add up to it."""
        text, released = final.message.text, self._parts.joined("text")
        events: list[StreamEvent] = []
        if len(text) > len(released) and text.startswith(released):
            events += self._parts.text("text", text[len(released) :])
        announced = {part.call_id for part in self._parts.calls()}
        for call in final.message.tool_calls:
            if call.id in announced:
                continue
            key = ("final", call.id)
            events += self._parts.tool_call(key, call_id=call.id, name=call.name, whole=True)
            events += self._parts.arguments(key, call.arguments)
        return events

    def _call_started(self, index: int, item: Mapping[str, JsonValue]) -> list[StreamEvent]:
        if ("call", index) in self._parts.parts or self._scanner.hit:
            return []
        call = _tool_call(item)
        return self._parts.tool_call(("call", index), call_id=call.id, name=call.name, whole=True)

    def _args(self, index: int, delta: str) -> list[StreamEvent]:
        if ("call", index) not in self._parts.parts:
            return []
        return self._parts.arguments(("call", index), delta)

    def _fail(self, code: object, message: object) -> LLMError:
        return error_for_code(
            _str(code) or None,
            _str(message) or None,
            provider=PROVIDER,
            model=self._model,
            request_id=self._request_id,
        )

    def _complete(self, response: Mapping[str, JsonValue]) -> list[StreamEvent]:
        data: JsonObject = dict(response)
        if not _list(data.get("output")) and self._items:
            data["output"] = [self._items[i] for i in sorted(self._items)]
        if not _list(data.get("output")) and self._text:
            data["output_text"] = self._text
        events: list[StreamEvent] = []
        events += self._parts.text("text", self._scanner.flush())
        final = parse_response(data, stop=self._stop)
        events += self._catch_up(final)
        events.append(ResponseCompleted(final))
        self.finished = True
        return events

    # ------------------------------------------------------------------- feed
    def feed(self, event: Mapping[str, JsonValue]) -> list[StreamEvent]:
        """Fold one event; see the class docstring."""
        kind = event.get("type")
        index = wire_int(event.get("output_index"))
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            return self._text_delta(_str(event.get("delta")))
        if kind == "response.reasoning_summary_text.delta":
            return self._reasoning(event, "summary", "summary_index")
        if kind == "response.reasoning_text.delta":
            return self._reasoning(event, "content", "content_index")
        if kind == "response.function_call_arguments.delta":
            return self._args(index, _str(event.get("delta")))
        if kind == "response.function_call_arguments.done":
            seen = self._parts.parts.get(("call", index))
            return self._args(index, _str(event.get("arguments"))) if seen and not seen.fragments else []
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = _obj(event.get("item"))
            if kind == "response.output_item.done":
                self._items[index] = dict(item)
            if item.get("type") != "function_call":
                return []
            started = self._call_started(index, item)
            return started + (self._args(index, _str(item.get("arguments"))) if started else [])
        if kind in ("response.completed", "response.incomplete"):
            return self._complete(check_response_shape(event.get("response"), output_required=False))
        if kind == "response.failed":
            error = _obj(_obj(event.get("response")).get("error"))
            raise self._fail(error.get("code"), error.get("message") or "the response failed")
        if kind == "error":
            nested = _obj(event.get("error"))
            source = nested or event
            raise self._fail(source.get("code"), source.get("message"))
        return []

    def unfinished_error(self) -> LLMError:
        """The error for a stream that ended without ``response.completed``/``response.incomplete``."""
        return LLMConnectionError(
            "stream ended before response.completed",
            provider=PROVIDER,
            model=self._model,
            request_id=self._request_id,
        )


def completed_response(
    data: object, *, request_id: str | None, model: str, context: AuditContext, stop: Sequence[str] = ()
) -> LLMResponse:
    """A whole (non-streamed) Responses body as an audited :class:`LLMResponse`, for the async and the
    blocking adapter alike: a body without the response's shape is an ``LLMConnectionError`` that
    names the request (audited as a failure), never a ``KeyError``."""
    try:
        shaped = check_response_shape(data)
    except LLMConnectionError as exc:
        error = LLMConnectionError(exc.message, provider=PROVIDER, model=model, request_id=request_id)
        audit_failure(error, context)
        raise error from None
    response = parse_response(shaped, stop=stop)
    audit_success(context, response_model=response.model or None, request_id=request_id)
    return response
