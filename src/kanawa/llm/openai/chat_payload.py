"""kanawa messages, tools and settings → a Chat Completions request body (pure functions).

Targets every OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio), so it
sends only what is set and keeps to the common subset of the protocol (seed 002 §3-3):

* System messages keep their place, as ``system`` — or ``developer`` (``system_role`` option) for
  OpenAI reasoning models.
* A user turn is a plain string when it is only text, else content parts: ``text``, ``image_url``
  (URL or ``data:`` URL from bytes) and, for PDFs, ``file`` (``file_data`` as a data URL). Text files
  are inlined as text; other file types are refused before sending.
* An assistant turn sends its text (``null`` when empty and it has tool calls) and ``tool_calls``
  (``type: function``, id, name, arguments). Reasoning is never sent back — no OpenAI-compatible
  server accepts it. Stored arguments that are not a JSON object are sent as ``"{}"``: servers whose
  chat templates parse them (vLLM, llama.cpp) would otherwise refuse the whole request, and the tool
  result already tells the model its call failed to parse.
* A tool result is ``role: tool`` with ``tool_call_id`` and text content. The Chat Completions API
  carries text only there, so images a tool returned follow the run of tool results as one extra user
  message ("Images returned by tool call <id>:" + ``image_url`` parts).
* ``max_output_tokens`` → ``max_tokens`` (or ``max_completion_tokens``, the ``max_tokens_field``
  option, which OpenAI's reasoning models require); ``temperature``, ``top_p``, ``stop``, ``seed``,
  ``reasoning_effort`` and ``verbosity`` when set.
* ``tools`` as ``{type: function, function: {name, description, parameters, strict?}}``;
  ``tool_choice`` auto/none/required (``any`` → required) or ``{type: function, function: {name}}``;
  ``parallel_tool_calls`` only when set — both only when tools are offered.
* Structured output: ``response_format: {type: json_schema, json_schema: {name, schema, strict}}``
  (the name cut to the API's ``[A-Za-z0-9_-]{1,64}``).
* Streaming adds ``stream_options: {include_usage: true}`` unless turned off (servers that reject it).
* ``settings.cache``: its ``key`` → ``prompt_cache_key``, its ``retention`` →
  ``prompt_cache_retention`` (sent only when set: other OpenAI-compatible servers may not know them).
* ``settings.extra`` is merged last, verbatim, over the top-level keys.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.settings import ModelSettings
from kanawa.types import (
    AssistantMessage,
    ContentPart,
    FilePart,
    ImagePart,
    Message,
    OutputSchema,
    SystemMessage,
    TextPart,
    ToolMessage,
    ToolSpec,
    UserMessage,
)

PROVIDER = "openai-chat"

SystemRole: TypeAlias = Literal["system", "developer"]
MaxTokensField: TypeAlias = Literal["max_tokens", "max_completion_tokens"]

ChatMessage: TypeAlias = dict[str, Any]
"""One Chat Completions message as JSON (provider pass-through shape)."""

_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


# ----------------------------------------------------------------------------------------- messages


def convert_messages(messages: Sequence[Message], *, system_role: SystemRole = "system") -> list[ChatMessage]:
    """kanawa messages → the ``messages`` array, in order."""
    out: list[ChatMessage] = []
    pending_images: list[tuple[str, list[ImagePart]]] = []
    for message in messages:
        if not isinstance(message, ToolMessage) and pending_images:
            out.append(_tool_images_message(pending_images))
            pending_images = []
        if isinstance(message, SystemMessage):
            out.append({"role": system_role, "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": user_content(message.parts)})
        elif isinstance(message, AssistantMessage):
            out.append(assistant_message(message))
        elif isinstance(message, ToolMessage):
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text})
            images = [p for p in message.parts if isinstance(p, ImagePart)]
            if images:
                pending_images.append((message.tool_call_id, images))
        else:
            raise LLMBadRequestError(f"unsupported message type {type(message).__name__}", provider=PROVIDER)
    if pending_images:
        out.append(_tool_images_message(pending_images))
    return out


def user_content(parts: Sequence[ContentPart]) -> str | list[dict[str, Any]]:
    """A string for text-only turns, else content parts."""
    if all(isinstance(p, TextPart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, TextPart))
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(image_part(part))
        elif isinstance(part, FilePart):
            blocks.append(file_part(part))
        else:
            raise LLMBadRequestError(f"unsupported content part {type(part).__name__}", provider=PROVIDER)
    return blocks


def image_part(part: ImagePart) -> dict[str, Any]:
    """An ``image_url`` part; inline bytes travel as a ``data:`` URL."""
    if part.url is not None:
        url = part.url
    else:
        assert part.data is not None
        url = f"data:{part.media_type};base64,{base64.b64encode(part.data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def file_part(part: FilePart) -> dict[str, Any]:
    """A PDF as a ``file`` part; a text file inlined as text."""
    if part.media_type == "application/pdf":
        data = f"data:application/pdf;base64,{base64.b64encode(part.data).decode('ascii')}"
        file: dict[str, Any] = {"file_data": data, "filename": part.filename or "document.pdf"}
        return {"type": "file", "file": file}
    if part.media_type.startswith("text/"):
        return {"type": "text", "text": part.data.decode("utf-8", errors="replace")}
    raise LLMBadRequestError(
        f"Chat Completions files must be application/pdf or text/*, not {part.media_type!r}",
        provider=PROVIDER,
    )


def assistant_message(message: AssistantMessage) -> ChatMessage:
    """Text and tool calls; reasoning is not sent back."""
    out: ChatMessage = {"role": "assistant", "content": message.text or (None if message.tool_calls else "")}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": wire_arguments(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return out


def wire_arguments(arguments: str) -> str:
    """Stored argument text as sent back: unchanged when it is a JSON object, else ``"{}"``."""
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        return "{}"
    return arguments if isinstance(value, dict) else "{}"


def _tool_images_message(pending: list[tuple[str, list[ImagePart]]]) -> ChatMessage:
    content: list[dict[str, Any]] = []
    for call_id, images in pending:
        content.append({"type": "text", "text": f"Images returned by tool call {call_id}:"})
        content.extend(image_part(image) for image in images)
    return {"role": "user", "content": content}


# ------------------------------------------------------------------------------------------ request


def tool_params(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs → ``tools`` (function tools)."""
    tools: list[dict[str, Any]] = []
    for spec in specs:
        function: dict[str, Any] = {"name": spec.name, "parameters": dict(spec.parameters)}
        if spec.description:
            function["description"] = spec.description
        if spec.strict:
            function["strict"] = True
        tools.append({"type": "function", "function": function})
    return tools


