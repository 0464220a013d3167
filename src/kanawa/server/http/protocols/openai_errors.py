"""Errors on the OpenAI-compatible routes in OpenAI's shape: ``{"error": {message, type, param, code}}``.

An OpenAI client reads a failed request's reason from that body (the Python SDK raises
``NotFoundError``, ``RateLimitError`` … with ``.body["error"]``); kanawa's other routes answer
``{"detail": …}``. The routes here answer :class:`OpenAIError` themselves; what is refused before a
route runs — no API key (401), the rate limit (429), a body over the size limit (413), a request
that fails validation (422) — comes from shared code in kanawa's shape, so :class:`OpenAIErrorShape`,
an ASGI middleware scoped to :data:`OPENAI_PATHS`, rewrites those bodies (status and headers such as
``Retry-After`` and ``WWW-Authenticate`` kept).

======  ==========================  ==============================
status  ``type``                    ``code``
======  ==========================  ==============================
400     ``invalid_request_error``   ``invalid_request``
401     ``invalid_request_error``   ``invalid_api_key``
403     ``permission_error``        ``forbidden``
404     ``invalid_request_error``   ``model_not_found`` / ``not_found``
409     ``invalid_request_error``   ``conflict``
413     ``invalid_request_error``   ``request_too_large``
422     ``invalid_request_error``   ``invalid_request``
429     ``requests``                ``rate_limit_exceeded``
5xx     ``server_error``            ``server_error``
======  ==========================  ==============================

A *run* that fails after a non-streaming request was accepted is answered by :func:`run_failure`,
with the status that says whose the failure is (a stream has sent its 200 already: it ends with
its protocol's error event instead):

======  ==========================  ==========================  =======================================
status  ``type``                    ``code``                    the run
======  ==========================  ==========================  =======================================
400     ``invalid_request_error``   ``guardrail_violation``     stopped by a guardrail
                                                                (``GuardrailViolation``)
409     ``invalid_request_error``   ``run_cancelled``           cancelled by another request (Chat)
409     ``invalid_request_error``   ``approval_required``       waits for a person's approval (Chat)
429     ``insufficient_quota``      ``insufficient_quota``      the tenant's budget is spent
                                                                (``BudgetExceeded``)
502     ``server_error``            ``upstream_error``          the model provider failed
                                                                (``LLMCallFailed``, ``LLM…Error``)
500     ``server_error``            ``server_error``            anything else (``MaxStepsExceeded``,
                                                                a tool that failed, an internal error)
======  ==========================  ==========================  =======================================

Each carries ``x-should-retry: false`` (the official SDKs would otherwise send a 429 or 5xx again, and
each retry would be a new run) and the run's id in ``X-Run-Id``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any, Final

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kanawa.server.http.protocols.errors import ProtocolError

OPENAI_PATHS: Final = ("/v1/responses", "/v1/chat/completions", "/v1/models")
"""Path prefixes whose errors are in OpenAI's shape."""

_KINDS: Final[dict[int, tuple[str, str]]] = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("invalid_request_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    409: ("invalid_request_error", "conflict"),
    413: ("invalid_request_error", "request_too_large"),
    422: ("invalid_request_error", "invalid_request"),
    429: ("requests", "rate_limit_exceeded"),
}
MAX_ERROR_BODY: Final = 64 * 1024
"""Error bodies longer than this are passed on as they are (none of kanawa's is near it)."""


