"""Run events → chunks (seed 002 §5-1): ``{time, agent, type, data, seq}``, whatever the wire.

This is the one place that knows what a run's events become. :class:`ChunkTranslation` matches kanawa's
own events by class, exhaustively (:data:`ServedEvent`: the loop's :data:`~kanawa.loop.events.RunEvent`
union and a team's :class:`~kanawa.agents.routing.RouteDecision`; a new event class fails type checking
at the ``assert_never`` until it is translated), and an application's own events (SmartAO's findings,
patch, rubric) by the translations the application gives (:data:`EventChunks`, through
``Extension(event_chunks=...)``). The chunks are protocol-neutral: each wire protocol frames them
(:mod:`kanawa.server.http.protocols`).

======================  ====================  ===================================================
event                   chunk ``type``        ``data``
======================  ====================  ===================================================
``TextDelta``           ``delta``             ``{"text"}``
``ReasoningDelta``      ``delta``             ``{"reasoning"}``
``ToolCallStarted``     ``tool_call_start``   ``{"index", "id", "name"}``
``ToolCallArgsDelta``   ``tool_call_delta``   ``{"index", "id", "delta"}``
``ToolCallStep``        ``tool_call``         ``{"step", "id", "name", "arguments"}``
``ToolResultStep``      ``tool_response``     ``{"step", "call_id", "name", "content", "is_error", …}``
``FinalResponse``       ``final``             ``{"step", "output", "text"}``, then a ``usage`` chunk
``Thinking``            ``thinking``          ``{"step", "reason", "text"}``
``NestedEvent``         the inner event's     the inner event's, plus ``depth``; ``agent`` is the
                                              handed-off agent's name
``GuardrailTripped``    ``guardrail``         the event's fields (``action`` ``warn``/``block`` …)
``HandoffStarted``      ``handoff_start``     the event's fields
``HandoffEnded``        ``handoff_end``       the event's fields
``ApprovalRequired``    ``approval_required`` ``{"step", "calls"}``
``RouteDecision``       ``route``             ``{"agents", "source", "reason", "rule"}``, and
                                              ``question`` only when a model restated the request
                                              (at most :data:`ROUTE_QUESTION_CHARS`): a rule
                                              router's question is the whole input, which the
                                              client sent and which would be stored once more
an application's        what its translation  (:func:`fields_chunk`: the event's fields)
                        says
======================  ====================  ===================================================

Errors (§7) become ``error`` chunks with ``{"code", "message"}``: the exception's class name and its
message with secrets masked; anything that is not one of kanawa's own errors gets a generic message,
so a stack trace or a provider's raw reply never reaches a client. Fields that hold what a model or a
client must not see (a tool result's ``detail``) are never copied.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, assert_never, cast, get_args, get_origin

from pydantic import BaseModel, TypeAdapter

from kanawa.agents.failures import failure_cause
from kanawa.agents.routing import RouteDecision
from kanawa.loop.events import (
    ApprovalRequired,
    FinalResponse,
    GuardrailTripped,
    HandoffEnded,
    HandoffStarted,
    NestedEvent,
    RunEvent,
    Thinking,
    ToolCallStep,
    ToolResultStep,
)
from kanawa.trace.serialize import iso_time, to_json_value
from kanawa.types import JsonValue, ReasoningDelta, TextDelta, ToolCallArgsDelta, ToolCallStarted, Usage

HIDDEN_FIELDS: Final = frozenset({"kind", "detail", "output", "partial_result"})
"""Dataclass fields never copied generically (``output`` of a tool result is the raw Python value;
its model-visible form is ``content``)."""

TERMINAL_TYPES: Final = frozenset({"done"})
"""The chunk type that ends a run's stream (``data.status`` says how the run ended)."""

ROUTE_QUESTION_CHARS: Final = 500
"""Longest restated question a ``route`` chunk carries (a model's answer, asked to be brief)."""

