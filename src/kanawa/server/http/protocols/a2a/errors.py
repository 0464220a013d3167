"""A neutral protocol error (:mod:`kanawa.server.http.protocols.errors`) in A2A's shape.

A2A answers in JSON-RPC's error shape with status 200, except where HTTP itself says what a client
must do: a limit (429 with ``Retry-After``) stays an HTTP status, as on every other door, so a client
backs off the same way whichever protocol it speaks. Input a run cannot take is ``-32602`` (invalid
params), an unknown or another tenant's task ``TaskNotFoundError``, a task that cannot take the
request now ``UnsupportedOperationError``; anything else is an internal error whose message says
nothing of the fault.
"""

from __future__ import annotations

from typing import Final

from a2a.utils.errors import (
    A2AError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from fastapi import HTTPException

from kanawa.server.http.protocols.errors import ProtocolError
from kanawa.server.http.protocols.refusal_log import RefusalLog, client_fault, install

SDK_LOGGERS: Final = ("a2a.server.routes.jsonrpc_dispatcher", "a2a.compat.v0_3.jsonrpc_adapter")
"""The SDK's loggers that log each exception they catch with its traceback."""


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


def a2a_refusal(exc: BaseException) -> bool:
    """A client fault in A2A terms: every A2A error but an internal one, and :func:`client_fault`."""
    if isinstance(exc, A2AError):
        return not isinstance(exc, InternalError | InvalidAgentResponseError)
    return client_fault(exc)


def quiet_sdk_refusals() -> None:
    """One line, no traceback, for each request the SDK refuses (:mod:`..refusal_log`); the params it
    cannot parse are left out, as it logs that request's error on its own line next."""
    dropped = ("Failed to parse request params", "Failed to validate base JSON-RPC request")
    install(SDK_LOGGERS, RefusalLog(is_refusal=a2a_refusal, dropped=dropped))


__all__ = ["SDK_LOGGERS", "a2a_error", "a2a_refusal", "quiet_sdk_refusals"]
