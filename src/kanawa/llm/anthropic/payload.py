"""kanawa messages, tools and settings → an Anthropic Messages API request body (pure functions).

Kept apart from :mod:`kanawa.llm.anthropic.adapter` so the conversion can be read and tested without a client.
The rules (seed 002 §3-3; Anthropic Messages API as typed by the installed ``anthropic`` SDK):

* System messages are hoisted, in order, into the top-level ``system`` field (joined by blank lines).
* User parts become ``text`` / ``image`` (base64, ``data:`` URL or URL source) / ``document`` blocks
  (PDF as base64, ``text/*`` as a plain-text source); other file types are refused before sending.
* An assistant turn replays, in this order: its Anthropic reasoning payloads VERBATIM (``thinking``
  blocks with their ``signature``, ``redacted_thinking`` blocks — reasoning from other providers is
  dropped), its text, then one ``tool_use`` block per call. Stored arguments that are not a JSON
  object (malformed text from the model) are sent as ``{}``: the API only accepts an object, and the
  matching ``tool_result`` already tells the model its call failed to parse.
* Tool results become ``tool_result`` blocks (``is_error`` sent when true, content as text/image/
  document blocks) in a user turn; consecutive same-role turns are merged into one, so parallel tool
  results travel in ONE user message as the API requires.
* ``max_tokens`` is mandatory: ``settings.max_output_tokens``, else the adapter's per-model default
  (plus the thinking budget, which counts against it).
* ``reasoning_effort`` → extended thinking. Budget mode (default): ``thinking: {type: enabled,
  budget_tokens}`` with minimal 1024, low 2048, medium 8192, high 16384, xhigh 32000 tokens; a budget
  that does not fit under an explicit ``max_output_tokens`` is halved to fit (never below the API's
  1024 floor — an error then). Adaptive mode (models that prefer it): ``thinking: {type: adaptive}``
  plus ``output_config.effort`` (minimal→low). ``"none"`` sends no thinking at all.
* ``tool_choice``: auto → auto, required/any → any, none → none, another string → that tool;
  ``parallel_tool_calls=False`` → ``disable_parallel_tool_use``. Sent only when tools are offered.
* Structured output uses the API's native ``output_config.format`` (``json_schema``), so the final
  answer text IS the JSON (the loop's contract). Strict schemas go through the SDK's
  ``transform_schema`` (unsupported constraints move into descriptions, objects get
  ``additionalProperties: false``).
* ``verbosity``, ``reasoning_summary`` and ``seed`` have no Messages API equivalent and are not sent.
* ``settings.cache`` (:class:`~kanawa.llm.settings.PromptCache`) → ``cache_control``
  breakpoints (``{"type": "ephemeral"}``, plus ``ttl`` when set) on the last tool, on the system text
  (sent then as one text block) and on the last content block of the last user turn — each only where
  ``cache.breakpoints`` names it and the request has one. Anthropic caches the prefix up to each
  breakpoint; a prefix under the model's minimum length is simply not cached.
* ``settings.extra`` is merged last, verbatim, over the top-level keys.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from anthropic import transform_schema
from anthropic.types import (
    Base64ImageSourceParam,
    ImageBlockParam,
    MessageParam,
    TextBlockParam,
    ToolChoiceParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
)
from anthropic.types.document_block_param import DocumentBlockParam

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.settings import ModelSettings, PromptCache, ReasoningEffort
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

PROVIDER = "anthropic"

ThinkingMode: TypeAlias = Literal["budget", "adaptive"]
"""How ``reasoning_effort`` is expressed: a token budget (``enabled``) or ``adaptive`` + effort."""

THINKING_BUDGETS: Mapping[ReasoningEffort, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32000,
}
"""``reasoning_effort`` → ``thinking.budget_tokens`` in budget mode (1024 is the API's minimum)."""

ADAPTIVE_EFFORT: Mapping[ReasoningEffort, str] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
}
"""``reasoning_effort`` → ``output_config.effort`` in adaptive mode."""

MIN_THINKING_BUDGET = 1024

_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")

AssistantBlock: TypeAlias = "dict[str, Any] | TextBlockParam | ToolUseBlockParam"
"""A ``dict[str, Any]`` here is a replayed thinking/redacted_thinking block (provider pass-through)."""


# ----------------------------------------------------------------------------------------- messages


