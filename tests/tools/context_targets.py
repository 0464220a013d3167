"""Tools whose module imports ``RunContext`` only for type checking (as linters suggest under
``from __future__ import annotations``); ``@tool`` must still see the context parameter."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kanawa import RunContext


def lookup(ctx: RunContext[dict[str, str]], key: str) -> str:
    """Look a key up in the run's table.

    Args:
        ctx: the run context
        key: what to look up
    """
    return ctx.deps[key]
