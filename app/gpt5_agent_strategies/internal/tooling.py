"""Dify tools as kanawa tools, and tool output files for the user (seed 000 §6, §7; 001 §4.7, §4.8).

Each selected ``ToolEntity`` becomes a kanawa :class:`~kanawa.tools.Tool` whose JSON schema is the one
the SDK builds for the model (``select`` options become ``enum``) and whose function makes the
backwards ``tool`` invocation. kanawa's ``ToolInvoker`` runs it, fail-closed: arguments must be a JSON
object string (``""`` is ``{}``; anything else is a parse error and the tool is not called); an
unknown tool gets ``there is not a tool named ...``; a value outside the options is a validation
error; an exception becomes ``tool invoke error: failed to execute tool``; an identical call that
already failed is skipped with the duplicate-failure message. :func:`parse_tool_arguments` is kanawa's.

Files (§4.8): IMAGE / IMAGE_LINK / BLOB / FILE messages of a tool are shown to the user as agent
messages. An image given as a local path is read only under ``/files`` (kanawa's
:class:`~kanawa.tools.FileSandbox`: real path inside the root, at most 5 MB); anything else is refused
and the model is told so.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dify_plugin.entities.agent import AgentInvokeMessage
from dify_plugin.entities.model.message import PromptMessageTool
from dify_plugin.entities.tool import ToolInvokeMessage
from dify_plugin.interfaces.agent import ToolEntity
from pydantic import BaseModel, ConfigDict

from kanawa.tools import FileAccessError, FileSandbox, SandboxViolation, Tool, parse_tool_arguments

__all__ = [
    "MAX_BLOB_FILE_BYTES",
    "DifyToolArguments",
    "ToolOutput",
    "dify_tool",
    "parse_tool_arguments",
    "summarize_tool_messages",
]

MAX_BLOB_FILE_BYTES = 5 * 1024 * 1024
"""``_MAX_BLOB_FILE_BYTES`` of seed 001 §4.8."""

FILES_ROOT = "/files"


class DifyToolArguments(BaseModel):
    """A Dify tool's arguments pass through as given; Dify validates them against the tool's form.
    kanawa's invoker checks the JSON-object rule and ``enum`` options before this model is used."""

    model_config = ConfigDict(extra="allow")


class ToolOutput:
    """What one tool call produced: text for the model and messages for the user."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.user_messages: list[AgentInvokeMessage] = []


def _file_message(
    kind: ToolInvokeMessage.MessageType, value: str, sandbox: FileSandbox
) -> tuple[AgentInvokeMessage | None, str]:
    """An image given by URL or path, as the user's message, and the note for the model."""
    if value.startswith(("http://", "https://", "data:")):
        message = AgentInvokeMessage(type=kind, message=ToolInvokeMessage.TextMessage(text=value))
        return message, f"image has been created and sent to the user: {value}"
    try:
        data = sandbox.read_bytes(value)
    except (SandboxViolation, FileAccessError) as exc:
        return None, f"file refused: {exc}"
    mime = mimetypes.guess_type(value)[0] or "application/octet-stream"
    message = AgentInvokeMessage(
        type=AgentInvokeMessage.MessageType.BLOB,
        message=ToolInvokeMessage.BlobMessage(blob=data),
        meta={"mime_type": mime, "filename": value.rsplit("/", 1)[-1]},
    )
    return message, "file has been sent to the user"


def summarize_tool_messages(
    messages: Iterable[ToolInvokeMessage], sandbox: FileSandbox | None = None
) -> ToolOutput:
    """Fold a tool's messages into text for the model and file messages for the user (§4.8)."""
    box = sandbox or FileSandbox(max_bytes=MAX_BLOB_FILE_BYTES)  # /files, or KANAWA_FILES_ROOT
    output = ToolOutput()
    kinds = ToolInvokeMessage.MessageType
    for item in messages:
        body = item.message
        if item.type in (kinds.TEXT, kinds.LINK) and isinstance(body, ToolInvokeMessage.TextMessage):
            output.text.append(body.text)
        elif item.type == kinds.JSON and isinstance(body, ToolInvokeMessage.JsonMessage):
            output.text.append(json.dumps(body.json_object, ensure_ascii=False))
        elif item.type in (kinds.IMAGE, kinds.IMAGE_LINK) and isinstance(body, ToolInvokeMessage.TextMessage):
            shown, note = _file_message(item.type, body.text, box)
            if shown is not None:
                output.user_messages.append(shown)
            output.text.append(note)
        elif item.type in (kinds.BLOB, kinds.FILE):
            blob = body.blob if isinstance(body, ToolInvokeMessage.BlobMessage) else None
            if blob is not None and len(blob) > MAX_BLOB_FILE_BYTES:
                output.text.append(f"file refused: larger than {MAX_BLOB_FILE_BYTES} bytes")
                continue
            output.user_messages.append(AgentInvokeMessage(type=item.type, message=body, meta=item.meta))
            output.text.append("file has been sent to the user")
        elif item.type == kinds.VARIABLE and isinstance(body, ToolInvokeMessage.VariableMessage):
            output.text.append(f"{body.variable_name}: {body.variable_value}")
    return output


def dify_tool(
    entity: ToolEntity,
    prompt_tool: PromptMessageTool,
    invoke: Callable[[Mapping[str, Any]], ToolOutput],
) -> Tool:
    """``entity`` as a kanawa tool: the model's schema from ``prompt_tool``, the call via ``invoke``
    (given the merged runtime + model parameters); a tool that produced nothing answers ``"no output"``."""
    runtime = dict(entity.runtime_parameters or {})

    async def call(**arguments: Any) -> str:
        output = invoke({**runtime, **arguments})
        return "\n".join(t for t in output.text if t) or "no output"

    return Tool(
        name=prompt_tool.name,
        description=prompt_tool.description,
        parameters=dict(prompt_tool.parameters),
        function=call,
        args_model=DifyToolArguments,
        is_async=True,
    )