def tool_choice_param(choice: str) -> str | dict[str, Any]:
    """``settings.tool_choice`` → ``tool_choice``."""
    if choice in ("auto", "none", "required"):
        return choice
    if choice == "any":
        return "required"
    return {"type": "function", "function": {"name": choice}}


def response_format_param(schema: OutputSchema) -> dict[str, Any]:
    """An output schema → ``response_format`` (``json_schema``)."""
    name = _SCHEMA_NAME.sub("_", schema.name)[:64] or "response"
    spec: dict[str, Any] = {"name": name, "schema": dict(schema.schema), "strict": schema.strict}
    if schema.description:
        spec["description"] = schema.description
    return {"type": "json_schema", "json_schema": spec}


def build_request(
    model: str,
    messages: Sequence[Message],
    *,
    tools: Sequence[ToolSpec],
    settings: ModelSettings,
    response_schema: OutputSchema | None,
    stream: bool,
    system_role: SystemRole = "system",
    max_tokens_field: MaxTokensField = "max_tokens",
    include_usage: bool = True,
) -> dict[str, Any]:
    """The whole JSON body for ``POST /chat/completions``, ``extra`` merged last."""
    body: dict[str, Any] = {"model": model, "messages": convert_messages(messages, system_role=system_role)}
    if settings.max_output_tokens is not None:
        body[max_tokens_field] = settings.max_output_tokens
    optional: dict[str, Any] = {
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "seed": settings.seed,
        "reasoning_effort": settings.reasoning_effort,
        "verbosity": settings.verbosity,
        "prompt_cache_key": None if settings.cache is None else settings.cache.key,
        "prompt_cache_retention": None if settings.cache is None else settings.cache.retention,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if settings.stop:
        body["stop"] = list(settings.stop)
    if tools:
        body["tools"] = tool_params(tools)
        if settings.tool_choice is not None:
            body["tool_choice"] = tool_choice_param(settings.tool_choice)
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    schema = response_schema
    if schema is None and settings.response_format == "json_schema" and settings.json_schema is not None:
        schema = OutputSchema("response", dict(settings.json_schema))
    if schema is not None:
        body["response_format"] = response_format_param(schema)
    body["stream"] = stream
    if stream and include_usage:
        body["stream_options"] = {"include_usage": True}
    body.update(settings.extra)
    return body
