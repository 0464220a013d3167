"""``AnthropicAdapter``: the Anthropic Messages API behind :class:`~kanawa.llm.LLMAdapter` (seed 002 §3-3).

Request building lives in :mod:`kanawa.llm.anthropic.payload`, answer parsing (whole and streamed) in
:mod:`kanawa.llm.anthropic.response`; this module owns the client, timeouts and error mapping.

Contract:

* The key comes from ``api_key`` or ``ANTHROPIC_API_KEY``; without one the constructor raises
  :class:`LLMAuthError` at once. Pass ``client=`` to use a preconfigured ``AsyncAnthropic``.
* The SDK never retries (``max_retries=0``): :mod:`kanawa.llm.retry` decides. The SDK's own
  OpenTelemetry spans are off: kanawa's tracer emits the ``chat {model}`` span.
* ``timeout`` (or ``settings.timeout``) bounds the whole call, the stream included.
* Only :class:`LLMError` subclasses escape. HTTP statuses map through :func:`error_for_status` with
  ``Retry-After`` / ``retry-after-ms`` in ``retry_after`` seconds and the ``request-id`` header; an
  in-stream ``error`` event maps by its error type (``overloaded_error`` → 529 →
  :class:`LLMConnectionError`, retryable); a dropped connection, a malformed event or a stream that
  ends before ``message_stop`` → :class:`LLMConnectionError`. Messages carry the provider's error type
  and a short excerpt of its message, never request content; keys a server echoes (in any status) are
  masked by :mod:`kanawa.secrets`, and errors leave sealed (:func:`~kanawa.llm.errors.seal_errors`: no
  SDK exception in the chain).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anthropic
import anyio
import httpx2
from anthropic import AsyncAnthropic, AsyncStream

from kanawa.llm.anthropic.payload import ThinkingMode, build_request
from kanawa.llm.anthropic.response import StreamAssembler, malformed, parse_message
from kanawa.llm.base import ToolLike, canonical_model_name, tool_specs
from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    error_for_status,
    parse_retry_after,
    seal_errors,
    seal_stream_errors,
)
from kanawa.llm.lifecycle import ClosableAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.secrets import guard_credentials
from kanawa.types import LLMResponse, Message, OutputSchema, ResponseCompleted, StreamEvent

PROVIDER = "anthropic"
ENV_KEY = "ANTHROPIC_API_KEY"
DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` when ``settings.max_output_tokens`` is unset (the API requires one)."""

_MODEL_MAX_TOKENS: tuple[tuple[str, int], ...] = (("claude-3-haiku", 4096), ("claude-3-opus", 4096))
"""Model-name prefixes whose output ceiling is below :data:`DEFAULT_MAX_TOKENS`."""

_ADAPTIVE_THINKING_MODELS: tuple[str, ...] = ("claude-opus-4-6", "claude-mythos")
"""Model-name prefixes for which the SDK deprecates budget thinking in favour of ``adaptive``."""

