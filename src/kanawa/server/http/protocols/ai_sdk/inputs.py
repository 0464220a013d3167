"""What ``useChat`` sends, checked, and turned into a run's messages and options.

``DefaultChatTransport`` posts ``{id, messages, trigger, messageId}`` plus whatever the transport's
``body`` option adds. ``messages`` are UI messages: ``{id, role, parts}``, the parts ``text``,
``reasoning``, ``step-start``, tool parts (``tool-<name>`` or ``dynamic-tool`` with ``toolName``:
``toolCallId``, ``state``, ``input``, ``output``/``errorText``) and others (``file``, ``source-*``,
``data-*``). Only text and tool parts make a run's messages: a user's ``file`` part is refused (400,
the agents take text), the rest is the client's display state and skipped.

**The client's tools** are declared in the body's ``tools`` — ``[{name, description, inputSchema}]``,
``inputSchema`` a JSON Schema — as the transport's ``body`` option sends them with every request
(useChat itself sends no tool declarations: with the AI SDK the server knows its tools). They are
offered to the model beside the agent's own; a call of one ends the answer with its input
(``tool-input-available``) for the client to run (``onToolCall``, ``addToolOutput``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

from kanawa.loop.options import RunOptions
from kanawa.server.http.protocols.inputs import (
    InvalidInput,
    JsonData,
    JsonObject,
    LongText,
    ShortText,
    ToolName,
    _Open,
    run_options,
    tool_spec,
)
from kanawa.types import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

ANSWERED: frozenset[str] = frozenset({"output-available", "output-error"})
"""Tool part states of a call with its output: only those go into a run's history (a call left
without one — the user wrote instead of answering it — would be a call no result follows, which
providers refuse)."""
SKIPPED_USER_PARTS: frozenset[str] = frozenset({"step-start", "reasoning", "source-url", "source-document"})


class UIPart(_Open):
    """One part of a UI message (fields of every kind; which apply depends on ``type``)."""

    type: ShortText
    text: LongText | None = None
    toolCallId: ShortText | None = None  # noqa: N815 - the wire's name
    toolName: ToolName | None = None  # noqa: N815
    state: ShortText | None = None
    input: JsonData = None
    output: JsonData = None
    errorText: LongText | None = None  # noqa: N815


class UIMessage(_Open):
    id: Annotated[str, Field(max_length=200)] = ""
    role: Literal["system", "user", "assistant"]
    parts: Annotated[list[UIPart], Field(max_length=1000)]


class ClientTool(_Open):
    """A tool the client runs itself (see the module docstring)."""

    name: ToolName
    description: LongText | None = None
    inputSchema: JsonObject | None = None  # noqa: N815 - the AI SDK's name for a tool's schema


class ChatRequest(_Open):
    """``POST /ai-sdk/{agent}``: what ``DefaultChatTransport`` sends, and the client's ``tools``."""

    id: ShortText | None = Field(
        default=None, min_length=1, description="The chat's id (useChat's `id`); none: a chat of its own."
    )
    messages: Annotated[list[UIMessage], Field(min_length=1, max_length=1000)]
    trigger: Literal["submit-message", "regenerate-message"] | None = None
    messageId: ShortText | None = None  # noqa: N815 - the wire's name
    tools: Annotated[list[ClientTool], Field(max_length=128)] | None = None


def tool_name(part: UIPart) -> str | None:
    """The tool a part calls (``tool-<name>``, or ``dynamic-tool`` with ``toolName``), else ``None``."""
    if part.type == "dynamic-tool":
        return part.toolName
    if part.type.startswith("tool-") and len(part.type) > 5:
        return part.type[5:]
    return None


def _output_text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def _call(part: UIPart, name: str) -> ToolCall:
    arguments = (
        part.input if isinstance(part.input, str) else json.dumps(part.input or {}, ensure_ascii=False)
    )
    return ToolCall(part.toolCallId or "", name, arguments)


def tool_outputs(message: UIMessage) -> list[ToolMessage]:
    """The outputs a message's tool parts carry (``output-available``; ``output-error`` as an error)."""
    answers = []
    for part in message.parts:
        name = tool_name(part)
        if name is None or not part.toolCallId:
            continue
        if part.state == "output-available":
            answers.append(ToolMessage(part.toolCallId, _output_text(part.output), name=name))
        elif part.state == "output-error":
            answers.append(ToolMessage(part.toolCallId, part.errorText or "error", is_error=True, name=name))
    return answers


def _assistant(message: UIMessage, out: list[Message]) -> None:
    """An assistant message's steps: each step's text and calls, then its tools' outputs."""
    steps: list[list[UIPart]] = [[]]
    for part in message.parts:
        if part.type == "step-start":
            steps.append([])
        else:
            steps[-1].append(part)
    for step in steps:
        text = "".join(p.text or "" for p in step if p.type == "text")
        called = [(p, name) for p in step if (name := tool_name(p)) and p.toolCallId and p.state in ANSWERED]
        if text or called:
            out.append(AssistantMessage(text=text, tool_calls=tuple(_call(p, name) for p, name in called)))
        for part, _name in called:
            out.extend(tool_outputs(UIMessage(role="assistant", parts=[part])))


def conversation(messages: Sequence[UIMessage]) -> tuple[list[Message], list[str]]:
    """UI messages as a run's messages, and the instructions (the system messages' text)."""
    out: list[Message] = []
    instructions: list[str] = []
    for index, message in enumerate(messages):
        if message.role == "assistant":
            _assistant(message, out)
            continue
        texts = []
        for part in message.parts:
            if part.type == "text":
                texts.append(part.text or "")
            elif part.type not in SKIPPED_USER_PARTS and not part.type.startswith("data-"):
                raise InvalidInput(
                    f"a part of type {part.type!r} is not supported: send text", param=f"messages[{index}]"
                )
        if message.role == "system":
            instructions.append("".join(texts))
        else:
            out.append(UserMessage("".join(texts)))
    return out, instructions


def options_of(body: ChatRequest, instructions: Sequence[str]) -> RunOptions | None:
    """The run's options: the client's tools, the system messages as instructions."""
    specs = [tool_spec(t.name, t.description, t.inputSchema, None) for t in body.tools or ()]
    joined = "\n\n".join(text for text in instructions if text) or None
    return run_options(joined, specs, None, None)


__all__ = [
    "ChatRequest",
    "ClientTool",
    "UIMessage",
    "UIPart",
    "conversation",
    "options_of",
    "tool_name",
    "tool_outputs",
]
