"""A neutral protocol error (:mod:`kanawa.server.http.protocols.errors`) in A2A's shape.

A2A answers in JSON-RPC's error shape with status 200, except where HTTP itself says what a client
must do: a limit (429 with ``Retry-After``) stays an HTTP status, as on every other door, so a client
backs off the same way whichever protocol it speaks. Input a run cannot take is ``-32602`` (invalid
params), an unknown or another tenant's task ``TaskNotFoundError``, a task that cannot take the
request now ``UnsupportedOperationError``; anything else is an internal error whose message says
nothing of the fault.
"""

from __future__ import annotations

from a2a.utils.errors import (
    InternalError,
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from fastapi import HTTPException

from kanawa.server.http.protocols.errors import ProtocolError


def a2a_error(error: ProtocolError) -> Exception:
    """What the A2A route raises for ``error``: an ``HTTPException`` for a limit, else an A2A error
    the JSON-RPC layer answers."""
    if error.status == 429:
        return HTTPException(429, error.message, headers=error.headers)
    if error.status in (400, 413, 422):
        return InvalidParamsError(message=error.message)
    if error.status == 404:
        return TaskNotFoundError(message=error.message)
    if error.client_error:
        return UnsupportedOperationError(message=error.message)
    return InternalError(message="internal error")


__all__ = ["a2a_error"]
