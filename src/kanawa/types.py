"""Provider-neutral message, tool-call, usage and stream-event types.

Every layer above speaks these types; every provider adapter translates to and from them. They are
frozen, slotted dataclasses rather than pydantic models because they sit on the hot path of the tool
loop (one allocation per part, no validation per step) — validation happens at the edges instead.

Provider-specific data that must survive a round trip (OpenAI encrypted reasoning items, Anthropic
thinking signatures, Gemini thought signatures) lives in ``provider_details`` / ``payload`` fields,
never encoded into ids, text or arguments.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal, TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
"""Any value that survives ``json.dumps``/``json.loads`` unchanged."""

JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object; the shape of tool arguments, JSON schemas and provider pass-through payloads."""

ProviderDetails: TypeAlias = "Mapping[str, JsonValue]"
"""Opaque provider data carried so it can be sent back verbatim on the next request."""


# --------------------------------------------------------------------------------------------- parts


@dataclass(frozen=True, slots=True)
class TextPart:
    """Plain text content."""

    text: str
    _: KW_ONLY
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image given either by URL or by inline bytes (with its media type)."""

    _: KW_ONLY
    url: str | None = None
    data: bytes | None = None
    media_type: str = "image/png"
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        if (self.url is None) == (self.data is None):
            raise ValueError("ImagePart needs exactly one of url or data")


@dataclass(frozen=True, slots=True)
class FilePart:
    """A file (document, blob) with inline bytes, a media type and an optional file name."""

    data: bytes
    _: KW_ONLY
    media_type: str = "application/octet-stream"
    filename: str | None = None
    kind: Literal["file"] = "file"


ContentPart: TypeAlias = TextPart | ImagePart | FilePart


@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """Model reasoning: the visible summary text plus the provider's opaque payload.

    ``payload`` is whatever the provider needs back to continue the chain of thought — the OpenAI
    reasoning item (with ``encrypted_content``), an Anthropic thinking block with its ``signature``
    (or a ``redacted_thinking`` block), a Gemini ``thoughtSignature``. Adapters replay it verbatim
    when ``provider`` matches their own and drop it otherwise.
    """

    _: KW_ONLY
    text: str = ""
    provider: str = ""
    payload: ProviderDetails | None = None
    kind: Literal["reasoning"] = "reasoning"


def _as_parts(content: str | Sequence[ContentPart]) -> tuple[ContentPart, ...]:
    if isinstance(content, str):
        return (TextPart(content),)
    return tuple(content)


def text_of(parts: Sequence[ContentPart]) -> str:
    """Concatenate the text parts of a content sequence (non-text parts are skipped)."""
    return "".join(p.text for p in parts if isinstance(p, TextPart))


# ------------------------------------------------------------------------------------------ messages


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run a tool. ``arguments`` is the raw JSON text exactly as the model sent it;
    it is parsed (fail-closed) by the tool invoker, never by the adapter."""

    id: str
    name: str
    arguments: str
    _: KW_ONLY
    provider_details: ProviderDetails | None = None
    invalid_arguments: str | None = None
    """Why the provider's arguments are unusable before any parsing, e.g. a server that sent them as a
    JSON object instead of a string (seed 000 §6.1: a non-string is a parse error). ``arguments`` then
    holds that value as JSON text for the history; the invoker answers with its parse error and never
    calls the tool."""


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """Instructions for the model (OpenAI ``developer``/``system``, Anthropic ``system``, Gemini
    ``system_instruction``)."""

    content: str
    _: KW_ONLY
    role: Literal["system"] = "system"


