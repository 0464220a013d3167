"""Dify prompt messages ⇄ kanawa messages, and the ``opaque_body`` that carries GPT-5 reasoning
between rounds (seed 001 §3.7).

Input (:func:`to_kanawa_messages`, then kanawa's
:func:`~kanawa.llm.openai.responses_payload.messages_to_responses_input` — see
:func:`prompt_messages_to_responses_input`): system/developer → system (kanawa turns a leading one into
``instructions`` and a later one into a ``developer`` item); user → ``input_text`` (and images/files);
assistant → its replayed output items, its text, its ``function_call`` items; tool →
``function_call_output`` with ``call_id`` = ``tool_call_id``, an empty output kept.

``opaque_body``: the model plugin writes ``{"kanawa_responses": {"version": 1, "reasoning": [...],
"message_items": [...]}}`` on the assistant message it returns — the Responses ``reasoning`` items
exactly as received (with ``encrypted_content``, since requests use ``store=False``) and the text of
each ``message`` item with its ``phase``. When Dify (or an agent strategy) sends that message back,
:func:`to_kanawa_messages` restores them, so kanawa's builder replays the reasoning and phases. An
assistant message without it (an old host, a foreign plugin) is sent as plain text and tool calls.

The assistant text this plugin streams starts with the reasoning summary in a ``<think>`` block (the
``agent-thought`` feature); that block is removed again on the way back in — the reasoning goes back as
its item, never as text.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

from dify_plugin.entities.model.message import (
    AssistantPromptMessage,
    ImagePromptMessageContent,
    MultiModalPromptMessageContent,
    PromptMessage,
    PromptMessageRole,
    TextPromptMessageContent,
    ToolPromptMessage,
)
from pydantic import JsonValue

from kanawa.llm.openai.responses_output import MESSAGE_ITEMS_KEY
from kanawa.llm.openai.responses_payload import OPENAI_PROVIDER, messages_to_responses_input
from kanawa.prompts.think import split_think
from kanawa.types import (
    AssistantMessage,
    ContentPart,
    FilePart,
    ImagePart,
    JsonObject,
    LLMResponse,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)

__all__ = [
    "OPAQUE_KEY",
    "assistant_from_response",
    "opaque_body_of",
    "prompt_messages_to_responses_input",
    "restore_assistant",
    "to_kanawa_messages",
]

OPAQUE_KEY = "kanawa_responses"
_VERSION = 1


def _parts(content: object) -> list[ContentPart]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    parts: list[ContentPart] = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, TextPromptMessageContent):
            parts.append(TextPart(item.data))
        elif isinstance(item, ImagePromptMessageContent):
            if item.url:
                parts.append(ImagePart(url=item.url, media_type=item.mime_type or "image/png"))
            else:
                parts.append(ImagePart(data=base64.b64decode(item.base64_data), media_type=item.mime_type))
        elif isinstance(item, MultiModalPromptMessageContent) and item.base64_data:
            parts.append(
                FilePart(
                    base64.b64decode(item.base64_data), media_type=item.mime_type, filename=item.filename
                )
            )
    return parts


def _text(content: object) -> str:
    return "".join(p.text for p in _parts(content) if isinstance(p, TextPart))


def opaque_body_of(response: LLMResponse) -> JsonObject | None:
    """What must survive until the next round: the reasoning items and the message items (phases)."""
    message = response.message
    reasoning: list[JsonValue] = [
        dict(p.payload) for p in message.reasoning if p.provider == OPENAI_PROVIDER and p.payload is not None
    ]
    details = message.provider_details or {}
    items = details.get(MESSAGE_ITEMS_KEY)
    message_items: list[JsonValue] = list(items) if isinstance(items, list) else []
    if not reasoning and not message_items:
        return None
    return {OPAQUE_KEY: {"version": _VERSION, "reasoning": reasoning, "message_items": message_items}}


def restore_assistant(message: AssistantPromptMessage) -> AssistantMessage:
    """A Dify assistant message as kanawa's, with the reasoning and phases of its ``opaque_body``."""
    visible, _thought = split_think(_text(message.content))
    calls = tuple(
        ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments) for c in message.tool_calls
    )
    body = message.opaque_body
    carried = body.get(OPAQUE_KEY) if isinstance(body, dict) else None
    if not isinstance(carried, dict):
        return AssistantMessage(text=visible, tool_calls=calls)
    reasoning = tuple(
        ReasoningPart(text="", provider=OPENAI_PROVIDER, payload=dict(item))
        for item in carried.get("reasoning") or []
        if isinstance(item, dict)
    )
    items = carried.get("message_items")
    details: JsonObject | None = (
        {MESSAGE_ITEMS_KEY: list(items)} if isinstance(items, list) and items else None
    )
    return AssistantMessage(text=visible, tool_calls=calls, reasoning=reasoning, provider_details=details)


def to_kanawa_messages(messages: Sequence[PromptMessage]) -> list[Message]:
    """Dify prompt messages in order as kanawa messages (module docstring has the rules)."""
    result: list[Message] = []
    for message in messages:
        role = message.role
        if isinstance(message, AssistantPromptMessage):
            result.append(restore_assistant(message))
        elif isinstance(message, ToolPromptMessage):
            result.append(ToolMessage(message.tool_call_id, _text(message.content), name=message.name or ""))
        elif role in (PromptMessageRole.SYSTEM, PromptMessageRole.DEVELOPER):
            result.append(SystemMessage(_text(message.content)))
        elif role == PromptMessageRole.USER:
            result.append(UserMessage(_parts(message.content)))
        else:
            raise ValueError(f"unsupported prompt message role: {role.value}")
    return result


def prompt_messages_to_responses_input(
    messages: Sequence[PromptMessage],
) -> tuple[str | None, list[JsonObject]]:
    """Seed 001 §3.7's input conversion: ``(instructions, input items)`` via kanawa's converter."""
    return messages_to_responses_input(to_kanawa_messages(messages))


def assistant_from_response(response: LLMResponse, *, thought: str = "") -> AssistantPromptMessage:
    """kanawa's answer as Dify's assistant message (``_to_llm_result`` of §3.7): the text (after an
    optional ``<think>`` block), the tool calls and the ``opaque_body``."""
    message = response.message
    content = (f"<think>\n{thought}\n</think>" if thought else "") + message.text
    return AssistantPromptMessage(
        content=content,
        tool_calls=[
            AssistantPromptMessage.ToolCall(
                id=c.id,
                type="function",
                function=AssistantPromptMessage.ToolCall.ToolCallFunction(name=c.name, arguments=c.arguments),
            )
            for c in message.tool_calls
        ],
        opaque_body=opaque_body_of(response),
    )
