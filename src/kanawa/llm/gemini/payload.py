"""kanawa messages → the ``system_instruction`` and ``contents`` of a Gemini request (seed 002 §3-3).

Pure functions, no I/O: :func:`build_contents` turns the conversation into Gemini's shape;
:mod:`kanawa.llm.gemini.config` builds the rest of the request and :mod:`kanawa.llm.gemini.adapter` sends it
through the official SDK.

Messages
    * ``SystemMessage`` → ``system_instruction`` (one text part each, wherever they appear; Gemini has
      a single system slot).
    * ``UserMessage`` → a ``user`` content: text parts; images as ``inline_data`` (bytes or a
      ``data:`` URL) or ``file_data`` (any other URL); files as ``inline_data``.
    * ``AssistantMessage`` → a ``model`` content: signature-only parts, the text, then one
      ``functionCall`` part per tool call (``args`` = the parsed arguments, ``id`` only when Gemini
      issued it). Thought *summaries* are not replayed; thought *signatures* are, on the part that
      carried them (see "Thought signatures" below).
    * ``ToolMessage`` → a ``functionResponse`` part in a ``user`` content (``response`` is
      ``{"result": text}``, or ``{"error": text}`` when ``is_error``); the function name is the
      message's ``name``, else the name of the earlier ``ToolCall`` with the same id. Consecutive
      contents of one role are merged, so parallel results travel as one content.

Thought signatures
    Gemini 2.5/3 attach an opaque ``thoughtSignature`` to some parts and require it back on the same
    part when the conversation continues (Gemini 3 answers 400 without it on function calls). The
    adapter stores each one as received (standard base64 text, the API's own encoding): on a
    function call in ``ToolCall.provider_details["thought_signature"]``; on a text or thought part as
    ``ReasoningPart(provider="gemini", payload={"thought_signature": ..., "part": "text"|"thought"})``.
    The SDK sends bytes with the URL-safe base64 alphabet; the API decodes both alphabets (proto3 JSON
    mapping), so the bytes the server receives are exactly the ones it issued. For Gemini 3 models a
    tool-calling turn that has no signature at all (history from another provider or a test model)
    gets Google's documented placeholder :data:`SKIP_SIGNATURE` on its first call instead of a 400.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import Mapping, Sequence
from typing import assert_never

from google.genai import types

from kanawa.llm.errors import LLMBadRequestError
from kanawa.types import (
    AssistantMessage,
    ContentPart,
    FilePart,
    ImagePart,
    JsonValue,
    Message,
    ProviderDetails,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)

PROVIDER = "gemini"

SIGNATURE_KEY = "thought_signature"
"""Key of a thought signature (standard base64 text) in ``provider_details`` / ``payload``."""

CALL_ID_KEY = "function_call_id"
"""Key in ``ToolCall.provider_details`` holding the id Gemini gave the call (absent when kanawa made
one up because Gemini sent none)."""

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented placeholder signature for function calls that did not come from Gemini."""


# ------------------------------------------------------------------------------------- signatures


def encode_signature(raw: bytes) -> str:
    """The text form a signature is stored in: standard base64, as the API sends it."""
    return base64.b64encode(raw).decode("ascii")


def decode_signature(text: str) -> bytes:
    """Bytes of a stored signature in either base64 alphabet (padding optional).

    Raises :class:`LLMBadRequestError` for text that is not base64, before anything is sent."""
    standard = text.strip().replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise LLMBadRequestError(
            "a stored Gemini thought_signature is not valid base64", provider=PROVIDER
        ) from None


def _signature(details: ProviderDetails | None) -> str | None:
    value = details.get(SIGNATURE_KEY) if details else None
    return value if isinstance(value, str) and value else None


# ---------------------------------------------------------------------------------------- contents


def build_contents(
    messages: Sequence[Message], *, signature_placeholder: bool = False
) -> tuple[types.Content | None, list[types.Content]]:
    """``(system_instruction, contents)`` for ``messages``; see the module docstring for the mapping.

    ``signature_placeholder`` (Gemini 3 and later) puts :data:`SKIP_SIGNATURE` on the first call of a
    tool-calling turn that carries no signature at all.

    Raises :class:`LLMBadRequestError` when there is nothing but system text to send, when a tool
    result names no tool and matches no earlier call, or when tool arguments are not a JSON object.
    """
    calls = {call.id: call for m in messages if isinstance(m, AssistantMessage) for call in m.tool_calls}
    system: list[types.Part] = []
    contents: list[types.Content] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(types.Part(text=message.content))
            continue
        if isinstance(message, UserMessage):
            role, parts = "user", [_content_part(p) for p in message.parts]
        elif isinstance(message, AssistantMessage):
            role, parts = "model", _model_parts(message, signature_placeholder)
        elif isinstance(message, ToolMessage):
            role, parts = "user", _tool_result_parts(message, calls)
        else:
            assert_never(message)
        if not parts:
            continue
        if contents and contents[-1].role == role:
            (contents[-1].parts or []).extend(parts)
        else:
            contents.append(types.Content(role=role, parts=parts))
    if not contents:
        raise LLMBadRequestError("Gemini needs at least one user or model turn to answer", provider=PROVIDER)
    return (types.Content(role="user", parts=system) if system else None), contents


