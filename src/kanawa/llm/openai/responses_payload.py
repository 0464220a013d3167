"""Build OpenAI Responses API request bodies from kanawa messages (seed 001 §3.6, §3.7).

Pure functions, no SDK import, shared by :class:`~kanawa.llm.openai.responses.OpenAIResponsesAdapter`
and the Dify model plugin. Response parsing lives in :mod:`kanawa.llm.openai.responses_output`.

Message conversion (:func:`messages_to_responses_input`):

- system messages *before* the first other message are joined (blank line between) into the top-level
  ``instructions``; a system message later in the conversation becomes a ``developer`` item in place,
  so its position is kept;
- user text / images / files → ``input_text`` / ``input_image`` / ``input_file`` parts;
- assistant → first its OpenAI reasoning items, replayed verbatim (``id``, ``summary``,
  ``encrypted_content`` …; other providers' reasoning is dropped), then ``{"role": "assistant",
  "content": text}`` when there is text, then one ``function_call`` item per tool call;
- tool results → ``function_call_output`` with ``call_id``; empty output is kept, because the call
  happened and the API requires an output for every call.

Request mapping (:func:`build_responses_payload`), settings left ``None`` are not sent:
``max_output_tokens``; ``reasoning.effort`` / ``reasoning.summary``; ``text.verbosity``;
``text.format`` = json_schema from ``response_schema`` or ``response_format="json_schema"`` +
``json_schema``; ``tool_choice`` (auto/none/required, or a tool name →
``{"type": "function", "name": ...}``) and ``parallel_tool_calls`` — both only when tools are offered;
``stream`` = ``settings.stream`` (default true) AND the caller's flag; ``temperature``/``top_p``;
``store=False`` always (kanawa keeps the conversation) and, for reasoning models,
``include=["reasoning.encrypted_content"]`` so reasoning round-trips statelessly. GPT-5 rejects
``stop``: it is not sent; ``truncation="disabled"`` is sent instead and the stop sequences are
applied client-side (see :mod:`kanawa.llm.openai.responses_output`). ``settings.seed`` has no
Responses API counterpart and is not sent. ``settings.cache`` sends its ``key`` as
``prompt_cache_key`` and its ``retention`` as ``prompt_cache_retention`` (OpenAI caches prefixes by
itself; these only steer it). ``settings.extra`` is merged last, overriding anything.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import assert_never

from kanawa.llm.adapter import ToolLike, tool_specs
from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.openai.catalogue import is_reasoning_model
from kanawa.llm.openai.credentials import validate_json_schema
from kanawa.llm.openai.responses_output import MESSAGE_ITEMS_KEY
from kanawa.llm.settings import ModelSettings
from kanawa.types import (
    AssistantMessage,
    ContentPart,
    FilePart,
    ImagePart,
    JsonObject,
    JsonValue,
    Message,
    OutputSchema,
    SystemMessage,
    TextPart,
    ToolMessage,
    ToolSpec,
    UserMessage,
)

__all__ = [
    "OPENAI_PROVIDER",
    "ResponsesPayloadError",
    "build_responses_payload",
    "messages_to_responses_input",
    "response_format_of",
    "tool_to_responses",
]

OPENAI_PROVIDER = "openai"
"""The ``ReasoningPart.provider`` whose payloads are replayed to the Responses API."""

_TOOL_CHOICE_KEYWORDS = frozenset({"auto", "none", "required"})


class ResponsesPayloadError(LLMBadRequestError, ValueError):
    """The request cannot be built (a tool without a name, an invalid ``json_schema`` …).

    Both a ``ValueError`` (seed 001 §3.6: "tool name 欠落時は ValueError") and an
    :class:`LLMBadRequestError`, so adapter callers only ever see ``LLMError`` subclasses.
    """


# ------------------------------------------------------------------------------------------- input


def _data_url(data: bytes, media_type: str) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _content_part(part: ContentPart) -> JsonObject:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
        url = part.url if part.url is not None else _data_url(part.data or b"", part.media_type)
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    if isinstance(part, FilePart):
        return {
            "type": "input_file",
            "filename": part.filename or "file",
            "file_data": _data_url(part.data, part.media_type),
        }
    assert_never(part)


def _input_message(role: str, parts: Sequence[ContentPart]) -> JsonObject:
    content: list[JsonValue] = [_content_part(p) for p in parts]
    return {"role": role, "content": content}


def _tool_output(message: ToolMessage) -> JsonValue:
    if all(isinstance(p, TextPart) for p in message.parts):
        return message.text
    return [_content_part(p) for p in message.parts]


def _assistant_message_items(message: AssistantMessage) -> list[JsonObject]:
    """The assistant's text as message items, each with the ``phase`` the response gave it (GPT-5.x),
    sent back unchanged. If the text was changed since (a stop sequence cut it, a caller edited it), it
    goes as one item carrying the last phase seen."""
    details = message.provider_details or {}
    kept = details.get(MESSAGE_ITEMS_KEY)
    entries = [e for e in kept if isinstance(e, dict)] if isinstance(kept, list) else []
    if entries and "".join(str(e.get("text", "")) for e in entries) == message.text:
        return [
            _assistant_text_item(str(e.get("text", "")), e.get("phase")) for e in entries if e.get("text")
        ]
    if not message.text:
        return []
    phases = [e.get("phase") for e in entries if e.get("phase") is not None]
    return [_assistant_text_item(message.text, phases[-1] if phases else None)]


def _assistant_text_item(text: str, phase: object) -> JsonObject:
    item: JsonObject = {"role": "assistant", "content": text}
    if isinstance(phase, str):
        item["phase"] = phase
    return item


def _assistant_items(message: AssistantMessage) -> list[JsonObject]:
    items: list[JsonObject] = []
    for part in message.reasoning:
        if part.provider == OPENAI_PROVIDER and part.payload is not None:
            items.append(dict(part.payload))
    items.extend(_assistant_message_items(message))
    for call in message.tool_calls:
        items.append(
            {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments}
        )
    return items


def messages_to_responses_input(messages: Sequence[Message]) -> tuple[str | None, list[JsonObject]]:
    """Convert messages to ``(instructions, input_items)`` as described in the module docstring."""
    leading: list[str] = []
    items: list[JsonObject] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            if items:
                items.append(_input_message("developer", [TextPart(message.content)]))
            else:
                leading.append(message.content)
        elif isinstance(message, UserMessage):
            items.append(_input_message("user", message.parts))
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message))
        elif isinstance(message, ToolMessage):
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": _tool_output(message),
                }
            )
        else:
            assert_never(message)
    instructions = "\n\n".join(leading) if leading else None
    return instructions, items


# ------------------------------------------------------------------------------------------- tools


def tool_to_responses(spec: ToolSpec) -> JsonObject:
    """A :class:`ToolSpec` as a Responses API function tool; a missing/blank name is an error."""
    if not isinstance(spec.name, str) or not spec.name.strip():
        raise ResponsesPayloadError(
            "tool name is missing: every tool needs a non-empty name", provider="openai"
        )
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "strict": spec.strict,
    }


def _tool_choice(choice: str, tool_names: Sequence[str]) -> JsonValue:
    if choice in _TOOL_CHOICE_KEYWORDS:
        return choice
    if choice not in tool_names:
        raise ResponsesPayloadError(
            f"tool_choice names {choice!r}, which is not among the offered tools", provider="openai"
        )
    return {"type": "function", "name": choice}


# ------------------------------------------------------------------------------------------ format


def _format_from_schema(schema: OutputSchema) -> JsonObject:
    fmt: JsonObject = {
        "type": "json_schema",
        "name": schema.name,
        "schema": schema.schema,
        "strict": schema.strict,
    }
    if schema.description:
        fmt["description"] = schema.description
    return fmt


def _format_from_settings(raw: JsonObject | None) -> JsonObject:
    if raw is None:
        raise ResponsesPayloadError(
            "json_schema is required when response_format is json_schema", provider="openai"
        )
    try:
        checked = validate_json_schema(raw)
    except ValueError as exc:
        raise ResponsesPayloadError(str(exc), provider="openai") from None
    fmt: JsonObject = {
        "type": "json_schema",
        "name": checked.get("name") or "response",
        "schema": checked["schema"],
    }
    for key in ("strict", "description"):
        if key in checked:
            fmt[key] = checked[key]
    return fmt


def response_format_of(settings: ModelSettings, response_schema: OutputSchema | None) -> str:
    """``"json_schema"`` or ``"text"`` — what the request asks for (audit field ``response_format``)."""
    if response_schema is not None or settings.response_format == "json_schema":
        return "json_schema"
    return "text"


# ------------------------------------------------------------------------------------------ payload


def _put_if_any(payload: JsonObject, key: str, fields: dict[str, JsonValue]) -> None:
    """Set ``payload[key]`` to the fields that are not ``None``; leave it out when none is set, so the
    provider's default applies."""
    given: JsonObject = {name: value for name, value in fields.items() if value is not None}
    if given:
        payload[key] = given


