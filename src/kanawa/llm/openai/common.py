"""What the two OpenAI adapters share: building the SDK client and mapping its errors.

Used by :mod:`kanawa.llm.openai.responses` (Responses API) and :mod:`kanawa.llm.openai.chat` (Chat
Completions on any OpenAI-compatible server). Both go through the official ``openai`` SDK for the
transport (HTTP, SSE decoding, status errors) but never let it retry: ``max_retries=0`` always, because
retrying is kanawa's own layer (:mod:`kanawa.llm.retry`, seed 002 §7) and two retry layers multiply.

Error mapping (seed 002 §3-3, §7; seed 001 §3.8 "API 例外を invoke error へ変換"):

=====================================================  ==========================================
SDK / transport exception                              kanawa error
=====================================================  ==========================================
``APIStatusError`` (any 4xx/5xx)                       :func:`~kanawa.llm.errors.error_for_status`
``APITimeoutError``, ``httpx2.TimeoutException``       :class:`LLMTimeoutError`
``APIConnectionError``, ``httpx2.TransportError``,     :class:`LLMConnectionError`
``OSError``, ``anyio.EndOfStream``
``json.JSONDecodeError`` (a malformed SSE event)       :class:`LLMConnectionError` "malformed stream
                                                       event" — the stream is unusable, and a fresh
                                                       request may well succeed, so it is retryable
other ``openai.APIError`` (e.g. an in-stream error)    :func:`error_for_code` on the error ``code``
=====================================================  ==========================================

Messages carry the server's own error message (cut to :data:`MAX_MESSAGE_CHARS`) and code, the HTTP
status, ``retry-after`` and ``x-request-id`` — never anything kanawa sent (no prompt); keys a server
echoes are masked by :mod:`kanawa.secrets` like everywhere else (the adapters register theirs).
"""

from __future__ import annotations

import json
import os
import ssl
import sys
from collections.abc import Mapping

import anyio
import httpx2
import openai

from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
    error_for_status,
    parse_retry_after,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "KEYLESS_PLACEHOLDER",
    "MAPPED_EXCEPTIONS",
    "MAX_MESSAGE_CHARS",
    "MISSING_KEY_MESSAGE",
    "build_client",
    "error_for_code",
    "map_openai_error",
]

DEFAULT_TIMEOUT = 600.0
"""Seconds for one request when neither the call nor the adapter sets one (the SDK's own default)."""

MISSING_KEY_MESSAGE = "OPENAI_API_KEY is not set: pass api_key=... or export OPENAI_API_KEY"

KEYLESS_PLACEHOLDER = "sk-no-key-required"
"""Sent as the bearer token when ``require_key=False`` and no key exists (local servers ignore it;
the SDK refuses to build a client without one)."""

MAX_MESSAGE_CHARS = 300
"""The server's error message is cut to this length before it goes into an exception."""


def _transport_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [httpx2.TransportError, ssl.SSLError, anyio.EndOfStream, OSError]
    legacy = sys.modules.get("httpx")
    if legacy is not None:
        errors.append(legacy.TransportError)
    return tuple(errors)


MAPPED_EXCEPTIONS: tuple[type[BaseException], ...] = (
    openai.APIError,
    httpx2.HTTPError,
    json.JSONDecodeError,
    *_transport_errors(),
)
"""Catch these around SDK calls and stream iteration and pass them to :func:`map_openai_error`.
Anything else is a bug and must propagate unchanged."""


def build_client(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    organization: str | None = None,
    timeout: float | None = None,
    require_key: bool = True,
    default_headers: Mapping[str, str] | None = None,
) -> openai.AsyncOpenAI:
    """Build an ``AsyncOpenAI`` client with SDK retries off.

    ``api_key`` falls back to ``OPENAI_API_KEY``; when both are missing this raises
    :class:`LLMAuthError` with :data:`MISSING_KEY_MESSAGE`. With ``require_key=False`` (keyless
    OpenAI-compatible servers) the environment is not consulted — the caller decides which key may go
    to which host — and :data:`KEYLESS_PLACEHOLDER` is sent when ``api_key`` is empty. ``base_url``
    is used as given (callers normalise it; ``None`` lets the SDK use ``OPENAI_BASE_URL`` or
    api.openai.com). ``timeout`` defaults to :data:`DEFAULT_TIMEOUT`.
    """
    key = api_key or (os.environ.get("OPENAI_API_KEY") if require_key else None) or None
    if key is None:
        if require_key:
            raise LLMAuthError(MISSING_KEY_MESSAGE, provider="openai")
        key = KEYLESS_PLACEHOLDER
    return openai.AsyncOpenAI(
        api_key=key,
        base_url=base_url,
        organization=(organization or "").strip() or None,
        timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
        max_retries=0,
        default_headers=default_headers,
    )


