"""The immutable :class:`Tool` and the :class:`ToolResult` the invoker returns (seed 002 §3-2)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any

from pydantic import BaseModel

from kanawa.types import ContentPart, JsonObject, ToolMessage, ToolSpec


@dataclass(frozen=True, slots=True)
class Tool:
    """A function the model may call.

    ``parameters`` is the JSON schema offered to the model; ``args_model`` validates the parsed
    arguments before ``function`` runs (its fields are passed as keyword arguments). ``is_async`` is
    decided once at construction, so the hot path never inspects the function again. Sync functions
    run in a worker thread, so a slow one never blocks the event loop; ``inline`` (sync functions
    only) runs one on the event loop instead, for a tool its author knows is cheap and never blocks
    (no I/O, no sleeping, no lock waits): it saves the thread hand-off, tens of microseconds a call,
    and has no timeout (nothing can interrupt it). ``timeout`` (seconds) overrides the invoker's
    default for this tool.
    ``takes_context`` means ``function``'s first parameter is the run's
    :class:`~kanawa.context.RunContext`: the invoker passes it first, before the validated arguments.
    ``requires_approval`` stops a run before the tool runs, until a person approves or rejects the
    call (:mod:`kanawa.loop.approval`).

    Build one with :func:`kanawa.tools.tool` or :func:`kanawa.tools.make_tool`. Calling the tool object
    calls ``function`` directly (no validation), so a decorated function stays usable in plain code;
    a context-taking tool is then called with a context as its first argument, e.g.
    ``lookup(RunContext(deps), "query")``.
    """

    name: str
    description: str
    parameters: JsonObject
    function: Callable[..., Any]
    args_model: type[BaseModel]
    is_async: bool
    _: KW_ONLY
    strict: bool = False
    timeout: float | None = None
    takes_context: bool = False
    requires_approval: bool = False
    inline: bool = False

    def __post_init__(self) -> None:
        if self.inline and (self.is_async or self.timeout is not None):
            raise ValueError(
                f"tool {self.name!r}: inline=True is for sync functions without a timeout "
                "(it runs on the event loop, where nothing can interrupt it)"
            )

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters, strict=self.strict)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)


class ToolErrorKind(enum.StrEnum):
    """Why a tool call failed (seed 000 §6 / 001 §4.7)."""

    PARSE_ERROR = "parse_error"
    UNKNOWN_TOOL = "unknown_tool"
    VALIDATION_ERROR = "validation_error"
    EXECUTION_ERROR = "execution_error"
    DUPLICATE_FAILURE = "duplicate_failure"
    REJECTED = "rejected"
    """A person rejected the call (human approval, :mod:`kanawa.loop.approval`); it never ran."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool call, ready to become a :class:`~kanawa.types.ToolMessage`.

    ``content`` is what the model sees. ``detail`` keeps what it must not see (exception type and
    message) for the trace only.
    """

    call_id: str
    name: str
    content: tuple[ContentPart, ...]
    _: KW_ONLY
    is_error: bool = False
    error_kind: ToolErrorKind | None = None
    duration_ms: float = 0.0
    detail: str | None = None
    output: Any = None

    def to_message(self) -> ToolMessage:
        """The :class:`~kanawa.types.ToolMessage` that carries this result (and ``is_error``) to the model."""
        return ToolMessage(self.call_id, self.content, is_error=self.is_error, name=self.name)
