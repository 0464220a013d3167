"""The sync face of an async operation (docs/design.md, "Sync and async names").

``x()`` runs its twin ``ax()`` in an event loop of its own. Inside a running loop it cannot (the loop
would block on itself), so it says which twin to await instead — before the coroutine is made, so no
"never awaited" warning follows the error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_in_new_loop(make: Callable[[], Coroutine[Any, Any, T]], *, twin: str, receiver: str = "") -> T:
    """Run the coroutine ``make()`` returns in a new event loop. ``twin`` names the async face
    (``"Agent.arun"``) and ``receiver`` what the message calls the object (default: the class name in
    lower case); a running loop raises ``RuntimeError`` that points to the twin."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    owner, _, method = twin.rpartition(".")
    raise RuntimeError(
        f"{owner}.{method.removeprefix('a')}() cannot be called while an event loop is running; "
        f"use `await {receiver or owner.lower()}.{method}(...)`"
    )