def _text_format(s: ModelSettings, response_schema: OutputSchema | None) -> JsonObject | None:
    """The ``text.format`` of the request: the run's response schema, else the settings' JSON schema."""
    if response_schema is not None:
        return _format_from_schema(response_schema)
    if s.response_format == "json_schema":
        return _format_from_settings(s.json_schema)
    return None


def build_responses_payload(
    model: str,
    messages: Sequence[Message],
    *,
    tools: Sequence[ToolLike] = (),
    settings: ModelSettings | None = None,
    response_schema: OutputSchema | None = None,
    stream: bool = False,
) -> JsonObject:
    """The JSON body of ``POST /responses`` (mapping in the module docstring).

    Raises :class:`ResponsesPayloadError` for a nameless tool, a ``tool_choice`` naming a tool not
    offered, or a missing/invalid ``json_schema``.
    """
    s = settings or ModelSettings()
    instructions, items = messages_to_responses_input(messages)
    specs = tool_specs(tools)
    payload: JsonObject = {"model": model, "input": list[JsonValue](items)}
    if instructions is not None:
        payload["instructions"] = instructions
    if specs:
        payload["tools"] = [tool_to_responses(spec) for spec in specs]
        if s.tool_choice is not None:
            payload["tool_choice"] = _tool_choice(s.tool_choice, [spec.name for spec in specs])
        if s.parallel_tool_calls is not None:
            payload["parallel_tool_calls"] = s.parallel_tool_calls
    if s.max_output_tokens is not None:
        payload["max_output_tokens"] = s.max_output_tokens
    _put_if_any(payload, "reasoning", {"effort": s.reasoning_effort, "summary": s.reasoning_summary})
    _put_if_any(payload, "text", {"verbosity": s.verbosity, "format": _text_format(s, response_schema)})
    if s.temperature is not None:
        payload["temperature"] = s.temperature
    if s.top_p is not None:
        payload["top_p"] = s.top_p
    if s.stop:
        payload["truncation"] = "disabled"
    payload["store"] = False
    if is_reasoning_model(model):
        payload["include"] = ["reasoning.encrypted_content"]
    payload["stream"] = (s.stream if s.stream is not None else True) and stream
    if s.cache is not None:
        if s.cache.key is not None:
            payload["prompt_cache_key"] = s.cache.key
        if s.cache.retention is not None:
            payload["prompt_cache_retention"] = s.cache.retention
    payload.update(s.extra)
    return payload