@dataclass(frozen=True, slots=True, init=False)
class UserMessage:
    """A user turn: text, images and files."""

    parts: tuple[ContentPart, ...]
    role: Literal["user"]

    def __init__(self, content: str | Sequence[ContentPart]) -> None:
        object.__setattr__(self, "parts", _as_parts(content))
        object.__setattr__(self, "role", "user")

    @property
    def text(self) -> str:
        return text_of(self.parts)


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """A model turn: visible text, tool calls, and reasoning that must round-trip."""

    _: KW_ONLY
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: tuple[ReasoningPart, ...] = ()
    provider_details: ProviderDetails | None = None
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True, init=False)
class ToolMessage:
    """The result of one tool call, sent back to the model. ``is_error`` tells the model the call
    failed so it can recover (seed 003: tool errors are propagated, not raised)."""

    tool_call_id: str
    parts: tuple[ContentPart, ...]
    is_error: bool
    name: str
    role: Literal["tool"]

    def __init__(
        self,
        tool_call_id: str,
        content: str | Sequence[ContentPart],
        *,
        is_error: bool = False,
        name: str = "",
    ) -> None:
        object.__setattr__(self, "tool_call_id", tool_call_id)
        object.__setattr__(self, "parts", _as_parts(content))
        object.__setattr__(self, "is_error", is_error)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "role", "tool")

    @property
    def text(self) -> str:
        return text_of(self.parts)


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage


# ------------------------------------------------------------------------------------ usage and stop


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage. ``reasoning_tokens`` is a subset of the output tokens; ``cached_tokens`` (read from
    the provider's prompt cache) and ``cache_write_tokens`` (written to it: Anthropic's cache creation,
    OpenAI's cache writes) are subsets of the input tokens, as the providers report them — each is
    priced at its own rate (:mod:`kanawa.llm.pricing`)."""

    _: KW_ONLY
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    requests: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            requests=self.requests + other.requests,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class StopReason(enum.StrEnum):
    """Why the model stopped (seed 003). ``None`` where the provider said nothing usable."""

    TOOL_USE = "tool_use"
    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """One complete model response."""

    message: AssistantMessage
    stop_reason: StopReason | None
    _: KW_ONLY
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    response_id: str | None = None


# ------------------------------------------------------------------------------ tools offered to LLM


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What an adapter needs to offer a tool to a model: name, description and JSON schema."""

    name: str
    description: str
    parameters: JsonObject
    _: KW_ONLY
    strict: bool = False


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """A JSON schema the final answer must satisfy (structured output)."""

    name: str
    schema: JsonObject
    _: KW_ONLY
    strict: bool = True
    description: str | None = None


# ------------------------------------------------------------------------------------- stream events


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of visible answer text."""

    text: str
    _: KW_ONLY
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning (summary) text."""

    text: str
    _: KW_ONLY
    kind: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began a tool call. ``index`` orders calls within one response."""

    index: int
    id: str
    name: str
    _: KW_ONLY
    kind: Literal["tool_call_started"] = "tool_call_started"


@dataclass(frozen=True, slots=True)
class ToolCallArgsDelta:
    """A fragment of a tool call's JSON arguments, as it streams."""

    index: int
    id: str
    delta: str
    _: KW_ONLY
    kind: Literal["tool_call_args_delta"] = "tool_call_args_delta"


@dataclass(frozen=True, slots=True)
class ResponseCompleted:
    """The stream is finished; ``response`` is the assembled whole. Always the last event."""

    response: LLMResponse
    _: KW_ONLY
    kind: Literal["response_completed"] = "response_completed"


StreamEvent: TypeAlias = TextDelta | ReasoningDelta | ToolCallStarted | ToolCallArgsDelta | ResponseCompleted

__all__ = [
    "AssistantMessage",
    "ContentPart",
    "FilePart",
    "ImagePart",
    "JsonObject",
    "JsonValue",
    "LLMResponse",
    "Message",
    "OutputSchema",
    "ProviderDetails",
    "ReasoningDelta",
    "ReasoningPart",
    "ResponseCompleted",
    "StopReason",
    "StreamEvent",
    "SystemMessage",
    "TextDelta",
    "TextPart",
    "ToolCall",
    "ToolCallArgsDelta",
    "ToolCallStarted",
    "ToolMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "text_of",
]