def convert_messages(messages: Sequence[Message]) -> tuple[str | None, list[MessageParam]]:
    """Split ``messages`` into the top-level ``system`` text and the alternating ``messages`` list."""
    system: list[str] = []
    turns: list[MessageParam] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            if message.content:
                system.append(message.content)
        elif isinstance(message, UserMessage):
            _append(turns, "user", content_blocks(message.parts))
        elif isinstance(message, AssistantMessage):
            _append(turns, "assistant", assistant_blocks(message))
        elif isinstance(message, ToolMessage):
            _append(turns, "user", [tool_result_block(message)])
        else:
            raise LLMBadRequestError(f"unsupported message type {type(message).__name__}", provider=PROVIDER)
    return ("\n\n".join(system) if system else None), turns


def _append(turns: list[MessageParam], role: Literal["user", "assistant"], blocks: Sequence[Any]) -> None:
    """Add a turn, merging it into the previous one when the role repeats (the API wants alternation)."""
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        previous = turns[-1]["content"]
        assert isinstance(previous, list)
        previous.extend(blocks)
        return
    if role == "user":
        turns.append({"role": "user", "content": list(blocks)})
    else:
        turns.append({"role": "assistant", "content": list(blocks)})


def content_blocks(
    parts: Sequence[ContentPart],
) -> list[TextBlockParam | ImageBlockParam | DocumentBlockParam]:
    """User (or tool-result) parts → text, image and document blocks. Empty text parts are skipped."""
    blocks: list[TextBlockParam | ImageBlockParam | DocumentBlockParam] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(image_block(part))
        elif isinstance(part, FilePart):
            blocks.append(document_block(part))
        else:
            raise LLMBadRequestError(f"unsupported content part {type(part).__name__}", provider=PROVIDER)
    return blocks


def image_block(part: ImagePart) -> ImageBlockParam:
    """An image by URL, or inline base64 (from bytes or a ``data:`` URL)."""
    if part.data is not None:
        return _base64_image(part.media_type, base64.b64encode(part.data).decode("ascii"))
    assert part.url is not None
    if part.url.startswith("data:"):
        header, _, data = part.url.partition(",")
        media_type = header[len("data:") :].split(";", 1)[0] or part.media_type
        if ";base64" not in header:
            raise LLMBadRequestError("image data: URLs must be base64-encoded", provider=PROVIDER)
        return _base64_image(media_type, data)
    return {"type": "image", "source": {"type": "url", "url": part.url}}


def _base64_image(media_type: str, data: str) -> ImageBlockParam:
    if media_type not in _IMAGE_TYPES:
        raise LLMBadRequestError(
            f"Anthropic accepts images as {', '.join(_IMAGE_TYPES)}, not {media_type!r}", provider=PROVIDER
        )
    source: Base64ImageSourceParam = {"type": "base64", "media_type": media_type, "data": data}  # type: ignore[typeddict-item]
    return {"type": "image", "source": source}


def document_block(part: FilePart) -> DocumentBlockParam:
    """A PDF (base64) or a text file (plain-text source) as a ``document`` block."""
    block: DocumentBlockParam
    if part.media_type == "application/pdf":
        data = base64.b64encode(part.data).decode("ascii")
        block = {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": data},
        }
    elif part.media_type.startswith("text/"):
        text = part.data.decode("utf-8", errors="replace")
        block = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    else:
        raise LLMBadRequestError(
            f"Anthropic documents must be application/pdf or text/*, not {part.media_type!r}",
            provider=PROVIDER,
        )
    if part.filename:
        block["title"] = part.filename
    return block


def assistant_blocks(message: AssistantMessage) -> list[AssistantBlock]:
    """Thinking payloads (verbatim, original order), then text, then ``tool_use`` blocks."""
    blocks: list[AssistantBlock] = []
    for part in message.reasoning:
        if part.provider == PROVIDER and part.payload is not None:
            blocks.append(dict(part.payload))
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(call.arguments)}
        )
    return blocks


