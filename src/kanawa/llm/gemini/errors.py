"""Gemini SDK and transport exceptions → kanawa's :class:`~kanawa.llm.errors.LLMError` hierarchy
(seed 002 §3-3, §7).

Only :class:`LLMError` subclasses leave the Gemini adapter. Messages carry the server's own message,
cut to :data:`MAX_MESSAGE_CHARS`, and never the API key or anything kanawa sent:

==================================================  ===============================================
SDK / transport exception                           kanawa error
==================================================  ===============================================
``google.genai.errors.APIError`` (Client/Server)    :func:`~kanawa.llm.errors.error_for_status`
                                                    (an in-stream error without an HTTP code maps
                                                    by its ``status``: ``RESOURCE_EXHAUSTED`` →
                                                    429, ``UNAVAILABLE`` → 503 …); ``retry_after``
                                                    from ``Retry-After`` or the body's
                                                    ``google.rpc.RetryInfo`` ``retryDelay``
the request's timeout (``TimeoutError``,            :class:`LLMTimeoutError`
``httpx2.TimeoutException``)
``httpx2.TransportError``, ``OSError``              :class:`LLMConnectionError` (a refused
                                                    connection, a stream cut mid-way)
an unparseable body or SSE event                    :class:`LLMConnectionError` (retryable: the
                                                    next response may well be whole)
the SDK refusing the request (``ValueError``)       :class:`LLMBadRequestError`
==================================================  ===============================================
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Mapping

import pydantic
from google.genai import errors as genai_errors

from kanawa.llm.errors import (
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    error_for_status,
    parse_retry_after,
)
from kanawa.llm.gemini.payload import PROVIDER

MAX_MESSAGE_CHARS = 300
"""Longest server message kept in an error (Google's messages can run to paragraphs)."""

_STATUS_CODES = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "INTERNAL": 500,
    "UNKNOWN": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""``google.rpc.Code`` names → HTTP status, for error events that arrive inside a stream without one."""


def _optional_errors(module: str, *names: str) -> tuple[type[BaseException], ...]:
    """Exception classes of a transport the SDK may use (``httpx2`` always; ``httpx``/``aiohttp``
    when the SDK's extras are installed)."""
    try:
        found = importlib.import_module(module)
    except ImportError:
        return ()
    return tuple(getattr(found, name) for name in names)


_TIMEOUTS: tuple[type[BaseException], ...] = (
    TimeoutError,
    *_optional_errors("httpx2", "TimeoutException"),
    *_optional_errors("httpx", "TimeoutException"),
)
_TRANSPORT: tuple[type[BaseException], ...] = (
    OSError,
    *_optional_errors("httpx2", "TransportError", "StreamError"),
    *_optional_errors("httpx", "TransportError", "StreamError"),
    *_optional_errors("aiohttp", "ClientError"),
    *_optional_errors("anyio", "EndOfStream", "BrokenResourceError", "ClosedResourceError"),
)
_MALFORMED: tuple[type[BaseException], ...] = (
    genai_errors.UnknownApiResponseError,
    pydantic.ValidationError,
    json.JSONDecodeError,
    TypeError,
    KeyError,
    AttributeError,
)
SDK_ERRORS: tuple[type[BaseException], ...] = (
    genai_errors.APIError,
    *_TIMEOUTS,
    *_TRANSPORT,
    *_MALFORMED,
    ValueError,
)
"""Catch these around SDK calls only (never around kanawa's own conversion code) and pass them to
:func:`map_error`."""


# ------------------------------------------------------------------------------------ error mapping


def _clip(message: object, fallback: str) -> str:
    text = " ".join(str(message).split()) if isinstance(message, str) else ""
    if not text:
        return fallback
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"


def _header(headers: object, name: str) -> str | None:
    if not isinstance(headers, Mapping) and not hasattr(headers, "items"):
        return None
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name and isinstance(value, str):
            return value
    return None


def _duration_seconds(text: object) -> float | None:
    """A protobuf ``Duration`` in JSON form (``"7s"``, ``"0.250s"``) in seconds."""
    if not isinstance(text, str) or not text.endswith("s"):
        return None
    try:
        value = float(text[:-1])
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def retry_after(exc: genai_errors.APIError, *, now: float | None = None) -> float | None:
    """Seconds the server asked to wait: ``Retry-After`` (seconds or HTTP date), else the error body's
    ``google.rpc.RetryInfo`` ``retryDelay``."""
    raw = _header(getattr(exc.response, "headers", None), "retry-after")
    if raw is not None:
        seconds = parse_retry_after({"retry-after": raw}, now=now)
        if seconds is not None:
            return seconds
    body = exc.details if isinstance(exc.details, Mapping) else {}
    inner = body.get("error", body)
    details = inner.get("details") if isinstance(inner, Mapping) else None
    for item in details if isinstance(details, list) else ():
        if isinstance(item, Mapping) and str(item.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return _duration_seconds(item.get("retryDelay"))
    return None


def map_error(exc: BaseException, *, model: str, streaming: bool) -> LLMError:
    """The :class:`LLMError` for an exception raised by the SDK or its transport (module table)."""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, genai_errors.APIError):
        code = (
            exc.code if isinstance(exc.code, int) and exc.code else _STATUS_CODES.get(exc.status or "", 500)
        )
        return error_for_status(
            code,
            _clip(exc.message, f"request failed with HTTP {code}"),
            provider=PROVIDER,
            model=model,
            retry_after=retry_after(exc),
            request_id=_header(getattr(exc.response, "headers", None), "x-request-id"),
            code=exc.status if isinstance(exc.status, str) else None,
        )
    if isinstance(exc, _TIMEOUTS):
        return LLMTimeoutError("request timed out", provider=PROVIDER, model=model)
    if isinstance(exc, _TRANSPORT):
        what = "connection lost while streaming" if streaming else "connection error"
        return LLMConnectionError(what, provider=PROVIDER, model=model)
    if isinstance(exc, _MALFORMED):
        what = "malformed stream event" if streaming else "malformed response body"
        return LLMConnectionError(f"{what} ({type(exc).__name__})", provider=PROVIDER, model=model)
    if isinstance(exc, ValueError):
        return LLMBadRequestError(
            _clip(str(exc), "the Gemini client refused the request"), provider=PROVIDER, model=model
        )
    return LLMError(f"unexpected {type(exc).__name__} from the Gemini client", provider=PROVIDER, model=model)


__all__ = ["MAX_MESSAGE_CHARS", "SDK_ERRORS", "map_error", "retry_after"]
