"""``@tool`` and ``make_tool``: turn a typed Python function into an immutable :class:`Tool`.

Usable bare (``@tool``) or with options (``@tool(name=..., description=..., strict=..., timeout=...,
inline=...)``).
Everything is decided here, once: the JSON schema, the pydantic arguments model and whether the
function is async (seed 002 §3-2: a ``Tool`` is immutable; its arguments are cast to a pydantic model
before the function runs). Unsupported signatures fail now, with a :class:`TypeError`, instead of on
the model's first call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, overload

from kanawa.tools.base import Tool
from kanawa.tools.schema import TOOL_NAME_PATTERN, describe_function, make_strict

__all__ = ["make_tool", "tool"]

ToolFunction = Callable[..., Any]


def make_tool(
    fn: ToolFunction | Tool,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool = False,
    timeout: float | None = None,
    requires_approval: bool = False,
    inline: bool = False,
) -> Tool:
    """Build a :class:`Tool` from ``fn`` (a function, bound method, ``functools.partial`` or callable).

    ``name`` defaults to the function's ``__name__`` and must match ``[A-Za-z0-9_-]{1,64}`` (accepted
    by every provider); ``description`` defaults to the docstring's short and long description.
    Passing an existing :class:`Tool` returns it with the given options applied. ``requires_approval``
    makes a run stop before the tool runs and wait for a person's decision (:mod:`kanawa.loop.approval`).
    ``inline`` runs a sync function on the event loop instead of a worker thread: only for a cheap
    function that never blocks (see :class:`Tool`).

    Raises :class:`TypeError` for unsupported signatures and :class:`ValueError` for a bad name or
    timeout, or ``inline`` on an async function or with a timeout.
    """
    if timeout is not None and not timeout > 0:
        raise ValueError("tool timeout must be a positive number of seconds")
    if isinstance(fn, Tool):
        return _reconfigure(
            fn,
            name=name,
            description=description,
            strict=strict,
            timeout=timeout,
            requires_approval=requires_approval,
            inline=inline,
        )
    if not callable(fn):
        raise TypeError(f"a tool needs a callable, not {type(fn).__name__}")
    tool_name = name if name is not None else getattr(fn, "__name__", None)
    if tool_name is None:
        raise ValueError(f"{fn!r} has no __name__; pass name=... to make it a tool")
    _check_name(tool_name)
    described = describe_function(fn, name=tool_name, strict=strict)
    return Tool(
        name=tool_name,
        description=described.description if description is None else description,
        parameters=described.parameters,
        function=fn,
        args_model=described.args_model,
        is_async=described.is_async,
        strict=strict,
        timeout=timeout,
        takes_context=described.takes_context,
        requires_approval=requires_approval,
        inline=inline,
    )


def _check_name(name: str) -> None:
    if not TOOL_NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"invalid tool name {name!r}: use 1-64 letters, digits, '_' or '-' (pass name=... to rename)"
        )


def _reconfigure(
    existing: Tool,
    *,
    name: str | None,
    description: str | None,
    strict: bool,
    timeout: float | None,
    requires_approval: bool,
    inline: bool,
) -> Tool:
    changes: dict[str, Any] = {}
    if name is not None and name != existing.name:
        _check_name(name)
        changes["name"] = name
    if description is not None:
        changes["description"] = description
    if strict and not existing.strict:
        changes["strict"] = True
        changes["parameters"] = make_strict(existing.parameters)
    if timeout is not None:
        changes["timeout"] = timeout
    if requires_approval and not existing.requires_approval:
        changes["requires_approval"] = True
    if inline and not existing.inline:
        changes["inline"] = True
    return dataclasses.replace(existing, **changes) if changes else existing


@overload
def tool(fn: ToolFunction, /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool = False,
    timeout: float | None = None,
    requires_approval: bool = False,
    inline: bool = False,
) -> Callable[[ToolFunction], Tool]: ...


def tool(
    fn: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool = False,
    timeout: float | None = None,
    requires_approval: bool = False,
    inline: bool = False,
) -> Tool | Callable[[ToolFunction], Tool]:
    """Decorate a typed function to make it a :class:`Tool`.

    ::

        @tool
        def add(a: int, b: int) -> int:
            \"\"\"Add two integers.

            Args:
                a: first addend
                b: second addend
            \"\"\"
            return a + b

        @tool(name="lookup", timeout=5)
        async def find(query: str) -> list[str]: ...

        @tool
        async def my_orders(ctx: RunContext[Deps], limit: int = 5) -> list[str]: ...

        @tool(requires_approval=True)      # the run stops and waits for a person's decision
        def refund(order_id: str) -> str: ...

        @tool(inline=True)                 # cheap and never blocks: runs on the event loop
        def celsius(fahrenheit: float) -> float: ...

    A first parameter annotated ``RunContext[...]`` receives the run's context (:mod:`kanawa.context`)
    and is not part of the schema. The result is a frozen :class:`Tool`; calling it calls the function
    unchanged.
    """
    options: dict[str, Any] = {
        "name": name,
        "description": description,
        "strict": strict,
        "timeout": timeout,
        "requires_approval": requires_approval,
        "inline": inline,
    }
    if fn is not None:
        return make_tool(fn, **options)

    def decorate(function: ToolFunction) -> Tool:
        return make_tool(function, **options)

    return decorate