def _content_part(part: ContentPart) -> types.Part:
    if isinstance(part, TextPart):
        return types.Part(text=part.text)
    if isinstance(part, ImagePart):
        if part.data is not None:
            return types.Part(inline_data=types.Blob(data=part.data, mime_type=part.media_type))
        assert part.url is not None
        if part.url.startswith("data:"):
            return _data_url_part(part.url)
        return types.Part(file_data=types.FileData(file_uri=part.url, mime_type=_image_type(part)))
    if isinstance(part, FilePart):
        return types.Part(inline_data=types.Blob(data=part.data, mime_type=part.media_type))
    assert_never(part)


def _image_type(part: ImagePart) -> str:
    """The URL's own image type when ``media_type`` is only the default (``cat.jpg`` is not a PNG)."""
    guessed, _ = mimetypes.guess_type(part.url or "")
    if part.media_type == "image/png" and guessed and guessed.startswith("image/"):
        return guessed
    return part.media_type


def _data_url_part(url: str) -> types.Part:
    head, sep, payload = url.partition(",")
    if not sep or not head.endswith(";base64"):
        raise LLMBadRequestError("an image data: URL must be base64-encoded", provider=PROVIDER)
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise LLMBadRequestError("an image data: URL holds invalid base64", provider=PROVIDER) from None
    media_type = head[len("data:") : -len(";base64")] or "application/octet-stream"
    return types.Part(inline_data=types.Blob(data=data, mime_type=media_type))


def _model_parts(message: AssistantMessage, signature_placeholder: bool) -> list[types.Part]:
    """Signature-only parts, the text (with its signature), then the function calls."""
    parts: list[types.Part] = []
    text_signatures: list[bytes] = []
    for reasoning in message.reasoning:
        signature = _signature(reasoning.payload) if reasoning.provider == PROVIDER else None
        if signature is None:
            continue  # summaries and other providers' payloads are not replayed
        raw = decode_signature(signature)
        if reasoning.payload and reasoning.payload.get("part") == "thought":
            parts.append(types.Part(text="", thought=True, thought_signature=raw))
        else:
            text_signatures.append(raw)
    if message.text or text_signatures:
        first = text_signatures[0] if text_signatures else None
        parts.append(types.Part(text=message.text, thought_signature=first))
        parts.extend(types.Part(text="", thought_signature=raw) for raw in text_signatures[1:])
    placeholder = signature_placeholder and not any(
        _signature(call.provider_details) for call in message.tool_calls
    )
    for index, call in enumerate(message.tool_calls):
        signature = _signature(call.provider_details)
        if signature is None and placeholder and index == 0:
            signature = SKIP_SIGNATURE
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=_gemini_call_id(call), name=call.name, args=_arguments(call)
                ),
                thought_signature=decode_signature(signature) if signature else None,
            )
        )
    return parts


def _gemini_call_id(call: ToolCall) -> str | None:
    value = call.provider_details.get(CALL_ID_KEY) if call.provider_details else None
    return value if isinstance(value, str) and value else None


def _arguments(call: ToolCall) -> dict[str, JsonValue]:
    if not call.arguments.strip():
        return {}
    try:
        parsed = json.loads(call.arguments)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise LLMBadRequestError(
            f"tool call {call.id!r} to {call.name!r} has arguments that are not a JSON object; "
            "Gemini needs an object to replay it",
            provider=PROVIDER,
        )
    return parsed


def _tool_result_parts(message: ToolMessage, calls: Mapping[str, ToolCall]) -> list[types.Part]:
    call = calls.get(message.tool_call_id)
    name = message.name or (call.name if call is not None else "")
    if not name:
        raise LLMBadRequestError(
            f"tool result {message.tool_call_id!r} names no tool and matches no earlier tool call; "
            "Gemini needs the function name",
            provider=PROVIDER,
        )
    key = "error" if message.is_error else "result"
    response = types.FunctionResponse(
        id=_gemini_call_id(call) if call is not None else None,
        name=name,
        response={key: message.text},
    )
    extra = [_content_part(p) for p in message.parts if not isinstance(p, TextPart)]
    return [types.Part(function_response=response), *extra]
