"""Tools: typed Python functions the model may call, and the fail-closed machinery that runs them.

* :func:`tool` / :func:`make_tool` — build an immutable :class:`Tool`
  (JSON schema + pydantic arguments model from type hints and docstrings, seed 002 §3-2).
* :class:`ToolRegistry` — tools by name, ``LoadedTool`` LRU cache, prompt stubs, entry-point plugins.
* :class:`ToolInvoker` — runs calls fail-closed and concurrently (seed 000 §6, seed 001 §4.7).
* :func:`parse_tool_arguments` — ``""`` → ``{}``, JSON object → dict, anything else refused.
* :class:`FileSandbox` and the content helpers — local files only under ``/files``, 5 MB at most
  (seed 000 §7, seed 001 §4.8).
"""

from __future__ import annotations

from kanawa.tools.arguments import parse_tool_arguments, validate_arguments
from kanawa.tools.base import Tool, ToolErrorKind, ToolResult
from kanawa.tools.content import file_from_path, image_from_file, image_from_url, to_content
from kanawa.tools.decorator import make_tool, tool
from kanawa.tools.errors import (
    FileAccessError,
    SandboxViolation,
    ToolArgumentsError,
    ToolError,
    ToolNotFound,
    ToolValidationError,
)
from kanawa.tools.invoker import ToolInvoker
from kanawa.tools.plugins import ENTRY_POINT_GROUP, load_entry_point_tools
from kanawa.tools.registry import LoadedTool, ToolRegistry
from kanawa.tools.sandbox import DEFAULT_FILES_ROOT, DEFAULT_MAX_BYTES, FILES_ROOT_ENV, FileSandbox

__all__ = [
    "DEFAULT_FILES_ROOT",
    "DEFAULT_MAX_BYTES",
    "ENTRY_POINT_GROUP",
    "FILES_ROOT_ENV",
    "FileAccessError",
    "FileSandbox",
    "LoadedTool",
    "SandboxViolation",
    "Tool",
    "ToolArgumentsError",
    "ToolError",
    "ToolErrorKind",
    "ToolInvoker",
    "ToolNotFound",
    "ToolRegistry",
    "ToolResult",
    "ToolValidationError",
    "file_from_path",
    "image_from_file",
    "image_from_url",
    "load_entry_point_tools",
    "make_tool",
    "parse_tool_arguments",
    "to_content",
    "tool",
    "validate_arguments",
]
