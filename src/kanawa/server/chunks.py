"""Run events → SSE chunks (seed 002 §5-1): ``{time, agent, type, data, seq}``.

This is the one place that knows how a run's events look on the wire. It maps by the event's ``kind``
literal, never by class, so events added to :mod:`kanawa.loop.steps` later (handoffs, guardrails,
approvals) work without an import of their classes:

======================  ====================  ===================================================
event ``kind``          chunk ``type``        ``data``
======================  ====================  ===================================================
``text_delta``          ``delta``             ``{"text"}``
``reasoning_delta``     ``delta``             ``{"reasoning"}``
``tool_call_started``   ``tool_call_start``   ``{"index", "id", "name"}``
``tool_call_args_delta``  ``tool_call_delta``   ``{"index", "id", "delta"}``
``tool_call``           ``tool_call``         ``{"step", "id", "name", "arguments"}``
``tool_result``         ``tool_response``     ``{"step", "call_id", "name", "content", "is_error", …}``
``final_response``      ``final``             ``{"step", "output", "text"}``, then a ``usage`` chunk
``thinking``            ``thinking``          ``{"step", "reason"}``
``nested``              the inner event's     the inner event's, plus ``depth``; ``agent`` is the
                                              handed-off agent's name
``guardrail``           ``guardrail``         the event's fields (``action`` ``warn``/``block`` …)
``route``               ``route``             ``{"agents", "source", "reason", "rule"}``, and
                                              ``question`` only when a model restated the request
                                              (at most :data:`ROUTE_QUESTION_CHARS`): a rule
                                              router's question is the whole input, which the
                                              client sent and which would be stored once more
anything else           its ``kind``          its dataclass fields as JSON
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
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, TypeAdapter

from kanawa.llm.errors import LLMError
from kanawa.loop.errors import AgentError, LLMCallFailed
from kanawa.secrets import mask
from kanawa.tools.errors import ToolError
from kanawa.trace.serialize import iso_time, to_json_value
from kanawa.types import JsonValue, Usage

HIDDEN_FIELDS: Final = frozenset({"kind", "detail", "output", "partial_result"})
"""Dataclass fields never copied generically (``output`` of a tool result is the raw Python value;
its model-visible form is ``content``)."""

TERMINAL_TYPES: Final = frozenset({"done"})
"""The chunk type that ends a run's stream (``data.status`` says how the run ended)."""

SAFE_ERRORS: Final = (AgentError, ToolError, LLMError)
"""kanawa's error families carry messages written to be shown (no prompts, no tool arguments)."""

ROUTE_QUESTION_CHARS: Final = 500
"""Longest restated question a ``route`` chunk carries (a model's answer, asked to be brief)."""

_ANY: Final = TypeAdapter(Any)
_JSON: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""One encoder for every chunk: ``json.dumps`` with these options builds a new one per call."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One SSE chunk before it has a ``seq`` (the buffer assigns it)."""

    agent: str
    type: str
    data: JsonValue
    time: float

    def encode(self, seq: int) -> str:
        """The JSON text sent as the SSE ``data:`` line, keys in seed 002 §5-1's order."""
        body = {"time": iso_time(self.time), "agent": self.agent, "type": self.type, "data": self.data}
        body["seq"] = seq
        try:
            return _JSON.encode(body)
        except (TypeError, ValueError):
            body["data"] = to_json_value(self.data)
            return _JSON.encode(body)


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


