"""Audit log of Responses API calls (seed 001 §3.9).

Off unless the environment variable ``OPENAI_GPT5_AUDIT_LOG`` is ``true`` (or ``1``), read at every
call so it can be switched without a restart. Each record goes to the ``kanawa.audit`` logger at INFO
as one JSON object (also attached to the ``LogRecord`` as ``kanawa_audit`` for structured handlers).

Events: ``responses_api_request``, ``responses_api_success``, ``responses_api_error``. Records are
built from an allow-list of the seed's fields — ``model, response_model, request_id,
response_format, stream, tool_count, input_message_count, status_code, code, param, error_type,
base_url_host, use_custom_base_url`` — each of them a scalar, so API keys, Authorization headers,
prompt text, schema bodies and tool arguments cannot get in: no parameter accepts them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from kanawa._logging import get_logger

if TYPE_CHECKING:
    from kanawa.llm.errors import LLMError

__all__ = [
    "AUDIT_ENV",
    "AUDIT_FIELDS",
    "AuditContext",
    "AuditEvent",
    "audit_enabled",
    "audit_error",
    "audit_failure",
    "audit_request",
    "audit_success",
    "logger",
]

AUDIT_ENV = "OPENAI_GPT5_AUDIT_LOG"

AuditEvent: TypeAlias = Literal["responses_api_request", "responses_api_success", "responses_api_error"]

AUDIT_FIELDS = (
    "model",
    "response_model",
    "request_id",
    "response_format",
    "stream",
    "tool_count",
    "input_message_count",
    "status_code",
    "code",
    "param",
    "error_type",
    "base_url_host",
    "use_custom_base_url",
)
"""Every key a record may carry besides ``event`` (seed 001 §3.9)."""

logger = get_logger("kanawa.audit")

_MAX_TEXT = 120
Scalar: TypeAlias = str | int | bool | None


def audit_enabled() -> bool:
    """Whether ``OPENAI_GPT5_AUDIT_LOG`` is ``true``/``1`` (case-insensitive) right now."""
    return os.environ.get(AUDIT_ENV, "").strip().lower() in ("true", "1")


@dataclass(frozen=True, slots=True)
class AuditContext:
    """The request-side fields, shared by the three events of one call."""

    model: str
    response_format: str
    stream: bool
    tool_count: int
    input_message_count: int
    base_url_host: str | None
    use_custom_base_url: bool


def _clean(value: Scalar) -> Scalar:
    if isinstance(value, str):
        text = value.replace("\n", " ").strip()
        return text[:_MAX_TEXT]
    return value


def _emit(event: AuditEvent, context: AuditContext, extra: dict[str, Scalar]) -> None:
    record: dict[str, Scalar] = {"event": event}
    values: dict[str, Scalar] = {
        "model": context.model,
        "response_format": context.response_format,
        "stream": context.stream,
        "tool_count": context.tool_count,
        "input_message_count": context.input_message_count,
        "base_url_host": context.base_url_host,
        "use_custom_base_url": context.use_custom_base_url,
        **extra,
    }
    for key in AUDIT_FIELDS:
        if key in values:
            record[key] = _clean(values[key])
    logger.info(json.dumps(record, ensure_ascii=False), extra={"kanawa_audit": record})


def audit_request(context: AuditContext) -> None:
    """Log ``responses_api_request`` (when enabled)."""
    if audit_enabled():
        _emit("responses_api_request", context, {})


def audit_success(context: AuditContext, *, response_model: str | None, request_id: str | None) -> None:
    """Log ``responses_api_success`` with the model that answered and the server's request id."""
    if audit_enabled():
        _emit("responses_api_success", context, {"response_model": response_model, "request_id": request_id})


def audit_error(
    context: AuditContext,
    *,
    error_type: str,
    status_code: int | None = None,
    code: str | None = None,
    param: str | None = None,
    request_id: str | None = None,
) -> None:
    """Log ``responses_api_error``: the error class, HTTP status, the server's code and param."""
    if audit_enabled():
        _emit(
            "responses_api_error",
            context,
            {
                "error_type": error_type,
                "status_code": status_code,
                "code": code,
                "param": param,
                "request_id": request_id,
            },
        )


def audit_failure(error: LLMError, context: AuditContext, *, param: str | None = None) -> None:
    """The ``error`` event for a call that failed with ``error`` (status, code, request id; never the
    message, which may quote the request)."""
    audit_error(
        context,
        error_type=type(error).__name__,
        status_code=error.status_code,
        code=error.code,
        param=param,
        request_id=error.request_id,
    )
