"""Failures as Dify invoke errors (seed 001 §3.8 "API 例外を invoke error へ変換").

kanawa's transport already maps ``openai.APIStatusError`` / ``APIConnectionError`` / ``openai.APIError``
to its own :class:`~kanawa.llm.errors.LLMError` family (status, code, request id, keys masked); this
table maps that family onto Dify's, and keeps the raw SDK exceptions for anything that escapes first.
The SDK's ``_transform_invoke_error`` uses it; :func:`to_invoke_error` applies it to errors raised while
a stream is already being read (the SDK does not wrap those).
"""

from __future__ import annotations

import openai
from dify_plugin.errors.model import (
    InvokeAuthorizationError,
    InvokeBadRequestError,
    InvokeConnectionError,
    InvokeError,
    InvokeRateLimitError,
    InvokeServerUnavailableError,
)

from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
)

__all__ = ["INVOKE_ERROR_MAPPING", "to_invoke_error"]

INVOKE_ERROR_MAPPING: dict[type[InvokeError], list[type[Exception]]] = {
    InvokeConnectionError: [LLMConnectionError, LLMTimeoutError, openai.APIConnectionError],
    InvokeServerUnavailableError: [openai.InternalServerError],
    InvokeRateLimitError: [LLMRateLimitError, openai.RateLimitError],
    InvokeAuthorizationError: [LLMAuthError, openai.AuthenticationError, openai.PermissionDeniedError],
    InvokeBadRequestError: [
        LLMBadRequestError,
        ValueError,
        openai.BadRequestError,
        openai.NotFoundError,
        openai.UnprocessableEntityError,
        openai.ConflictError,
    ],
    InvokeError: [LLMError, openai.APIError],
}


def to_invoke_error(error: Exception) -> InvokeError:
    """The Dify invoke error for ``error``; its description is the (already masked) message."""
    if isinstance(error, InvokeError):
        return error
    for invoke_error, sources in INVOKE_ERROR_MAPPING.items():
        if isinstance(error, tuple(sources)):
            return invoke_error(description=f"[openai_gpt5] {invoke_error.description}: {error}")
    return InvokeError(description=f"[openai_gpt5] Error: {type(error).__name__}")
