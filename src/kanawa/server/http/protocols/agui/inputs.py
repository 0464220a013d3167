"""An AG-UI ``RunAgentInput``, checked, and turned into a kanawa run's messages and options.

The body is the ``ag-ui-protocol`` package's own :class:`~ag_ui.core.RunAgentInput` (camelCase on the
wire), with the bounds a service needs added (:class:`AguiInput`): ids and texts of bounded length,
at most 1,000 messages and 128 tools, and free-form JSON (``state``, ``forwardedProps``, a tool's
``parameters``) that can be stored and echoed — finite numbers, valid Unicode, bounded depth.

What each field becomes:

- ``messages`` — ``system``/``developer`` turns are added to the agent's instructions;
  ``user``/``assistant`` (with ``toolCalls``)/``tool`` messages are the conversation, and its last
  user messages (or the trailing tool results) the new turn; ``activity`` and ``reasoning``
  messages are skipped; content other than text is refused (400);
- ``tools`` — the frontend's tools, offered to the model as the client's
  (:attr:`~kanawa.loop.options.RunOptions.client_tools`): a call of one ends the run for the
  frontend to answer;
- ``context`` — added to the instructions, one ``description: value`` line each;
- ``state`` — the application's shared state: shown to the model in the instructions as JSON (the
  events module says how an agent changes it);
- ``forwardedProps``, ``resume``, ``parentRunId`` — accepted and not used.

A thread is one kanawa run (:func:`thread_run_id`): its id is derived from the tenant, the agent and
the ``threadId``, so any process finds a thread's run from the request alone, and another tenant's
``threadId`` names a different run — exactly like an unknown one.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, Final

from ag_ui.core import (
    AssistantMessage as AguiAssistant,
)
from ag_ui.core import (
    Context,
    DeveloperMessage,
    Message,
    RunAgentInput,
    SystemMessage,
    TextPart,
    Tool,
)
from ag_ui.core import (
    ToolMessage as AguiTool,
)
from ag_ui.core import (
    UserMessage as AguiUser,
)
from pydantic import Field, model_validator

from kanawa.loop.options import RunOptions
from kanawa.server.http.protocols.inputs import (
    TOOL_NAME,
    Conversation,
    InvalidInput,
    _clean,
    add_tool_call,
    split_turn,
    tool_answer,
    tool_spec,
)
from kanawa.types import AssistantMessage, ToolCall, ToolSpec, UserMessage
from kanawa.types import Message as KanawaMessage

MAX_ID: Final = 200
MAX_MESSAGES: Final = 1000
MAX_TOOLS: Final = 128
_TOOL_NAME: Final = re.compile(TOOL_NAME)


class AguiInput(RunAgentInput):
    """``POST /ag-ui/{agent}``: the protocol's ``RunAgentInput`` with a service's bounds."""

    thread_id: Annotated[str, Field(min_length=1, max_length=MAX_ID)]
    run_id: Annotated[str, Field(min_length=1, max_length=MAX_ID)]
    messages: Annotated[list[Message], Field(max_length=MAX_MESSAGES)]
    tools: Annotated[list[Tool], Field(max_length=MAX_TOOLS)] | None = None
    context: Annotated[list[Context], Field(max_length=MAX_TOOLS)] | None = None

    @model_validator(mode="after")
    def _storable(self) -> AguiInput:
        """Everything the run keeps or echoes can be written as UTF-8 JSON (the whole body is
        checked: its messages, state, tools' schemas, forwarded props)."""
        _clean(self.model_dump(by_alias=True, mode="python"))
        return self


def thread_run_id(tenant: str, agent: str, thread_id: str) -> str:
    """The kanawa run that holds ``thread_id`` of ``tenant`` with ``agent`` (32 hex digits, like
    every run id): derived, never stored, the same in every process."""
    digest = hashlib.sha256("\0".join(("ag-ui", tenant, agent, thread_id)).encode()).hexdigest()
    return digest[:32]


def _text(content: object, *, param: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, TextPart):
            kind = getattr(part, "type", type(part).__name__)
            raise InvalidInput(f"content of type {kind!r} is not supported: send text", param=param)
        texts.append(part.text)
    return "".join(texts)


def conversation(body: RunAgentInput) -> tuple[list[KanawaMessage], list[str]]:
    """The input's messages as a run's, and the instructions its system/developer turns give."""
    messages: list[KanawaMessage] = []
    instructions: list[str] = []
    for index, message in enumerate(body.messages):
        where = f"messages[{index}]"
        if isinstance(message, SystemMessage | DeveloperMessage):
            instructions.append(_text(message.content, param=where))
        elif isinstance(message, AguiUser):
            messages.append(UserMessage(_text(message.content, param=where)))
        elif isinstance(message, AguiAssistant):
            if message.content:
                messages.append(AssistantMessage(text=message.content))
            for call in message.tool_calls or ():
                add_tool_call(messages, ToolCall(call.id, call.function.name, call.function.arguments))
        elif isinstance(message, AguiTool):
            text = _text(message.content, param=where) or (message.error or "")
            messages.append(tool_answer(messages, message.tool_call_id, text))
    return messages, instructions


def _frontend_tools(tools: list[Tool] | None) -> tuple[ToolSpec, ...]:
    specs = []
    for index, tool in enumerate(tools or ()):
        if not _TOOL_NAME.match(tool.name):
            raise InvalidInput(f"a tool name must match {TOOL_NAME}", param=f"tools[{index}].name")
        parameters = tool.parameters
        if parameters is not None and not isinstance(parameters, dict):
            raise InvalidInput("a tool's parameters must be a JSON Schema object", param=f"tools[{index}]")
        specs.append(tool_spec(tool.name, tool.description, parameters, None))
    return tuple(specs)


def state_of(body: RunAgentInput) -> Any:
    """The shared state the input carries, ``None`` for none (an empty object is none)."""
    state = body.state
    return None if state is None or state == {} else state


def _extra_instructions(body: RunAgentInput, given: list[str]) -> str | None:
    parts = [text for text in given if text]
    if body.context:
        lines = "\n".join(f"- {item.description}: {item.value}" for item in body.context)
        parts.append(f"Context from the application:\n{lines}")
    state = state_of(body)
    if state is not None:
        shown = json.dumps(state, ensure_ascii=False, separators=(",", ":"))
        parts.append(f"The application's shared state (JSON): {shown}")
    return "\n\n".join(parts) or None


def run_request(body: RunAgentInput) -> tuple[Conversation, RunOptions | None]:
    """The run the input asks for: its conversation (history and new turn) and options.
    :class:`InvalidInput` for what a run cannot take."""
    messages, instructions = conversation(body)
    turn = split_turn(messages, ())
    extra = _extra_instructions(body, instructions)
    tools = _frontend_tools(body.tools)
    options = None if extra is None and not tools else RunOptions(instructions=extra, client_tools=tools)
    return turn, options


__all__ = [
    "AguiInput",
    "conversation",
    "run_request",
    "state_of",
    "thread_run_id",
]
