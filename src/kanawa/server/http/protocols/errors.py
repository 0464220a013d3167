"""One table from kanawa's refusals to a neutral protocol error, which each protocol renders.

Seven doors (kanawa SSE, OpenAI Responses and Chat, AG-UI, the AI SDK, A2A, MCP) open runs through
the same steps (:mod:`.opening`), so the same refusal must get the same class of answer at each: a
tenant at its stream cap is told 429 whichever protocol it speaks, input a run cannot take is a
client error everywhere, never a 500. :func:`protocol_error` turns one of kanawa's exceptions into a
:class:`ProtocolError` — its HTTP status, a message safe to show (the exception's own text, written
for the client; never a traceback), the request field at fault and a short code — and each protocol
only decides the shape: ``{"detail": …}`` for kanawa's own routes, AG-UI and the AI SDK (the app's
handler, :func:`detail_response`), OpenAI's ``{"error": …}``, a JSON-RPC error for A2A, an
``isError`` tool result for MCP.

======================================  ======  ========================  =========================
exception                               status  ``code``                  when
======================================  ======  ========================  =========================
``TooManyStreams``                      429     ``rate_limit_exceeded``   the tenant's (or run's)
                                                                          streams are at their cap
``RunLimitReached``                     429     ``rate_limit_exceeded``   the tenant's runs going
``InvalidInput``                        400     ``invalid_request``       input a run cannot take
``InvalidContinuation``                 400     ``invalid_request``       answers that fit no call
``InvalidDecisions``                    400     ``invalid_request``       approvals that fit no call
``NotContinuable``                      409     ``conflict``              the run cannot go on
``NotAwaitingApproval``                 409     ``conflict``              no approval is waited for
``RunExists``                           409     ``conflict``              the same first message
                                                                          twice at once
``ChunksExpired``                       404     ``not_found``             the chunks are gone
======================================  ======  ========================  =========================

Anything not in the table is a server fault: it is not rendered here, it propagates (a 500 whose
body says nothing of it, and one traceback in the log).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from fastapi import Request
from fastapi.responses import JSONResponse

from kanawa.server.http.event_stream import TooManyStreams
from kanawa.server.http.protocols.openai_inputs import InvalidInput
from kanawa.server.runs.manager import (
    InvalidContinuation,
    InvalidDecisions,
    NotAwaitingApproval,
    NotContinuable,
    RunLimitReached,
)
from kanawa.server.store.base import ChunksExpired, RunExists

RETRY_AFTER: Final = {"Retry-After": "1"}
"""The header of every 429 for a limit that frees itself as runs and streams end."""


class ProtocolError(Exception):
    """A refusal in no protocol's shape yet: its status, a message safe to show, the request field at
    fault (``param``), a short machine-readable ``code``, and the headers the answer carries."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.headers: dict[str, str] | None = dict(headers) if headers else None

    @property
    def client_error(self) -> bool:
        """Whether the request was at fault (4xx): logged as one line, never with a traceback."""
        return 400 <= self.status < 500


ERRORS: Final[tuple[tuple[type[Exception], int, str], ...]] = (
    (TooManyStreams, 429, "rate_limit_exceeded"),
    (RunLimitReached, 429, "rate_limit_exceeded"),
    (InvalidInput, 400, "invalid_request"),
    (InvalidContinuation, 400, "invalid_request"),
    (InvalidDecisions, 400, "invalid_request"),
    (NotContinuable, 409, "conflict"),
    (NotAwaitingApproval, 409, "conflict"),
    (RunExists, 409, "conflict"),
    (ChunksExpired, 404, "not_found"),
)
"""kanawa's refusals, each with its status and code (the module's table)."""
REFUSALS: Final = tuple(kind for kind, _, _ in ERRORS)
"""The exception types of :data:`ERRORS`, for an ``except`` clause."""


def protocol_error(exc: BaseException) -> ProtocolError | None:
    """``exc`` as a :class:`ProtocolError` (itself when it is one); ``None`` for a server fault."""
    if isinstance(exc, ProtocolError):
        return exc
    for kind, status, code in ERRORS:
        if isinstance(exc, kind):
            param = getattr(exc, "param", None)
            return ProtocolError(
                status,
                str(exc),
                param=param if isinstance(param, str) else None,
                code=code,
                headers=RETRY_AFTER if status == 429 else None,
            )
    return None


async def detail_response(request: Request, exc: Exception) -> JSONResponse:
    """kanawa's own shape, ``{"detail": message}`` with the status and headers: the app's handler for
    a :class:`ProtocolError` a route lets through (kanawa SSE, AG-UI, the AI SDK, the runs API)."""
    assert isinstance(exc, ProtocolError)
    return JSONResponse({"detail": exc.message}, status_code=exc.status, headers=exc.headers)


__all__ = ["ERRORS", "REFUSALS", "RETRY_AFTER", "ProtocolError", "detail_response", "protocol_error"]