def error_body(
    status: int, message: str, *, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    kind, default_code = _KINDS.get(status, ("server_error", "server_error"))
    return {"error": {"message": message, "type": kind, "param": param, "code": code or default_code}}


class OpenAIError(ProtocolError):
    """A refusal an OpenAI route raises itself (see the module's table); like any
    :class:`~kanawa.server.http.protocols.errors.ProtocolError`, answered by :func:`openai_response`."""

    def response(self) -> JSONResponse:
        return openai_response(self)


def openai_response(error: ProtocolError) -> JSONResponse:
    """A neutral protocol error (:mod:`kanawa.server.http.protocols.errors`) in OpenAI's shape."""
    return JSONResponse(
        error_body(error.status, error.message, code=error.code, param=error.param),
        status_code=error.status,
        headers=error.headers,
    )


_RUN_FAILURES: Final[dict[str, tuple[int, str, str]]] = {
    "GuardrailViolation": (400, "invalid_request_error", "guardrail_violation"),
    "BudgetExceeded": (429, "insufficient_quota", "insufficient_quota"),
    "LLMCallFailed": (502, "server_error", "upstream_error"),
}
"""A run's ``error`` chunk code → the status, type and code of the answer (module docstring)."""
_RUN_ENDS: Final[dict[str, tuple[int, str, str]]] = {
    "cancelled": (409, "invalid_request_error", "run_cancelled"),
    "awaiting_approval": (409, "invalid_request_error", "approval_required"),
}


def run_failure(status: str, error: dict[str, Any] | None, *, run_id: str) -> JSONResponse:
    """The answer to a non-streaming request whose run ended ``status`` without an answer, from the
    run's ``error`` chunk data (``{"code", "message"}``; ``None``: it had none) — module docstring."""
    code = str(error.get("code")) if error else ""
    if error:
        message = f"{code}: {error.get('message')}"
    else:
        message = {
            "cancelled": "the run was cancelled",
            "awaiting_approval": "the run waits for a person's approval (POST /v1/runs/{id}/approvals)",
        }.get(status, "the run failed")
    kind = _RUN_ENDS.get(status) if not error else None
    if kind is None:
        upstream = code.startswith("LLM") and code.endswith("Error")
        kind = _RUN_FAILURES.get(code) or (_RUN_FAILURES["LLMCallFailed"] if upstream else None)
    http, kind_type, kind_code = kind or (500, "server_error", "server_error")
    return JSONResponse(
        {"error": {"message": message, "type": kind_type, "param": None, "code": kind_code}},
        status_code=http,
        headers={"X-Run-Id": run_id, "x-should-retry": "false"},
    )


def _message(detail: object) -> str:
    """kanawa's ``detail`` (a text, or FastAPI's list of validation problems) as one sentence."""
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        problems = []
        for item in detail[:5]:
            if isinstance(item, dict):
                where = ".".join(str(part) for part in item.get("loc", ()) if part != "body")
                problems.append(f"{where}: {item.get('msg', '')}" if where else str(item.get("msg", "")))
        return "invalid request: " + "; ".join(problems) if problems else "invalid request"
    return "request refused"


def openai_shaped(status: int, body: bytes) -> bytes | None:
    """``body`` rewritten in OpenAI's shape; ``None`` when it already is one or is not kanawa's."""
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(parsed, dict) or "error" in parsed or "detail" not in parsed:
        return None
    return json.dumps(error_body(status, _message(parsed["detail"]))).encode()


class OpenAIErrorShape:
    """Rewrites the JSON error responses of :data:`OPENAI_PATHS` into OpenAI's shape (module docstring).

    Only a response that starts with a status of 400 or more and a JSON content type is held back,
    and only until its body is complete; once a response's headers have gone out its body messages
    (a stream's events) go to the server's ``send`` itself, not through a wrapper."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # not a coroutine function: a request it passes on (a kanawa SSE stream) holds no frame of it
        # for as long as its response lasts
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(OPENAI_PATHS):
            return self.app(scope, receive, send)
        return self._shaped(scope, receive, send)

    async def _shaped(self, scope: Scope, receive: Receive, send: Send) -> None:
        held: Message | None = None
        parts: list[bytes] = []

        def shaping_send(message: Message) -> Awaitable[None]:
            if held is None and message["type"] != "http.response.start":
                # a response under way, not held (a stream's events): the server's own send, no
                # wrapper around it — a stream at the head of its run is sent from the writer's task
                return send(message)
            return shape(message)

        async def shape(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = dict(message.get("headers", ()))
                if status >= 400 and headers.get(b"content-type", b"").startswith(b"application/json"):
                    held = message
                    return
                await send(message)
                return
            if held is None or message["type"] != "http.response.body":
                await send(message)
                return
            parts.append(message.get("body", b""))
            if message.get("more_body", False) and sum(map(len, parts)) <= MAX_ERROR_BODY:
                return
            body = b"".join(parts)
            shaped = openai_shaped(int(held["status"]), body) if not message.get("more_body") else None
            final = shaped if shaped is not None else body
            sized = [
                (name, str(len(final)).encode() if name == b"content-length" else value)
                for name, value in held.get("headers", ())
            ]
            await send({**held, "headers": sized})
            await send(
                {"type": "http.response.body", "body": final, "more_body": bool(message.get("more_body"))}
            )
            held = None
            parts.clear()

        await self.app(scope, receive, shaping_send)


__all__ = [
    "OPENAI_PATHS",
    "OpenAIError",
    "OpenAIErrorShape",
    "error_body",
    "openai_response",
    "openai_shaped",
    "run_failure",
]