_ERROR_STATUS: Mapping[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""In-stream ``error`` event types → the HTTP status the same fault has outside a stream."""

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
"""The beta a request carrying ``context_management`` (old tool results cleared by the server) needs."""

_EXCERPT = 300

_SDK_ERRORS: tuple[type[BaseException], ...] = (
    anthropic.AnthropicError,
    httpx2.HTTPError,
    OSError,
    TimeoutError,
    anyio.EndOfStream,
    anyio.BrokenResourceError,
    json.JSONDecodeError,
)
"""What the SDK and its transport raise for provider faults; anything else is a bug and propagates."""


_NAME_PREFIXES = ("anthropic:", "anthropic/")


class AnthropicAdapter(ClosableAdapter):
    """An Anthropic model (``anthropic:<model>``) as an :class:`~kanawa.llm.LLMAdapter`.

    ``default_max_tokens`` overrides the per-model ``max_tokens`` default; ``thinking_mode`` forces
    budget or adaptive extended thinking (default: adaptive only for the models that prefer it).
    """

    provider = PROVIDER

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        settings: ModelSettings | None = None,
        timeout: float | None = None,
        client: AsyncAnthropic | None = None,
        default_max_tokens: int | None = None,
        thinking_mode: ThinkingMode | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self._model = model
        self._settings = settings or ModelSettings()
        self._request_timeout = timeout
        normalized = self.normalize_model_name(model)
        self._default_max_tokens = default_max_tokens or next(
            (n for prefix, n in _MODEL_MAX_TOKENS if normalized.startswith(prefix)), DEFAULT_MAX_TOKENS
        )
        self._thinking_mode: ThinkingMode = thinking_mode or (
            "adaptive" if normalized.startswith(_ADAPTIVE_THINKING_MODELS) else "budget"
        )
        self._owns_client = client is None
        if client is not None:
            self._client = client
            guard_credentials(client.api_key, client.auth_token)
            return
        key = api_key or os.environ.get(ENV_KEY)
        if not key:
            raise LLMAuthError(
                f"{ENV_KEY} is not set: pass api_key=... or export {ENV_KEY}", provider=PROVIDER, model=model
            )
        self._client = AsyncAnthropic(
            api_key=key,
            base_url=base_url,
            timeout=timeout if timeout is not None else 600.0,
            max_retries=0,
            default_headers=default_headers,
            open_telemetry=False,
        )
        guard_credentials(key, headers=default_headers)

    async def aclose(self) -> None:
        """Close the HTTP connections of a client this adapter built (a given ``client=`` is left open)."""
        if self._owns_client:
            await self._client.close()

    @property
    def model(self) -> str:
        return self._model

    # ------------------------------------------------------------------------------------ requests

    def _body(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolLike],
        settings: ModelSettings,
        response_schema: OutputSchema | None,
    ) -> dict[str, Any]:
        return build_request(
            self._model,
            messages,
            tools=tool_specs(tools),
            settings=settings,
            response_schema=response_schema,
            default_max_tokens=self._default_max_tokens,
            thinking_mode=self._thinking_mode,
        )

    def _timeout(self, settings: ModelSettings) -> float | None:
        return settings.timeout if settings.timeout is not None else self._request_timeout

    async def _send(self, body: dict[str, Any], *, stream: bool, request_timeout: float | None) -> Any:
        """POST the body through the SDK (required fields by name, the rest as ``extra_body``)."""
        rest = {k: v for k, v in body.items() if k not in ("model", "messages", "max_tokens", "stream")}
        options: dict[str, Any] = {} if request_timeout is None else {"timeout": request_timeout}
        if "context_management" in rest:  # server-side context editing (NativeCompaction) is a beta
            options["extra_headers"] = {"anthropic-beta": CONTEXT_MANAGEMENT_BETA}
        try:
            return await self._client.messages.create(
                model=body["model"],
                messages=body["messages"],
                max_tokens=body["max_tokens"],
                stream=stream,
                extra_body=rest,
                **options,
            )
        except json.JSONDecodeError:
            raise
        except (ValueError, TypeError) as exc:  # the SDK's own checks, before anything is sent
            raise LLMBadRequestError(
                f"request refused by the client: {exc}", provider=PROVIDER, model=self._model
            ) from None

    @seal_errors
    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        effective = self._settings.merged(settings)
        body = self._body(messages, tools, effective, response_schema)
        timeout = self._timeout(effective)
        try:
            async with asyncio.timeout(timeout):
                message = await self._send(body, stream=False, request_timeout=timeout)
        except _SDK_ERRORS as exc:
            raise self._map_error(exc) from None
        # The SDK hands back what it could not build a Message from (a list, a string) as it came.
        return parse_message(message.to_dict(mode="json") if hasattr(message, "to_dict") else message)

    @seal_stream_errors
    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        effective = self._settings.merged(settings)
        body = self._body(messages, tools, effective, response_schema)
        timeout = self._timeout(effective)
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        assembler = StreamAssembler()
        sdk_stream: AsyncStream[Any] | None = None
        try:
            async with asyncio.timeout_at(deadline):
                sdk_stream = await self._send(body, stream=True, request_timeout=timeout)
            assert sdk_stream is not None
            events = AsyncStream.raw_events(sdk_stream.response).__aiter__()
            while True:
                async with asyncio.timeout_at(deadline):
                    try:
                        sse = await events.__anext__()
                    except StopAsyncIteration:
                        break
                if sse.event == "ping" or not sse.data:
                    continue
                data = _json_object(sse.data)
                name = sse.event or str(data.get("type", ""))
                if name == "error":
                    raise self._stream_error(data)
                for event in assembler.feed(name, data):
                    yield event
            response = assembler.finish()
        except LLMError as exc:
            _fill(exc, self._model)
            raise
        except _SDK_ERRORS as exc:
            raise self._map_error(exc) from None
        finally:
            if sdk_stream is not None:
                await sdk_stream.close()
        yield ResponseCompleted(response)

    # -------------------------------------------------------------------------------------- errors

    def _stream_error(self, data: Mapping[str, Any]) -> LLMError:
        """An in-stream ``error`` event → the error the same fault raises outside a stream."""
        error = data.get("error")
        error = error if isinstance(error, Mapping) else {}
        kind = str(error.get("type") or "api_error")
        status = _ERROR_STATUS.get(kind, 500)
        return error_for_status(
            status,
            _describe(kind, error.get("message")),
            provider=PROVIDER,
            model=self._model,
            code=kind,
        )

    def _map_error(self, exc: BaseException) -> LLMError:
        """Any SDK/transport failure → the matching :class:`LLMError` (never echoing request content)."""
        model = self._model
        if isinstance(exc, LLMError):
            return _fill(exc, model)
        if isinstance(exc, TimeoutError | anthropic.APITimeoutError | httpx2.TimeoutException):
            return LLMTimeoutError("request timed out", provider=PROVIDER, model=model)
        if isinstance(exc, anthropic.APIStatusError):
            body_error = _body_error(exc.body)
            kind = str(body_error.get("type") or "") or None
            return error_for_status(
                exc.status_code,
                _describe(kind or "http_error", body_error.get("message")),
                provider=PROVIDER,
                model=model,
                retry_after=parse_retry_after(exc.response.headers),
                request_id=exc.request_id,
                code=kind,
            )
        if isinstance(exc, anthropic.APIConnectionError | httpx2.RequestError | OSError | anyio.EndOfStream):
            return LLMConnectionError(
                f"connection failed: {type(exc).__name__}", provider=PROVIDER, model=model
            )
        if isinstance(exc, json.JSONDecodeError | anthropic.APIResponseValidationError):
            return _fill(malformed(f"undecodable body ({type(exc).__name__})"), model)
        return LLMError(f"unexpected {type(exc).__name__}", provider=PROVIDER, model=model)

    # ------------------------------------------------------------------------------------- helpers

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        return count_message_tokens(content, model=self._model)

    def normalize_model_name(self, name: str | None = None) -> str:
        """Seed 002 §3-3: lower-case, spaces/underscores → hyphens, no provider prefix
        (``"Anthropic:Claude_3_Opus"`` → ``"claude-3-opus"``)."""
        return canonical_model_name(self._model if name is None else name, prefixes=_NAME_PREFIXES)


def _json_object(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise malformed("event data is not JSON") from None
    if not isinstance(data, dict):
        raise malformed("event data is not a JSON object")
    return data


def _body_error(body: object) -> Mapping[str, Any]:
    error = body.get("error") if isinstance(body, Mapping) else None
    return error if isinstance(error, Mapping) else {}


def _describe(kind: str, message: object) -> str:
    """``<type>: <excerpt>`` (keys in the excerpt are masked by :class:`LLMError`)."""
    text = " ".join(str(message).split())[:_EXCERPT] if message else ""
    return f"{kind}: {text}" if text else kind


def _fill(exc: LLMError, model: str) -> LLMError:
    exc.provider = exc.provider or PROVIDER
    exc.model = exc.model or model
    return exc
