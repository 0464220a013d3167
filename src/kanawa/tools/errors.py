"""The ``ToolError`` hierarchy: one exception family for the tool layer (STYLE: one hierarchy per layer).

The :class:`~kanawa.tools.invoker.ToolInvoker` never lets these reach the loop for bad model output —
it turns them into error :class:`~kanawa.tools.base.ToolResult` objects (seed 000 §6, 001 §4.7). They
are raised to *programmers*: at decoration time, by ``ToolRegistry.get``, by ``parse_tool_arguments``
and by the file sandbox. Messages never contain tool arguments, file contents or host paths outside
the sandbox root.
"""

from __future__ import annotations

__all__ = [
    "FileAccessError",
    "SandboxViolation",
    "ToolArgumentsError",
    "ToolError",
    "ToolNotFoundError",
    "ToolValidationError",
]


class ToolError(Exception):
    """Base class of every error the tool layer raises. ``tool_name`` is set when one tool is concerned."""

    def __init__(self, message: str, *, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool_name = tool_name


class ToolArgumentsError(ToolError):
    """The raw arguments are not a JSON object string (seed 000 §6.1: non-string, bad JSON, non-object)."""


class ToolNotFoundError(ToolError, LookupError):
    """No tool is registered under the requested name."""


class ToolValidationError(ToolError):
    """Parsed arguments do not satisfy the tool's parameters (seed 002 §7 ``ToolValidationError``)."""


class FileAccessError(ToolError):
    """A sandboxed file could not be read (missing, unreadable, not text)."""


class SandboxViolation(FileAccessError):  # noqa: N818 - the name the seeds and DESIGN use
    """A path or file breaks the sandbox policy (seed 000 §7 / 001 §4.8): it resolves outside the root,
    is not a regular file, or is larger than the size limit."""
