"""The LLM layer's exception hierarchy (seed 002 §3-3, §7).

Every provider fault an adapter sees becomes one of these, carrying what a caller needs to act on it:
the HTTP status, the server's ``Retry-After`` and request id. Messages never contain API keys, headers
or prompt text: every text field goes through :func:`kanawa.secrets.mask` when the error is built and
again when it leaves an adapter (:func:`seal_errors`, :func:`seal_stream_errors`), which also cuts the
exception chain so the SDK's exception — whose text and attributes hold the raw response, echoed key
included — is reachable neither as ``__cause__`` nor as ``__context__``.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from typing import Any, ParamSpec, TypeVar

from kanawa.secrets import mask


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
        message = mask(message)
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.model = model
        self.status_code = status_code
        self.retry_after = retry_after
        self.request_id = None if request_id is None else mask(request_id)
        self.code = None if code is None else mask(code)

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
    import email.utils  # deferred: an HTTP-date Retry-After is rare, the email package is not small

    try:
        when = email.utils.parsedate_to_datetime(raw_date.strip())
    except (TypeError, ValueError, IndexError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


# ------------------------------------------------------------------------------------------ sealing

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def sealed(error: LLMError) -> LLMError:
    """``error`` with its text fields masked again (they may have been set after construction) and its
    chain cut: no ``__cause__``, no ``__context__``. Raise the result outside any ``except`` block, or
    Python attaches the exception being handled as ``__context__`` once more."""
    error.message = mask(error.message)
    error.args = (error.message,)
    error.request_id = None if error.request_id is None else mask(error.request_id)
    error.code = None if error.code is None else mask(error.code)
    error.__cause__ = None
    error.__context__ = None
    error.__suppress_context__ = True
    return error


def seal_errors(method: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """Decorate an adapter's coroutine method so every :class:`LLMError` it raises leaves
    :func:`sealed` (other exceptions are bugs and propagate untouched)."""

    @functools.wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except LLMError as error:
            failure = error
        raise sealed(failure)

    return call


def seal_stream_errors(method: Callable[P, AsyncIterator[T]]) -> Callable[P, AsyncIterator[T]]:
    """:func:`seal_errors` for an adapter's ``stream`` (an async generator method). The inner
    generator is closed on every exit, so its ``finally`` blocks (closing the SDK stream) run at once."""

    @functools.wraps(method)
    async def stream(*args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
        events = method(*args, **kwargs)
        failure: LLMError | None = None
        try:
            async for event in events:
                yield event
        except LLMError as error:
            failure = error
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        if failure is not None:
            raise sealed(failure)

    return stream


_CONTEXT_LENGTH_CODES = frozenset({"context_length_exceeded", "request_too_large"})
_CONTEXT_LENGTH_TEXT = re.compile(
    r"context[ _-]length|context window|maximum context|prompt is too long|too many (?:input )?tokens"
    r"|input token count .*exceeds|exceeds the maximum number of tokens",
    re.IGNORECASE,
)


def is_context_length_error(error: LLMError) -> bool:
    """Whether the provider refused the request because the prompt is longer than the model's window.

    Each provider says it its own way: OpenAI with the code ``context_length_exceeded`` (Responses and
    Chat Completions; OpenAI-compatible servers as "maximum context length"), Anthropic with HTTP 413
    ``request_too_large`` or a 400 "prompt is too long: N tokens > M maximum", Gemini with a 400
    "The input token count (N) exceeds the maximum number of tokens allowed (M)". Only refusals
    (HTTP 400/413, or an in-stream error without a status) qualify: the loop compacts the history and
    retries once (:mod:`kanawa.loop.compaction`)."""
    if error.retryable:
        return False
    if error.status_code not in (None, 400, 413):
        return False
    if error.code is not None and error.code.lower() in _CONTEXT_LENGTH_CODES:
        return True
    return error.status_code == 413 or bool(_CONTEXT_LENGTH_TEXT.search(error.message))
