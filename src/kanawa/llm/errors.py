"""The LLM layer's exception hierarchy (seed 002 §3-3, §7).

Every provider fault an adapter sees becomes one of these, carrying what a caller needs to act on it:
the HTTP status, the server's ``Retry-After`` and request id. Messages never contain API keys, headers
or prompt text.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping


class LLMError(Exception):
    """Base class of every error raised by an :class:`~kanawa.llm.LLMAdapter`.

    ``retryable`` says whether the same request may succeed if sent again (408/409/429/5xx and
    connection faults); the retry layer consults only this flag.
    """

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        model: str = "",
        status_code: int | None = None,
        retry_after: float | None = None,
        request_id: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.model = model
        self.status_code = status_code
        self.retry_after = retry_after
        self.request_id = request_id
        self.code = code

    def __str__(self) -> str:
        where = ":".join(part for part in (self.provider, self.model) if part)
        status = f" (HTTP {self.status_code})" if self.status_code is not None else ""
        prefix = f"[{where}] " if where else ""
        return f"{prefix}{self.message}{status}"


class LLMTimeoutError(LLMError):
    """The request (or the stream) took longer than its timeout, or the server answered 408."""

    retryable = True


class LLMRateLimitError(LLMError):
    """HTTP 429; ``retry_after`` holds the server's hint in seconds when it gave one."""

    retryable = True


class LLMConnectionError(LLMError):
    """The connection failed or broke (including a stream cut mid-way), or the server answered 5xx/409."""

    retryable = True


class LLMBadRequestError(LLMError):
    """The request was refused as invalid (400, 404, 422) — or failed local validation before sending."""


class LLMAuthError(LLMError):
    """Missing or rejected credentials (401, 403, or no API key configured)."""


class LLMStreamInterruptedError(LLMConnectionError):
    """A stream broke after some output had already been delivered to the caller.

    Not retryable: re-sending would show the caller the same text twice. The loop surfaces it as
    :class:`~kanawa.loop.errors.LLMCallFailed`.
    """

    retryable = False


def error_for_status(
    status_code: int,
    message: str,
    *,
    provider: str = "",
    model: str = "",
    retry_after: float | None = None,
    request_id: str | None = None,
    code: str | None = None,
) -> LLMError:
    """Map an HTTP status to the matching :class:`LLMError` subclass (shared by every adapter)."""
    cls: type[LLMError]
    if status_code == 408:
        cls = LLMTimeoutError
    elif status_code == 429:
        cls = LLMRateLimitError
    elif status_code in (401, 403):
        cls = LLMAuthError
    elif status_code == 409 or status_code >= 500:
        cls = LLMConnectionError
    elif 400 <= status_code < 500:
        cls = LLMBadRequestError
    else:
        cls = LLMError
    return cls(
        message,
        provider=provider,
        model=model,
        status_code=status_code,
        retry_after=retry_after,
        request_id=request_id,
        code=code,
    )


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, else ``retry-after`` (seconds or an HTTP-date).

    Negative or unparseable values give ``None``; a date in the past gives ``0.0``.
    """
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw.strip())
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            return value / divisor
        return None
    raw_date = headers.get("retry-after")
    if not raw_date:
        return None
    try:
        when = email.utils.parsedate_to_datetime(raw_date.strip())
    except (TypeError, ValueError, IndexError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
