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

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

# Loaded on first use: a run that only calls plain tools never imports the sandbox, the content
# helpers (mimetypes) or the entry-point plugins.
_EXPORTS: dict[str, str] = {
    "parse_tool_arguments": "kanawa.tools.arguments",
    "validate_arguments": "kanawa.tools.arguments",
    "Tool": "kanawa.tools.base",
    "ToolErrorKind": "kanawa.tools.base",
    "ToolResult": "kanawa.tools.base",
    "file_from_path": "kanawa.tools.content",
    "image_from_file": "kanawa.tools.content",
    "image_from_url": "kanawa.tools.content",
    "to_content": "kanawa.tools.content",
    "make_tool": "kanawa.tools.decorator",
    "tool": "kanawa.tools.decorator",
    "FileAccessError": "kanawa.tools.errors",
    "SandboxViolation": "kanawa.tools.errors",
    "ToolArgumentsError": "kanawa.tools.errors",
    "ToolError": "kanawa.tools.errors",
    "ToolNotFound": "kanawa.tools.errors",
    "ToolValidationError": "kanawa.tools.errors",
    "ToolInvoker": "kanawa.tools.invoker",
    "ENTRY_POINT_GROUP": "kanawa.tools.plugins",
    "load_entry_point_tools": "kanawa.tools.plugins",
    "LoadedTool": "kanawa.tools.registry",
    "ToolRegistry": "kanawa.tools.registry",
    "DEFAULT_FILES_ROOT": "kanawa.tools.sandbox",
    "DEFAULT_MAX_BYTES": "kanawa.tools.sandbox",
    "FILES_ROOT_ENV": "kanawa.tools.sandbox",
    "FileSandbox": "kanawa.tools.sandbox",
}

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

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
