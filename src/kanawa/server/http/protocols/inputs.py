"""What chat requests carry, checked, and turned into a run's messages and options: the inputs every
chat protocol shares (the OpenAI API, AG-UI, the AI SDK), in OpenAI's vocabulary, which they map to.

Both OpenAI protocols (:mod:`.openai.responses`, :mod:`.openai.chat`) accept the fields their
official clients send; the ones that change a kanawa run are typed here, everything else is
accepted and ignored (``temperature``, ``user``, ``parallel_tool_calls`` … — the agent's own model
settings decide). Free-form JSON a client sends (a tool's parameter schema, an output schema) is
:data:`JsonData`: finite numbers, valid Unicode, bounded depth — so it can be stored, sent to a
model and echoed without ever failing to encode.

Conversion raises :class:`InvalidInput` (answered 400 ``invalid_request_error``) for what the
types allow but a run cannot take: content other than text, a tool output for no call.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from kanawa.loop.options import RunOptions
from kanawa.server.http.validation import Text
from kanawa.types import AssistantMessage, Message, OutputSchema, ToolCall, ToolMessage, ToolSpec, UserMessage

MAX_DEPTH: Final = 32
"""Deepest nesting of client JSON (a tool schema is rarely deeper than 6)."""
TOOL_NAME: Final = r"^[A-Za-z0-9_.-]{1,64}$"
MAX_TEXT: Final = 200_000


class InvalidInput(ValueError):  # noqa: N818 - reads as the condition
    """A request the protocol's types allow but a run cannot take (answered 400)."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def _clean(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("must be valid Unicode text (it holds a lone surrogate)") from None
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("numbers must be finite")
    if isinstance(value, dict):
        for key, item in value.items():
            _clean(key, depth + 1)
            _clean(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _clean(item, depth + 1)
    return value


JsonData = Annotated[Any, AfterValidator(_clean)]
"""Any JSON a client sends that kanawa stores or passes on as it is."""
JsonObject = Annotated[dict[str, Any], AfterValidator(_clean)]
ShortText = Annotated[Text, Field(max_length=200)]
LongText = Annotated[Text, Field(max_length=MAX_TEXT)]
ToolName = Annotated[str, Field(pattern=TOOL_NAME)]


class _Open(BaseModel):
    """A wire object: fields kanawa does not use are accepted and ignored."""

    model_config = ConfigDict(extra="ignore")


class TextPart(_Open):
    """A text content part (``input_text``/``output_text`` in Responses, ``text`` in Chat)."""

    type: Literal["input_text", "output_text", "text"]
    text: LongText


class OtherPart(_Open):
    """A content part kanawa does not take (images, files, audio): refused when converted."""

    type: ShortText


Content = LongText | Annotated[list[TextPart | OtherPart], Field(max_length=1000)]


def content_text(content: Content | None, *, param: str) -> str:
    """The text of a message's content; :class:`InvalidInput` for parts other than text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if not isinstance(part, TextPart):
            raise InvalidInput(f"content of type {part.type!r} is not supported: send text", param=param)
        texts.append(part.text)
    return "".join(texts)


class FunctionTool(_Open):
    """A client-declared function tool (Responses shape: name at the top level)."""

    type: Literal["function"]
    name: ToolName
    description: LongText | None = None
    parameters: JsonObject | None = None
    strict: bool | None = None


class OtherTool(_Open):
    """A tool type kanawa does not offer (web search, file search …): refused when converted."""

    type: ShortText


def tool_spec(
    name: str, description: str | None, parameters: dict[str, Any] | None, strict: bool | None
) -> ToolSpec:
    schema: dict[str, Any] = parameters if parameters is not None else {"type": "object", "properties": {}}
    return ToolSpec(name, description or "", schema, strict=bool(strict))


def output_schema(
    name: str | None, schema: dict[str, Any], *, strict: bool | None, description: str | None
) -> OutputSchema:
    label = name if name and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) else "response"
    return OutputSchema(
        label, dict(schema), strict=True if strict is None else strict, description=description
    )


@dataclass(frozen=True, slots=True)
class Conversation:
    """A request's messages as a run takes them: the instructions (system/developer turns joined),
    the earlier conversation, and the new turn (the last user message, or the tool answers)."""

    instructions: str | None
    history: tuple[Message, ...]
    turn: tuple[Message, ...]


def split_turn(messages: Sequence[Message], instructions: Sequence[str]) -> Conversation:
    """Split converted messages into history and the new turn: the trailing tool answers, or the
    trailing user messages. :class:`InvalidInput` when there is nothing to answer."""
    cut = len(messages)
    kind = ToolMessage if messages and isinstance(messages[-1], ToolMessage) else UserMessage
    while cut > 0 and isinstance(messages[cut - 1], kind):
        cut -= 1
    turn = tuple(messages[cut:])
    if not turn:
        raise InvalidInput("the input must end with a user message or tool outputs", param="input")
    joined = "\n\n".join(text for text in instructions if text) or None
    return Conversation(joined, tuple(messages[:cut]), turn)


def add_tool_call(messages: list[Message], call: ToolCall) -> None:
    """Append a call to the conversation: into the assistant turn just before it (one turn holds
    all its calls, as providers require), else as a new assistant turn."""
    if messages and isinstance(messages[-1], AssistantMessage):
        last = messages[-1]
        messages[-1] = AssistantMessage(
            text=last.text, tool_calls=(*last.tool_calls, call), reasoning=last.reasoning
        )
    else:
        messages.append(AssistantMessage(tool_calls=(call,)))


def tool_answer(messages: Sequence[Message], call_id: str, output: str) -> ToolMessage:
    """A tool output as the run's message, named after the call it answers when that is known."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id == call_id:
                    return ToolMessage(call_id, output, name=call.name)
    return ToolMessage(call_id, output)


def run_options(
    instructions: str | None,
    tools: Sequence[ToolSpec],
    max_output_tokens: int | None,
    schema: OutputSchema | None,
) -> RunOptions | None:
    """The request's :class:`RunOptions`, or ``None`` when it asks for nothing of them."""
    if instructions is None and not tools and max_output_tokens is None and schema is None:
        return None
    return RunOptions(
        instructions=instructions,
        client_tools=tuple(tools),
        max_output_tokens=max_output_tokens,
        output_schema=schema,
    )


def json_text(value: object) -> str:
    """A structured answer as the JSON text an OpenAI client parses."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


__all__ = [
    "Content",
    "Conversation",
    "FunctionTool",
    "InvalidInput",
    "JsonData",
    "JsonObject",
    "LongText",
    "OtherPart",
    "OtherTool",
    "ShortText",
    "TextPart",
    "ToolName",
    "add_tool_call",
    "content_text",
    "json_text",
    "output_schema",
    "run_options",
    "split_turn",
    "tool_answer",
    "tool_spec",
]
