"""``ToolInvoker``: run the model's tool calls, fail-closed (seed 000 §6, seed 001 §4.7, DESIGN "Tools").

``invoke`` never raises for anything the model sent. Each call ends as a :class:`ToolResult` (a tool
may still end the whole run on purpose by raising :class:`~kanawa.tools.errors.StopRun`):

==================================  =====================  =============================================
situation                           ``error_kind``         content the model sees
==================================  =====================  =============================================
no tool with that name              ``UNKNOWN_TOOL``       ``there is not a tool named <name>``
arguments not a JSON object string  ``PARSE_ERROR``        parse error; the tool is not called
a value outside its options         ``VALIDATION_ERROR``   ``parameter option validation error: ...``
other invalid arguments             ``VALIDATION_ERROR``   ``path: what is wrong`` for each problem
identical call already failed       ``DUPLICATE_FAILURE``  skipped; change arguments or approach
the tool raised                     ``EXECUTION_ERROR``    ``tool invoke error: failed to execute tool``
the tool timed out                  ``EXECUTION_ERROR``    a timeout message
success                             ``None``               the return value as content parts
==================================  =====================  =============================================

Exception type and message go to ``ToolResult.detail`` (trace only). "Identical" means the same tool
name and the same parsed arguments, key order ignored; an invoker remembers failures for its whole
life, so use one invoker per run. Parse errors and unknown tools are not remembered (nothing ran,
and the same message comes back anyway); identical calls issued in the same ``invoke_all`` batch all
run, since none has failed yet when they start.

A tool whose first parameter is the :class:`~kanawa.context.RunContext` gets the invoker's
``context`` there (the run's, when the loop made the invoker; an empty ``RunContext(None)`` for an
invoker made without one).

Sync tools run in worker threads (``asyncio.to_thread``); a timed-out sync tool's thread finishes in
the background, its result discarded. A sync tool marked ``inline`` (its author declared it cheap and
non-blocking) runs on the event loop instead, in a copy of the context as a thread would, with no
timeout (it cannot be interrupted). ``invoke_all`` runs one turn's calls concurrently in a
``TaskGroup`` and returns results in call order.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
from collections.abc import Callable, Container, Mapping, Sequence
from time import perf_counter
from typing import Any

from pydantic import ValidationError

from kanawa.context import CURRENT_TOOL_CALL_ID, RunContext
from kanawa.tools.arguments import parse_tool_arguments
from kanawa.tools.base import Tool, ToolErrorKind, ToolResult
from kanawa.tools.content import to_content
from kanawa.tools.errors import StopRun, ToolArgumentsError, reraise_stop_run
from kanawa.tools.messages import (
    DUPLICATE_FAILURE_MESSAGE,
    EXECUTION_ERROR_MESSAGE,
    PARSE_ERROR_MESSAGE,
    describe_exception,
    option_problem,
    timeout_message,
    unknown_tool_message,
    validation_message,
)
from kanawa.tools.registry import ToolRegistry
from kanawa.tools.schema import call_arguments
from kanawa.types import JsonValue, TextPart, ToolCall

__all__ = ["ToolInvoker"]

_Options = tuple[tuple[str, tuple[JsonValue, ...]], ...]


def _options_of(tool: Tool) -> _Options:
    """Top-level parameters whose schema lists allowed options (``enum``); checked before validation
    so hand-written schemas are enforced too, not only ``Literal``/``Enum`` hints."""
    properties = tool.parameters.get("properties")
    if not isinstance(properties, dict):
        return ()
    found = []
    for name, schema in properties.items():
        enum = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(enum, list) and enum:
            found.append((name, tuple(enum)))
    return tuple(found)


_NO_RUN: RunContext[None] = RunContext(None)

# A tool is immutable, so its options are read from its schema once for every invoker (an invoker
# lives for one run): by identity, the tool kept beside them so a recycled id never matches.
_SHARED_OPTIONS: dict[int, tuple[Tool, _Options]] = {}
_SHARED_OPTIONS_LIMIT = 1024


def _signature(name: str, args: dict[str, JsonValue]) -> str:
    try:
        canonical = json.dumps(args, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, RecursionError):  # nested past the encoder's limit: the repr still identifies it
        canonical = repr(args)
    return f"{name}\x00{canonical}"


def _elapsed_ms(started: float) -> float:
    return (perf_counter() - started) * 1000.0


def _failure(
    call: ToolCall, kind: ToolErrorKind, message: str, started: float, detail: str | None = None
) -> ToolResult:
    return ToolResult(
        call.id,
        call.name,
        (TextPart(message),),
        is_error=True,
        error_kind=kind,
        duration_ms=_elapsed_ms(started),
        detail=detail,
    )


class ToolInvoker:
    """Runs tool calls for one agent run. ``timeout`` (seconds) applies to tools without their own;
    ``context`` is the run's :class:`~kanawa.context.RunContext`, given to tools that take one."""

    __slots__ = ("_context", "_failed", "_options", "_timeout", "_tools")

    def __init__(
        self,
        tools: ToolRegistry | Sequence[Tool | Callable[..., Any]],
        *,
        timeout: float | None = None,
        context: RunContext[Any] | None = None,
    ) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds")
        registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools=tools)
        self._tools: Mapping[str, Tool] = registry.as_mapping()
        self._timeout = timeout
        self._context: RunContext[Any] = context if context is not None else _NO_RUN
        self._failed: set[str] = set()
        self._options: dict[str, tuple[Tool, _Options]] = {}

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The tools this invoker can run, by name (a live read-only view)."""
        return self._tools

    async def invoke_all(
        self, calls: Sequence[ToolCall], *, offered: Container[str] | None = None
    ) -> list[ToolResult]:
        """Run ``calls`` concurrently; results come back in call order. One failure cancels nothing."""
        if len(calls) == 1:
            return [await self.invoke(calls[0], offered=offered)]
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self.invoke(call, offered=offered)) for call in calls]
        except BaseExceptionGroup as failed:
            reraise_stop_run(failed)
            raise
        return [task.result() for task in tasks]

    async def invoke(self, call: ToolCall, *, offered: Container[str] | None = None) -> ToolResult:
        """Run one call fail-closed (see the module table); never raises for bad model output.

        ``offered`` names the tools the request that produced ``call`` offered (``None``: all of this
        invoker's tools). A call to any other tool never runs: it is answered as an unknown tool, which
        for that request it was (a model asked for a final answer with no tools must not run one).
        """
        started = perf_counter()
        tool = self._tools.get(call.name) if offered is None or call.name in offered else None
        if tool is None:
            return _failure(call, ToolErrorKind.UNKNOWN_TOOL, unknown_tool_message(call.name), started)
        try:
            if call.invalid_arguments is not None:
                raise ToolArgumentsError(call.invalid_arguments)
            args = parse_tool_arguments(call.arguments)
        except ToolArgumentsError as exc:
            return _failure(
                call, ToolErrorKind.PARSE_ERROR, f"{PARSE_ERROR_MESSAGE} ({exc.message})", started
            )
        signature: str | None = None
        if self._failed:
            signature = _signature(call.name, args)
            if signature in self._failed:
                return _failure(call, ToolErrorKind.DUPLICATE_FAILURE, DUPLICATE_FAILURE_MESSAGE, started)
        result = await self._run(tool, call, args, started)
        if result.is_error:
            self._failed.add(signature or _signature(call.name, args))
        return result

    async def _run(
        self, tool: Tool, call: ToolCall, args: dict[str, JsonValue], started: float
    ) -> ToolResult:
        problems: list[str] = []
        checked: list[str] = []
        for name, allowed in self._options_for(tool):
            if name in args and args[name] not in allowed:
                problems.append(option_problem(name, allowed))
                checked.append(name)
        try:
            positional, keywords = call_arguments(tool.args_model.model_validate(args))
        except ValidationError as exc:
            message = validation_message(exc, option_problems=problems, checked=checked)
            return _failure(call, ToolErrorKind.VALIDATION_ERROR, message, started)
        except Exception as exc:  # a user validator raising something other than ValueError
            return _failure(
                call, ToolErrorKind.EXECUTION_ERROR, EXECUTION_ERROR_MESSAGE, started, describe_exception(exc)
            )
        if problems:
            message = validation_message(None, option_problems=problems)
            return _failure(call, ToolErrorKind.VALIDATION_ERROR, message, started)
        token = None
        if tool.takes_context:
            positional = (self._context, *positional)
            token = CURRENT_TOOL_CALL_ID.set(call.id)
        timeout = None if tool.inline else tool.timeout if tool.timeout is not None else self._timeout
        scope: asyncio.Timeout | None = None
        try:
            if timeout is None:
                output = await self._call(tool, positional, keywords)
            else:
                async with asyncio.timeout(timeout) as scope:
                    output = await self._call(tool, positional, keywords)
            content = to_content(output)
        except TimeoutError as exc:
            if scope is not None and timeout is not None and scope.expired():
                detail = f"TimeoutError: {tool.name} did not finish within {timeout:g} s"
                return _failure(
                    call, ToolErrorKind.EXECUTION_ERROR, timeout_message(timeout), started, detail
                )
            return _failure(
                call, ToolErrorKind.EXECUTION_ERROR, EXECUTION_ERROR_MESSAGE, started, describe_exception(exc)
            )
        except StopRun:
            raise
        except Exception as exc:
            return _failure(
                call, ToolErrorKind.EXECUTION_ERROR, EXECUTION_ERROR_MESSAGE, started, describe_exception(exc)
            )
        finally:
            if token is not None:
                CURRENT_TOOL_CALL_ID.reset(token)
        return ToolResult(call.id, call.name, content, duration_ms=_elapsed_ms(started), output=output)

    @staticmethod
    async def _call(tool: Tool, positional: tuple[Any, ...], keywords: dict[str, Any]) -> Any:
        if tool.is_async:
            return await tool.function(*positional, **keywords)
        if tool.inline:  # in a copy of the context, as in a thread: the tool's context changes stay its own
            output = contextvars.copy_context().run(tool.function, *positional, **keywords)
        else:
            output = await asyncio.to_thread(tool.function, *positional, **keywords)
        if inspect.isawaitable(output):  # a sync wrapper around a coroutine function
            output = await output
        return output

    def _options_for(self, tool: Tool) -> _Options:
        cached = self._options.get(tool.name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        shared = _SHARED_OPTIONS.get(id(tool))
        if shared is not None and shared[0] is tool:
            options = shared[1]
        else:
            options = _options_of(tool)
            if len(_SHARED_OPTIONS) >= _SHARED_OPTIONS_LIMIT:
                _SHARED_OPTIONS.clear()
            _SHARED_OPTIONS[id(tool)] = (tool, options)
        self._options[tool.name] = (tool, options)
        return options
