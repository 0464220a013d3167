"""The ``ToolError`` hierarchy: one exception family for the tool layer (STYLE: one hierarchy per layer).

The :class:`~kanawa.tools.invoker.ToolInvoker` never lets these reach the loop for bad model output —
it turns them into error :class:`~kanawa.tools.base.ToolResult` objects (seed 000 §6, 001 §4.7). They
are raised to *programmers*: at decoration time, by ``parse_tool_arguments``, by the file sandbox and
by :class:`~kanawa.tools.registry.ToolRegistry` (:class:`ToolNotFound`). Messages never contain tool
arguments, file contents or host paths outside the sandbox root.
"""

from __future__ import annotations

__all__ = [
    "FileAccessError",
    "SandboxViolation",
    "StopRun",
    "ToolArgumentsError",
    "ToolError",
    "ToolNotFound",
    "ToolValidationError",
    "reraise_stop_run",
]


class ToolError(Exception):
    """Base class of every error the tool layer raises. ``tool_name`` is set when one tool is concerned."""

    def __init__(self, message: str, *, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool_name = tool_name


class ToolArgumentsError(ToolError):
    """The raw arguments are not a JSON object string (seed 000 §6.1: non-string, bad JSON, non-object)."""


class ToolValidationError(ToolError):
    """Parsed arguments do not satisfy the tool's parameters (seed 002 §7 ``ToolValidationError``)."""


class ToolNotFound(ToolError, LookupError):  # noqa: N818 (seed 003 names)
    """No tool is called ``name``: :meth:`~kanawa.tools.registry.ToolRegistry.get` was asked for one it
    does not hold, or (with ``AgentConfiguration(strict_tools=True)``) the model called a tool the run
    does not have — then the loop raises its subclass
    :class:`~kanawa.loop.errors.StrictToolNotFound`, which is also an ``AgentError`` (seed 003
    ``AgentError.toolNotFound``). ``except ToolNotFound`` catches both; it is a ``LookupError`` for
    callers that catch that around the registry. ``call_id`` is the model's call, when there was one.
    """

    def __init__(self, name: str, *, call_id: str = "") -> None:
        super().__init__(f"there is not a tool named {name!r}", tool_name=name)
        self.name = name
        self.call_id = call_id


class FileAccessError(ToolError):
    """A sandboxed file could not be read (missing, unreadable, not text)."""


class SandboxViolation(FileAccessError):  # noqa: N818 - the name the seeds and DESIGN use
    """A path or file breaks the sandbox policy (seed 000 §7 / 001 §4.8): it resolves outside the root,
    is not a regular file, or is larger than the size limit."""


class StopRun(Exception):  # noqa: N818 - a signal, not an error of the tool layer
    """Raised inside a tool to end the whole run instead of answering the model.

    Every other exception a tool raises becomes a fail-closed result the model sees (seed 000 §6); this
    one passes through the :class:`~kanawa.tools.invoker.ToolInvoker` and the loop to the caller. The
    loop's run-ending errors inherit it where a tool may raise them: a handoff past the depth limit
    (``HandoffDepthExceeded``, seed 002 §7 "Coordinator abort") and a blocking guardrail
    (``GuardrailViolation``) in a nested run.
    """


def reraise_stop_run(group: BaseExceptionGroup[BaseException]) -> None:
    """Re-raise the first :class:`StopRun` in a task group's exception group as itself (so callers see
    ``HandoffDepthExceeded``, not an ``ExceptionGroup``); return when the group holds none."""
    matched, _ = group.split(StopRun)
    if matched is None:
        return
    first: BaseException = matched
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    raise first
