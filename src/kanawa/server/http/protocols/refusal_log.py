"""One log line for a refused request; a traceback only for a server fault.

A library that serves a protocol for us (the ``a2a-sdk``'s JSON-RPC dispatcher and its 0.3 adapter)
logs every exception it catches with ``logger.exception``: a tenant at its run cap, params that do
not parse, each wrote a full traceback (88 in one battery of refused requests), which buries the
faults an operator must see. :class:`RefusalLog`, a filter on such a logger, keeps a record whose
exception is the client's fault (:func:`client_fault`, or the protocol's own test) to one line —
``WARNING``, the exception's type and its first line, no traceback — or drops it where the library
logs the same refusal again on its own line. Every other record passes as it is: a server fault keeps
its traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable

from google.protobuf.json_format import ParseError
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from kanawa.server.http.protocols.errors import ProtocolError

MAX_REASON = 200
"""Characters of an exception's first line kept in the line."""


def client_fault(exc: BaseException) -> bool:
    """Whether ``exc`` says the request was at fault (a 4xx, input that does not parse)."""
    if isinstance(exc, ProtocolError):
        return exc.client_error
    if isinstance(exc, HTTPException):
        return 400 <= exc.status_code < 500
    return isinstance(exc, ValidationError | ParseError | json.JSONDecodeError | UnicodeError)


class RefusalLog(logging.Filter):
    """A client fault's record as one line without a traceback (module docstring); ``dropped``: the
    messages of records to leave out instead (the library logs that refusal again itself)."""

    def __init__(
        self, *, is_refusal: Callable[[BaseException], bool] = client_fault, dropped: Iterable[str] = ()
    ) -> None:
        super().__init__()
        self._is_refusal = is_refusal
        self._dropped = frozenset(dropped)

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None or not self._is_refusal(exc):
            return True
        if record.msg in self._dropped:
            return False
        first = str(exc).splitlines()[0] if str(exc) else ""
        reason = first.encode("utf-8", "backslashreplace").decode("utf-8")[:MAX_REASON]
        said = record.getMessage()
        record.msg, record.args = "%s (refused: %s: %s)", (said, type(exc).__name__, reason)
        record.exc_info, record.exc_text = None, None
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True


def install(logger_names: Iterable[str], log_filter: RefusalLog) -> None:
    """Put ``log_filter`` on each named logger once (a second call adds nothing)."""
    for name in logger_names:
        logger = logging.getLogger(name)
        if not any(isinstance(present, RefusalLog) for present in logger.filters):
            logger.addFilter(log_filter)


__all__ = ["RefusalLog", "client_fault", "install"]
