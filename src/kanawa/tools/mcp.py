"""Tools from MCP servers (Model Context Protocol) as ordinary kanawa :class:`~kanawa.tools.base.Tool`.

The story of one MCP tool call:

1. ``async with MCPServerStdio(command, args=[...]) as server`` starts the server process (or, for
   :class:`MCPServerStreamableHTTP`, opens the HTTP session) and runs the MCP handshake; leaving the
   block closes the session and stops the process, so a server lives exactly as long as the agent
   runs that use it;
2. ``await server.list_tools()`` turns each tool the server lists into a :class:`Tool` whose
   ``parameters`` are the server's ``inputSchema`` as written and whose arguments model validates
   against that schema (JSON Schema, via ``jsonschema``);
3. the agent's :class:`~kanawa.tools.invoker.ToolInvoker` runs those tools like any other, so every
   fail-closed rule applies unchanged (seed 000 §6): bad JSON and unknown names never reach the
   server, arguments that break the schema are refused *before* the call, and an exception or an
   ``isError`` result becomes ``tool invoke error: failed to execute tool`` with the server's text
   kept in the trace only.

Needs the ``mcp`` extra (``pip install 'kanawa[mcp]'``); nothing here is imported by ``import kanawa``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Self, cast

import jsonschema
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from kanawa.tools.base import Tool
from kanawa.tools.errors import ToolError
from kanawa.types import ContentPart, ImagePart, JsonObject, TextPart

__all__ = ["MCPServer", "MCPServerStdio", "MCPServerStreamableHTTP", "MCPToolError"]

_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


class MCPToolError(ToolError):
    """An MCP tool answered with ``isError``; the message is the server's text (trace only)."""


class _SchemaArguments(BaseModel):
    """Arguments of an MCP tool: any object the tool's JSON schema accepts, passed on as it is."""

    model_config = ConfigDict(extra="allow")

    kanawa_validator: ClassVar[Any]
    """The ``jsonschema`` validator for this tool's ``inputSchema`` (set on each generated subclass)."""

    @model_validator(mode="before")
    @classmethod
    def _check_schema(cls, data: Any) -> Any:
        problems = sorted(cls.kanawa_validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if problems:
            text = "; ".join(
                f"{'.'.join(str(p) for p in error.absolute_path) or 'arguments'}: {error.message}"
                for error in problems[:5]
            )
            raise PydanticCustomError("json_schema", "{problems}", {"problems": text})
        return data


def _arguments_model(name: str, schema: JsonObject) -> type[BaseModel]:
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator_class.check_schema(schema)
    return type(
        f"{name}_arguments",
        (_SchemaArguments,),
        {"kanawa_validator": validator_class(schema), "__module__": __name__},
    )


def _to_parts(content: Sequence[types.ContentBlock]) -> tuple[ContentPart, ...]:
    """MCP content blocks as kanawa content parts: text and images as they are, anything else as JSON."""
    parts: list[ContentPart] = []
    for block in content:
        if isinstance(block, types.TextContent):
            parts.append(TextPart(block.text))
            continue
        if isinstance(block, types.ImageContent):
            try:
                parts.append(ImagePart(data=base64.b64decode(block.data), media_type=block.mime_type))
                continue
            except (binascii.Error, ValueError):
                pass
        parts.append(TextPart(json.dumps(block.model_dump(mode="json", exclude_none=True))))
    return tuple(parts)


class MCPServer:
    """A connection to one MCP server; an async context manager that owns the session's lifetime.

    Args (keyword-only, shared by both transports):
        tool_prefix: prepended as ``<prefix>_<name>`` to every tool name, to keep two servers' tools apart.
        timeout: seconds a tool call may take (the invoker's per-tool timeout); ``None`` for no limit.

    Tool names are made provider-safe (``[A-Za-z0-9_-]``, 64 characters at most); the server is
    always called with the name it listed.
    """

    def __init__(self, *, tool_prefix: str | None = None, timeout: float | None = None) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds")
        self._prefix = tool_prefix
        self._timeout = timeout
        self._stack: AsyncExitStack | None = None
        self._session: ClientSession | None = None

    async def _open_streams(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        raise TypeError(f"{type(self).__name__} does not define a transport")

    async def __aenter__(self) -> Self:
        if self._stack is not None:
            raise RuntimeError(f"{type(self).__name__} is already open")
        stack = AsyncExitStack()
        try:
            read, write = await self._open_streams(stack)
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
        except BaseException:
            await stack.aclose()
            raise
        self._stack, self._session = stack, session
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    @property
    def session(self) -> ClientSession:
        """The live MCP session; raises ``RuntimeError`` outside ``async with``."""
        if self._session is None:
            raise RuntimeError(f"{type(self).__name__} is not open: use `async with server:` first")
        return self._session

    async def list_tools(self) -> list[Tool]:
        """Every tool the server lists (all pages), as kanawa tools bound to this session."""
        listed: list[types.Tool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            page = await self.session.list_tools(params=params)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return [self._as_tool(item) for item in listed]

    def _as_tool(self, listed: types.Tool) -> Tool:
        remote = listed.name
        name = _BAD_NAME_CHARS.sub("_", f"{self._prefix}_{remote}" if self._prefix else remote)[:64]
        schema = cast(JsonObject, dict(listed.input_schema))
        schema.setdefault("type", "object")

        async def call(**arguments: Any) -> tuple[ContentPart, ...]:
            result = await self.session.call_tool(remote, arguments)
            if not isinstance(result, types.CallToolResult):
                raise MCPToolError(f"{remote}: unexpected MCP result {type(result).__name__}", tool_name=name)
            parts = _to_parts(result.content)
            if result.is_error:
                text = " ".join(p.text for p in parts if isinstance(p, TextPart)) or "no details"
                raise MCPToolError(f"{remote}: {text}", tool_name=name)
            return parts

        return Tool(
            name=name,
            description=listed.description or listed.title or remote,
            parameters=schema,
            function=call,
            args_model=_arguments_model(name, schema),
            is_async=True,
            timeout=self._timeout,
        )


class MCPServerStdio(MCPServer):
    """An MCP server run as a child process speaking JSON-RPC over stdin/stdout.

    ``MCPServerStdio("uvx", args=["mcp-server-time"])``; ``env`` is merged over the MCP SDK's safe
    default environment, ``cwd`` is the process's working directory. The process starts on
    ``__aenter__`` and is stopped (stdin closed, then terminated) on ``__aexit__``.
    """

    def __init__(
        self,
        command: str,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        tool_prefix: str | None = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(tool_prefix=tool_prefix, timeout=timeout)
        self.parameters = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
        )

    async def _open_streams(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        read, write = await stack.enter_async_context(stdio_client(self.parameters))
        return read, write


class MCPServerStreamableHTTP(MCPServer):
    """An MCP server reached over streamable HTTP at ``url`` (e.g. ``http://127.0.0.1:8000/mcp``)."""

    def __init__(self, url: str, *, tool_prefix: str | None = None, timeout: float | None = None) -> None:
        super().__init__(tool_prefix=tool_prefix, timeout=timeout)
        self.url = url

    async def _open_streams(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        read, write = await stack.enter_async_context(streamable_http_client(self.url))
        return read, write