def event_chunks(event: object, *, agent: str, now: float) -> Iterator[Chunk]:
    """The chunks one run event becomes (usually one; a final response also yields its usage)."""
    kind = str(getattr(event, "kind", type(event).__name__))
    if kind == "nested":
        inner = getattr(event, "event", None)
        nested_agent = str(getattr(event, "agent", agent))
        depth = getattr(event, "depth", None)
        for chunk in event_chunks(inner, agent=nested_agent, now=now):
            data = chunk.data
            if isinstance(data, dict) and depth is not None:
                data = {**data, "depth": to_data(depth)}
            yield Chunk(chunk.agent, chunk.type, data, chunk.time)
        return
    if kind == "text_delta":
        yield Chunk(agent, "delta", {"text": str(getattr(event, "text", ""))}, now)
    elif kind == "reasoning_delta":
        yield Chunk(agent, "delta", {"reasoning": str(getattr(event, "text", ""))}, now)
    elif kind == "tool_call_started":
        yield Chunk(agent, "tool_call_start", to_data(event), now)
    elif kind == "tool_call_args_delta":
        yield Chunk(agent, "tool_call_delta", to_data(event), now)
    elif kind == "tool_call":
        call = getattr(event, "call", None)
        data = {"step": getattr(event, "step", None), **_as_dict(to_data(call))}
        data.pop("provider_details", None)
        yield Chunk(agent, "tool_call", data, now)
    elif kind == "tool_result":
        result = getattr(event, "result", None)
        body = _as_dict(to_data(result))
        body["content"] = _content_text(getattr(result, "content", ()))
        yield Chunk(agent, "tool_response", {"step": getattr(event, "step", None), **body}, now)
    elif kind == "final_response":
        output = getattr(event, "output", None)
        yield Chunk(
            agent,
            "final",
            {
                "step": getattr(event, "step", None),
                "output": to_data(output),
                "text": str(getattr(event, "text", "")),
            },
            now,
        )
        usage = getattr(event, "usage", None)
        if isinstance(usage, Usage):
            yield Chunk(agent, "usage", usage_data(usage), now)
    elif kind == "handoff_start":
        yield Chunk(agent, "handoff_start", to_data(event), now)
    elif kind == "handoff_end":
        yield Chunk(agent, "handoff_end", to_data(event), now)
    elif kind == "guardrail":
        yield Chunk(agent, "guardrail", to_data(event), now)
    elif kind == "route":
        yield Chunk(agent, "route", _route_data(event), now)
    elif kind == "approval_required":
        yield Chunk(agent, "approval_required", to_data(event), now)
    else:
        yield Chunk(agent, kind, to_data(event), now)


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
    message, masked (:func:`client_message`); anything else is reported as ``internal_error``
    without its text.
    """
    if isinstance(exc, SAFE_ERRORS):
        code, message = type(exc).__name__, client_message(exc)
    else:
        code, message = "internal_error", "the run failed with an internal error"
    return Chunk(agent, "error", {"code": code, "message": message}, now)


_PATH: Final = re.compile(
    r"(?<![\w:/.~-])(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?"  # /srv/app/x.yaml, ~/keys, ../etc/passwd
    r"|\b[A-Za-z]:\\(?:[\w .@+-]+\\?)+"  # C:\Users\me\key.txt
)
PATH_MASK: Final = "[path]"


def client_message(exc: BaseException) -> str:
    """What a client is told of one of kanawa's own errors: a provider failure is summarised from
    its fields (error class, provider and model, HTTP status) without the provider's text — which may
    name the provider's or this server's files, hosts and keys; other messages are masked
    (:func:`kanawa.secrets.mask`) and their file paths replaced with ``[path]``. The whole text stays
    in the server's log (masked, :mod:`kanawa.server.runs`)."""
    if isinstance(exc, LLMCallFailed):
        return f"model request at step {exc.step} failed: {_provider_summary(exc.error)}"
    if isinstance(exc, LLMError):
        return f"model request failed: {_provider_summary(exc)}"
    return _PATH.sub(PATH_MASK, mask(str(exc)))


def _provider_summary(error: LLMError) -> str:
    where = ":".join(part for part in (error.provider, error.model) if part)
    status = f" (HTTP {error.status_code})" if error.status_code is not None else ""
    return f"{type(error).__name__}{f' from {where}' if where else ''}{status}"


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
    "client_message",
    "done_chunk",
    "error_chunk",
    "event_chunks",
    "to_data",
    "usage_data",
]
