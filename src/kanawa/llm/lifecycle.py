"""Closing adapters: ``await adapter.aclose()`` or ``async with adapter:``.

An adapter that built its own SDK client owns that client's HTTP connection pool and closes it; an
adapter given a ``client=`` leaves the caller's client open (the caller owns it). Adapters with
nothing to close (the test models) close as a no-op, so every adapter can be used the same way.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosableAdapter:
    """Mixin: ``async with`` support on top of the adapter's :meth:`aclose`."""

    async def aclose(self) -> None:
        """Release what this adapter owns (default: nothing)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def close_adapter(adapter: object) -> None:
    """``await adapter.aclose()`` when the adapter has one (a user's own adapter may not)."""
    aclose = getattr(adapter, "aclose", None)
    if aclose is not None:
        await aclose()


__all__ = ["ClosableAdapter", "close_adapter"]
