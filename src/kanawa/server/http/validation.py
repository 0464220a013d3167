"""Request validation that never fails on what it reports.

FastAPI's own answer to an invalid request echoes the input back, and JSON numbers like ``NaN`` or
``Infinity`` (which Python's JSON parser accepts) or a lone UTF-16 surrogate (``"\\ud800"``) cannot be
written as JSON or UTF-8: the error handler itself failed, and the client got a 500 with a traceback
in the log. Here every text field of a request body is :data:`Text` — valid Unicode, a lone
surrogate is a validation error — and :func:`validation_failed` answers 422 with where and what
(``loc``, ``msg``, ``type``), never the input.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import AfterValidator


def _unicode(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (it holds a lone surrogate)") from None
    return value


Text = Annotated[str, AfterValidator(_unicode)]
"""A ``str`` that can be stored, streamed and logged as UTF-8."""


def _printable(part: object) -> str | int:
    if isinstance(part, int):
        return part
    return _printable_text(part)


def _printable_text(part: object) -> str:
    return str(part).encode("utf-8", "backslashreplace").decode("utf-8")


async def validation_failed(request: Request, exc: Exception) -> JSONResponse:
    """422 listing each problem's ``loc``, ``msg`` and ``type`` (the input is not echoed)."""
    errors: list[dict[str, Any]] = []
    if isinstance(exc, RequestValidationError):
        for error in exc.errors()[:20]:
            errors.append(
                {
                    "loc": [_printable(part) for part in error.get("loc", ())],
                    "msg": _printable(error.get("msg", "")),
                    "type": _printable(error.get("type", "")),
                }
            )
    return JSONResponse({"detail": errors}, status_code=422)


def non_finite_at(value: object) -> str | None:
    """Where in parsed JSON ``value`` a number JSON cannot carry sits (``NaN``, ``Infinity``, or one
    as large as ``1e999``, which Python's parser reads as an infinite float): a dotted path such as
    ``message.metadata.k`` or ``parts[2].data``, or ``None`` when every number is finite. A door that
    parses JSON itself (A2A, MCP) refuses such a request as the native routes do (their models), before
    anything starts: the number could not be written back in any answer. Iterative, so depth costs no
    recursion."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if type(item) is float and not math.isfinite(item):
            return _printable_text(path or "(the value)")[:200]  # printable: keys may hold lone surrogates
        if isinstance(item, dict):
            stack.extend((f"{path}.{key}" if path else str(key), inner) for key, inner in item.items())
        elif isinstance(item, list):
            stack.extend((f"{path}[{index}]", inner) for index, inner in enumerate(item))
    return None


__all__ = ["Text", "non_finite_at", "validation_failed"]