def tool_input(arguments: str) -> dict[str, object]:
    """Stored argument text → the ``input`` object; anything but a JSON object becomes ``{}``."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def tool_result_block(message: ToolMessage) -> ToolResultBlockParam:
    """One tool result: its content as text/image/document blocks (omitted when empty), ``is_error``
    only when true."""
    block: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    blocks = content_blocks(message.parts)
    if blocks:
        block["content"] = blocks
    if message.is_error:
        block["is_error"] = True
    return block


# -------------------------------------------------------------------------------------------- tools


def tool_params(specs: Sequence[ToolSpec]) -> list[ToolParam]:
    """Tool specs → ``tools`` entries (name, description, input_schema; ``strict`` when asked)."""
    params: list[ToolParam] = []
    for spec in specs:
        param: ToolParam = {"name": spec.name, "input_schema": dict(spec.parameters)}
        if spec.description:
            param["description"] = spec.description
        if spec.strict:
            param["strict"] = True
        params.append(param)
    return params


def tool_choice_param(choice: str | None, parallel_tool_calls: bool | None) -> ToolChoiceParam | None:
    """``settings.tool_choice`` / ``parallel_tool_calls`` → ``tool_choice`` (``None``: send nothing)."""
    no_parallel = parallel_tool_calls is False
    if choice is None:
        return {"type": "auto", "disable_parallel_tool_use": True} if no_parallel else None
    if choice == "none":
        return {"type": "none"}
    result: ToolChoiceParam
    if choice == "auto":
        result = {"type": "auto"}
    elif choice in ("required", "any"):
        result = {"type": "any"}
    else:
        result = {"type": "tool", "name": choice}
    if no_parallel:
        result["disable_parallel_tool_use"] = True
    return result


# ------------------------------------------------------------------------------------------ request


def build_request(
    model: str,
    messages: Sequence[Message],
    *,
    tools: Sequence[ToolSpec],
    settings: ModelSettings,
    response_schema: OutputSchema | None,
    default_max_tokens: int,
    thinking_mode: ThinkingMode,
) -> dict[str, Any]:
    """The whole JSON body for ``POST /v1/messages`` (without ``stream``), ``extra`` merged last."""
    system, turns = convert_messages(messages)
    body: dict[str, Any] = {"model": model, "messages": turns}
    if system is not None:
        body["system"] = system
    max_tokens = settings.max_output_tokens or default_max_tokens
    output_config: dict[str, Any] = {}
    effort = settings.reasoning_effort
    if effort is not None and effort != "none":
        if thinking_mode == "adaptive":
            body["thinking"] = {"type": "adaptive"}
            output_config["effort"] = ADAPTIVE_EFFORT[effort]
        else:
            budget = THINKING_BUDGETS[effort]
            if settings.max_output_tokens is None:
                max_tokens += budget
            elif budget >= max_tokens:
                budget = max(MIN_THINKING_BUDGET, max_tokens // 2)
                if budget >= max_tokens:
                    raise LLMBadRequestError(
                        f"reasoning_effort needs max_output_tokens above {MIN_THINKING_BUDGET} on Anthropic",
                        provider=PROVIDER,
                        model=model,
                    )
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    body["max_tokens"] = max_tokens
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.stop:
        body["stop_sequences"] = list(settings.stop)
    if tools:
        body["tools"] = tool_params(tools)
        choice = tool_choice_param(settings.tool_choice, settings.parallel_tool_calls)
        if choice is not None:
            body["tool_choice"] = choice
    schema = _output_schema(settings, response_schema)
    if schema is not None:
        output_config["format"] = {"type": "json_schema", "schema": _schema_for_api(schema, model)}
    if output_config:
        body["output_config"] = output_config
    if settings.cache is not None:
        mark_cache_breakpoints(body, settings.cache)
    body.update(settings.extra)
    return body


def mark_cache_breakpoints(body: dict[str, Any], cache: PromptCache) -> None:
    """Put a ``cache_control`` breakpoint on the last tool, the system text and the last block of the
    last user turn of ``body`` (those ``cache.breakpoints`` names and the body has)."""
    control: dict[str, str] = {"type": "ephemeral"}
    if cache.ttl is not None:
        control["ttl"] = cache.ttl
    tools = body.get("tools")
    if "tools" in cache.breakpoints and tools:
        tools[-1] = {**tools[-1], "cache_control": dict(control)}
    system = body.get("system")
    if "system" in cache.breakpoints and isinstance(system, str):
        body["system"] = [{"type": "text", "text": system, "cache_control": dict(control)}]
    if "messages" in cache.breakpoints:
        for turn in reversed(body["messages"]):
            content = turn["content"]
            if turn["role"] == "user" and isinstance(content, list) and content:
                content[-1] = {**content[-1], "cache_control": dict(control)}
                break


def _output_schema(settings: ModelSettings, response_schema: OutputSchema | None) -> OutputSchema | None:
    if response_schema is not None:
        return response_schema
    if settings.response_format == "json_schema" and settings.json_schema is not None:
        return OutputSchema("response", dict(settings.json_schema))
    return None


def _schema_for_api(schema: OutputSchema, model: str) -> dict[str, Any]:
    if not schema.strict:
        return dict(schema.schema)
    try:
        return transform_schema(dict(schema.schema))
    except (ValueError, TypeError) as exc:
        raise LLMBadRequestError(
            f"response schema {schema.name!r} cannot be used for Anthropic structured output: {exc}",
            provider=PROVIDER,
            model=model,
        ) from None