# ------------------------------------------------------------------------------------------ headers


# ---------------------------------------------------------------------------------------- the body


def _error_fields(body: object) -> tuple[str | None, str | None]:
    """``(code, message)`` from an OpenAI error body (``{"error": {...}}`` or the inner object)."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            code = inner.get("code")
            message = inner.get("message")
            return (
                str(code) if code is not None else None,
                message if isinstance(message, str) and message else None,
            )
    return None, None


def _clip(message: str | None, fallback: str) -> str:
    text = " ".join((message or "").split())
    if not text:
        return fallback
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"


_CODE_CLASSES: dict[str, type[LLMError]] = {
    "rate_limit_exceeded": LLMRateLimitError,
    "insufficient_quota": LLMRateLimitError,
    "server_error": LLMConnectionError,
    "server_is_overloaded": LLMConnectionError,
    "vector_store_timeout": LLMTimeoutError,
    "invalid_api_key": LLMAuthError,
}


def error_for_code(
    code: str | None,
    message: str | None,
    *,
    provider: str,
    model: str,
    request_id: str | None = None,
) -> LLMError:
    """Map an error that arrived without an HTTP status (an SSE ``error`` event, ``response.failed``).

    Known transient codes become retryable errors (``rate_limit_exceeded`` → rate limit,
    ``server_error`` → connection); ``invalid_*`` / ``*_policy*`` codes mean the request itself was
    refused (bad request); anything else is a plain :class:`LLMError`.
    """
    text = _clip(message, f"the model reported an error ({code or 'no code'})")
    cls = _CODE_CLASSES.get(code or "")
    if cls is None:
        is_refusal = code is not None and (code.startswith(("invalid_", "image_")) or "policy" in code)
        cls = LLMBadRequestError if is_refusal else LLMError
    return cls(text, provider=provider, model=model, request_id=request_id, code=code)


def map_openai_error(
    exc: BaseException,
    *,
    provider: str,
    model: str,
    streaming: bool = False,
) -> LLMError:
    """Turn an SDK or transport exception into the matching :class:`LLMError` (table above).

    ``streaming`` only changes wording: a JSON decode error is "malformed stream event" while
    streaming and "malformed response body" otherwise; a broken connection is "connection lost while
    streaming" rather than "connection error". An exception outside
    :data:`MAPPED_EXCEPTIONS` becomes a plain :class:`LLMError` naming only its type. Keys in the
    server's text are masked by :class:`LLMError` itself (:mod:`kanawa.secrets`).
    """
    return _map(exc, provider=provider, model=model, streaming=streaming)


def _map(exc: BaseException, *, provider: str, model: str, streaming: bool) -> LLMError:
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        code, message = _error_fields(exc.body)
        headers = exc.response.headers
        return error_for_status(
            exc.status_code,
            _clip(message, f"request failed with HTTP {exc.status_code}"),
            provider=provider,
            model=model,
            retry_after=parse_retry_after(headers),
            request_id=exc.request_id or headers.get("x-request-id"),
            code=code or exc.code,
        )
    if isinstance(exc, openai.APITimeoutError) or _is_timeout(exc):
        return LLMTimeoutError("request timed out", provider=provider, model=model)
    if isinstance(exc, openai.APIConnectionError):
        what = "connection lost while streaming" if streaming else "connection error"
        return LLMConnectionError(what, provider=provider, model=model)
    if isinstance(exc, json.JSONDecodeError):
        what = "malformed stream event" if streaming else "malformed response body"
        return LLMConnectionError(what, provider=provider, model=model)
    if isinstance(exc, openai.APIError):
        code, message = _error_fields(exc.body)
        return error_for_code(code or exc.code, message or exc.message, provider=provider, model=model)
    if isinstance(exc, _transport_errors()):
        what = "connection lost while streaming" if streaming else "connection error"
        return LLMConnectionError(what, provider=provider, model=model)
    return LLMError(f"unexpected {type(exc).__name__} from the OpenAI client", provider=provider, model=model)


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, httpx2.TimeoutException | TimeoutError):
        return True
    legacy = sys.modules.get("httpx")
    return legacy is not None and isinstance(exc, legacy.TimeoutException)
