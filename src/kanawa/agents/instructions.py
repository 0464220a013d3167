"""Dynamic instructions: system-message text computed from the run's context, once per run.

``Agent(instructions=fn)`` or ``@agent.add_instructions`` registers a function that takes the
:class:`~kanawa.context.RunContext` and returns text (``def`` or ``async def``). Before the run's first
request the agent calls each one, in registration order, and joins the static instructions and every
non-blank result with a blank line; that text (with the GPT-5 prompt policies around it when the agent
has ``prompt_policies=True``) becomes the system message.

A sync function runs on the event loop, so it should only format text; do I/O in an ``async def``.
An exception raised by one ends the run with that exception (nothing has been sent yet); a result
that is not a ``str`` is a :class:`TypeError`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias

from kanawa.context import DepsT, RunContext

__all__ = ["InstructionsFunc", "render_instructions"]

InstructionsFunc: TypeAlias = Callable[[RunContext[DepsT]], str | Awaitable[str]]
"""A function of the run context that returns instruction text (sync or async)."""


async def render_instructions(
    static: str, functions: Sequence[InstructionsFunc[Any]], context: RunContext[Any]
) -> str:
    """``static`` and the text of each function, blank ones left out, joined by a blank line."""
    parts = [static] if static.strip() else []
    for function in functions:
        text: object = function(context)
        if inspect.isawaitable(text):
            text = await text
        if not isinstance(text, str):
            name = getattr(function, "__qualname__", repr(function))
            raise TypeError(f"instructions function {name} returned {type(text).__name__}, not str")
        if text.strip():
            parts.append(text)
    return "\n\n".join(parts)