_ANY: Final = TypeAdapter(Any)
_JSON: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""One encoder for every chunk: ``json.dumps`` with these options builds a new one per call."""


def _prebuilt_encoder() -> Callable[[object, int], Sequence[str]] | None:
    """The C encoder :data:`_JSON` builds for itself on every ``encode`` call, built once.

    ``JSONEncoder.encode`` makes a new C encoder object (and a dict to catch circular references)
    each time; a chunk is encoded once per chunk of every run, so it is made here once, without the
    circular check (a cycle ends in ``RecursionError``, and :meth:`Chunk.encode` then takes
    :data:`_JSON`'s own path, which reports it as the ``ValueError`` it always did). Same options,
    same text. ``None`` where the C accelerator is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    encoder: Callable[[object, int], Sequence[str]] = make(
        None,
        _JSON.default,
        json.encoder.encode_basestring,  # ensure_ascii=False
        None,
        _JSON.key_separator,
        _JSON.item_separator,
        _JSON.sort_keys,
        _JSON.skipkeys,
        _JSON.allow_nan,
    )
    return encoder


_ENCODER: Final = _prebuilt_encoder()


def encode_json(value: object) -> str:
    """``value`` as compact JSON text, exactly as ``_JSON.encode`` writes it (only faster)."""
    if _ENCODER is not None:
        try:
            return "".join(_ENCODER(value, 0))
        except RecursionError:
            pass  # a cycle or a very deep value: the library's own path says which
    return _JSON.encode(value)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One SSE chunk before it has a ``seq`` (the buffer assigns it)."""

    agent: str
    type: str
    data: JsonValue
    time: float

    def encode(self, seq: int) -> str:
        """The JSON text sent as the SSE ``data:`` line, keys in seed 002 §5-1's order."""
        body = {
            "time": iso_time(self.time),
            "agent": self.agent,
            "type": self.type,
            "data": self.data,
            "seq": seq,
        }
        try:
            return encode_json(body)
        except (TypeError, ValueError):
            body["data"] = to_json_value(self.data)
            return encode_json(body)


def to_data(value: object, *, _depth: int = 0) -> JsonValue:
    """Plain JSON data for an event field: dataclasses field by field (hidden fields left out),
    pydantic models dumped in JSON mode, enums by value, tuples as lists."""
    if value is None or isinstance(value, bool | int | float | str):
        return to_json_value(value)
    if _depth > 16:
        return to_json_value(value)
    if isinstance(value, enum.Enum):
        return to_data(value.value, _depth=_depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_data(getattr(value, f.name), _depth=_depth + 1)
            for f in dataclasses.fields(value)
            if f.name not in HIDDEN_FIELDS
        }
    if isinstance(value, BaseModel):
        dumped: JsonValue = value.model_dump(mode="json")
        return dumped
    if isinstance(value, dict):
        return {str(k): to_data(v, _depth=_depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_data(v, _depth=_depth + 1) for v in value]
    try:
        plain: JsonValue = _ANY.dump_python(value, mode="json")
    except Exception:
        return to_json_value(value)
    return plain


def _content_text(parts: object) -> str:
    if isinstance(parts, tuple | list):
        return "".join(str(getattr(p, "text", "")) for p in parts)
    return ""


def usage_data(usage: Usage) -> JsonValue:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cached_tokens": usage.cached_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "requests": usage.requests,
        "total_tokens": usage.total_tokens,
    }


ServedEvent: TypeAlias = "RunEvent[Any] | RouteDecision"
"""kanawa's own events a served run yields: the loop's and a team's routing decision."""

_SERVED_TYPES: Final = frozenset(
    [*(get_origin(member) or member for member in get_args(RunEvent)), RouteDecision]
)
"""The classes of :data:`ServedEvent` (events are final dataclasses: their exact class is looked up)."""

EventChunks: TypeAlias = Callable[[Any, str, float], Iterable[Chunk]]
"""An application's translation of one of its own events: ``(event, agent, now)`` → its chunks."""


class UnknownEvent(TypeError):  # noqa: N818 - reads as the condition
    """A run yielded an event that is neither kanawa's own nor one the application gave a translation
    for: the run fails (with an ``internal_error`` chunk) rather than guess its shape."""


class ChunkTranslation:
    """Run events → chunks (module docstring): kanawa's own exhaustively, an application's through
    ``extra`` (event class → its :data:`EventChunks`)."""

    __slots__ = ("_extra",)

    def __init__(self, extra: Mapping[type[Any], EventChunks] | None = None) -> None:
        self._extra = dict(extra or {})

    def with_extra(self, extra: Mapping[type[Any], EventChunks]) -> ChunkTranslation:
        """This translation and ``extra`` besides; ``ValueError`` when a class is translated twice."""
        taken = sorted(cls.__name__ for cls in extra if cls in self._extra or cls in _SERVED_TYPES)
        if taken:
            raise ValueError(f"events translated twice: {', '.join(taken)}")
        return ChunkTranslation({**self._extra, **extra})

    def chunks(self, event: object, *, agent: str, now: float) -> list[Chunk]:
        """The chunks one run event becomes (usually one; a final response also gives its usage)."""
        if type(event) is TextDelta:  # most of a run's events: straight to its chunk
            return [Chunk(agent, "delta", {"text": event.text}, now)]
        if type(event) in _SERVED_TYPES:
            return served_chunks(cast("ServedEvent", event), agent, now, self._nested)
        translate = self._extra.get(type(event))
        if translate is None:
            raise UnknownEvent(
                f"no chunk translation for a {type(event).__name__} event: an application gives one "
                "for each of its own events (Extension(event_chunks=...))"
            )
        return list(translate(event, agent, now))

    def _nested(self, event: NestedEvent, now: float) -> list[Chunk]:
        depth = to_data(event.depth)
        out = []
        for chunk in self.chunks(event.event, agent=event.agent, now=now):
            data = chunk.data
            if isinstance(data, dict):
                data = {**data, "depth": depth}
            out.append(Chunk(chunk.agent, chunk.type, data, chunk.time))
        return out


def served_chunks(
    event: ServedEvent, agent: str, now: float, nested: Callable[[NestedEvent, float], list[Chunk]]
) -> list[Chunk]:
    """The chunks of one of kanawa's own events (``nested`` translates a nested run's event)."""
    if isinstance(event, TextDelta):
        return [Chunk(agent, "delta", {"text": event.text}, now)]
    if isinstance(event, ReasoningDelta):
        return [Chunk(agent, "delta", {"reasoning": event.text}, now)]
    if isinstance(event, NestedEvent):
        return nested(event, now)
    if isinstance(event, ToolCallStarted):
        return [Chunk(agent, "tool_call_start", to_data(event), now)]
    if isinstance(event, ToolCallArgsDelta):
        return [Chunk(agent, "tool_call_delta", to_data(event), now)]
    if isinstance(event, ToolCallStep):
        call: dict[str, JsonValue] = {"step": event.step, **_as_dict(to_data(event.call))}
        call.pop("provider_details", None)
        return [Chunk(agent, "tool_call", call, now)]
    if isinstance(event, ToolResultStep):
        body = _as_dict(to_data(event.result))
        body["content"] = _content_text(event.result.content)
        return [Chunk(agent, "tool_response", {"step": event.step, **body}, now)]
    if isinstance(event, FinalResponse):
        final = {"step": event.step, "output": to_data(event.output), "text": event.text}
        return [Chunk(agent, "final", final, now), Chunk(agent, "usage", usage_data(event.usage), now)]
    if isinstance(event, Thinking):
        return [Chunk(agent, "thinking", to_data(event), now)]
    if isinstance(event, GuardrailTripped):
        return [Chunk(agent, "guardrail", to_data(event), now)]
    if isinstance(event, HandoffStarted):
        return [Chunk(agent, "handoff_start", to_data(event), now)]
    if isinstance(event, HandoffEnded):
        return [Chunk(agent, "handoff_end", to_data(event), now)]
    if isinstance(event, ApprovalRequired):
        return [Chunk(agent, "approval_required", to_data(event), now)]
    if isinstance(event, RouteDecision):
        return [Chunk(agent, "route", _route_data(event), now)]
    assert_never(event)


def fields_chunk(chunk_type: str) -> EventChunks:
    """The translation of an application event that is one chunk of ``chunk_type`` whose ``data``
    are the event's fields (:func:`to_data`: hidden fields such as ``kind`` left out)."""

    def translate(event: Any, agent: str, now: float) -> Iterable[Chunk]:
        return (Chunk(agent, chunk_type, to_data(event), now),)

    return translate


def _route_data(event: object) -> JsonValue:
    data = _as_dict(to_data(event))
    question = data.pop("question", None)
    if data.get("source") == "llm" and isinstance(question, str):
        cut = question[:ROUTE_QUESTION_CHARS]
        data["question"] = cut if cut == question else cut + "…"
    return data


def error_chunk(exc: BaseException, *, agent: str, now: float) -> Chunk:
    """An ``error`` chunk for a run that failed (seed 002 §7): ``{"code", "message"}``.

    kanawa's own errors (``AgentError`` and its subclasses: ``GuardrailViolation``,
    ``HandoffDepthExceeded``, ``BudgetExceeded``, ``LLMCallFailed`` …, and ``ToolError``) keep their
    message, masked (:func:`kanawa.agents.failures.client_message`); anything else is reported as
    ``internal_error`` without its text.
    """
    code, message = failure_cause(exc)
    return Chunk(agent, "error", {"code": code, "message": message}, now)


def done_chunk(
    status: str, *, agent: str, now: float, reason: str | None = None, cost_usd: float | None = None
) -> Chunk:
    """The last chunk of a run's stream: how it ended (``completed``, ``failed``, ``cancelled``,
    ``awaiting_approval``), the termination reason, and what the run's model requests cost in USD
    (``None`` when a model has no known price: :mod:`kanawa.llm.pricing`)."""
    data: dict[str, JsonValue] = {"status": status, "termination_reason": reason, "cost_usd": cost_usd}
    return Chunk(agent, "done", data, now)


def _as_dict(value: JsonValue) -> dict[str, JsonValue]:
    return dict(value) if isinstance(value, dict) else {"value": value}


__all__ = [
    "TERMINAL_TYPES",
    "Chunk",
    "ChunkTranslation",
    "EventChunks",
    "ServedEvent",
    "UnknownEvent",
    "done_chunk",
    "encode_json",
    "error_chunk",
    "fields_chunk",
    "served_chunks",
    "to_data",
    "usage_data",
]
