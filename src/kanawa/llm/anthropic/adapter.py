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

import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Unpack

import anthropic
import anyio
import httpx2
from anthropic import AsyncAnthropic, AsyncAnthropicBedrock, AsyncAnthropicVertex, AsyncStream

from kanawa.llm.anthropic.payload import ThinkingMode, build_request
from kanawa.llm.anthropic.response import StreamAssembler, parse_message
from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    error_for_status,
    parse_retry_after,
)
from kanawa.llm.provider_adapter import Assembly, Call, ChatRequest, ConnectionOptions, ProviderAdapter
from kanawa.llm.stream_parts import malformed
from kanawa.secrets import guard_credentials
from kanawa.types import LLMResponse, StreamEvent

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

AnthropicClient = AsyncAnthropic | AsyncAnthropicBedrock | AsyncAnthropicVertex
"""The SDK's clients for Anthropic's own API, Amazon Bedrock and Google Vertex AI: one Messages API."""


class AnthropicOptions(ConnectionOptions, total=False):
    """The connection options plus Claude's own: ``default_max_tokens`` (the ``max_tokens`` sent when
    the settings give none), ``thinking_mode`` (budget or adaptive extended thinking) and
    ``default_headers`` (sent with every request; credential-named ones are masked like keys)."""

    default_max_tokens: int | None
    thinking_mode: ThinkingMode | None
    default_headers: Mapping[str, str] | None


def adapter_options(options: AnthropicOptions) -> AnthropicOptions:
    """What :class:`AnthropicAdapter` itself needs once a cloud adapter has built its client."""
    return AnthropicOptions(
        settings=options.get("settings"),
        timeout=options.get("timeout"),
        default_max_tokens=options.get("default_max_tokens"),
        thinking_mode=options.get("thinking_mode"),
    )


class AnthropicAdapter(ProviderAdapter[dict[str, Any], AsyncStream[Any]]):
    """An Anthropic model (``anthropic:<model>``) as an :class:`~kanawa.llm.LLMAdapter`.

    ``default_max_tokens`` overrides the per-model ``max_tokens`` default; ``thinking_mode`` forces
    budget or adaptive extended thinking (default: adaptive only for the models that prefer it).
    """

    provider = PROVIDER
    NAME_PREFIXES: ClassVar[tuple[str, ...]] = _NAME_PREFIXES
    SDK_ERRORS: ClassVar[tuple[type[BaseException], ...]] = _SDK_ERRORS
    STREAM_ERROR_STATUS: ClassVar[Mapping[str, int]] = _ERROR_STATUS

    def __init__(
        self,
        model: str,
        *,
        client: AnthropicClient | None = None,
        **options: Unpack[AnthropicOptions],
    ) -> None:
        super().__init__(model, options)
        self._configure(options.get("default_max_tokens"), options.get("thinking_mode"))
        default_headers = options.get("default_headers")
        if client is not None:
            self._client: AnthropicClient = client
            guard_credentials(getattr(client, "api_key", None), getattr(client, "auth_token", None))
            return
        key = options.get("api_key") or os.environ.get(ENV_KEY)
        if not key:
            raise LLMAuthError(
                f"{ENV_KEY} is not set: pass api_key=... or export {ENV_KEY}", provider=PROVIDER, model=model
            )
        self._client = AsyncAnthropic(
            api_key=key,
            base_url=options.get("base_url"),
            timeout=self._request_timeout if self._request_timeout is not None else 600.0,
            max_retries=0,
            default_headers=default_headers,
            open_telemetry=False,
        )
        self._close_owned = self._client.close
        guard_credentials(key, headers=default_headers)

    def _configure(self, default_max_tokens: int | None, thinking_mode: ThinkingMode | None) -> None:
        """The per-model ``max_tokens`` default and thinking mode (shared with the cloud adapters)."""
        normalized = self.normalize_model_name()
        self._default_max_tokens = default_max_tokens or next(
            (n for prefix, n in _MODEL_MAX_TOKENS if normalized.startswith(prefix)), DEFAULT_MAX_TOKENS
        )
        self._thinking_mode: ThinkingMode = thinking_mode or (
            "adaptive" if normalized.startswith(_ADAPTIVE_THINKING_MODELS) else "budget"
        )

    # ------------------------------------------------------------------------------------ requests

    def _build(self, request: ChatRequest) -> dict[str, Any]:
        return build_request(
            self._model,
            **request.arguments(),
            default_max_tokens=self._default_max_tokens,
            thinking_mode=self._thinking_mode,
        )

    async def _create(self, call: Call[dict[str, Any]], *, stream: bool) -> Any:
        """POST the body through the SDK (required fields by name, the rest as ``extra_body``)."""
        body = call.body
        rest = {k: v for k, v in body.items() if k not in ("model", "messages", "max_tokens", "stream")}
        options: dict[str, Any] = {} if call.timeout is None else {"timeout": call.timeout}
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

    async def _send(self, call: Call[dict[str, Any]]) -> Any:
        return await self._create(call, stream=False)

    def _parse(self, raw: Any, call: Call[dict[str, Any]]) -> LLMResponse:
        # The SDK hands back what it could not build a Message from (a list, a string) as it came.
        return parse_message(raw.to_dict(mode="json") if hasattr(raw, "to_dict") else raw)

    async def _open(self, call: Call[dict[str, Any]]) -> AsyncStream[Any]:
        stream: AsyncStream[Any] = await self._create(call, stream=True)
        return stream

    def _items(self, handle: AsyncStream[Any]) -> AsyncIterator[Any]:
        """The raw events, decoded by the client's own decoder: SSE from Anthropic and Vertex AI, the
        AWS event stream from Bedrock — each as the same ``(event, data)`` pairs."""
        return handle._iter_events().__aiter__()

    async def _close(self, handle: AsyncStream[Any]) -> None:
        await handle.close()

    def _assembly(self, call: Call[dict[str, Any]], handle: AsyncStream[Any]) -> Assembly:
        assembler = StreamAssembler()

        def feed(sse: Any) -> list[StreamEvent]:
            if sse.event == "ping" or not sse.data:
                return []
            data = _json_object(sse.data)
            name = sse.event or str(data.get("type", ""))
            if name == "error":
                raise self._stream_error(data)
            return assembler.feed(name, data)

        return Assembly(feed=feed, finish=assembler.finish)

    # -------------------------------------------------------------------------------------- errors

    def _stream_error(self, data: Mapping[str, Any]) -> LLMError:
        """An in-stream ``error`` event → the error the same fault raises outside a stream."""
        error = data.get("error")
        error = error if isinstance(error, Mapping) else {}
        kind = str(error.get("type") or "api_error")
        status = self._stream_error_status(kind)
        return error_for_status(
            status,
            _describe(kind, error.get("message")),
            provider=self.provider,
            model=self._model,
            code=kind,
        )

    def _stream_error_status(self, kind: str) -> int:
        return self.STREAM_ERROR_STATUS.get(kind, 500)

    def _map_error(
        self, exc: BaseException, call: Call[dict[str, Any]], handle: AsyncStream[Any] | None
    ) -> LLMError:
        """Any SDK/transport failure → the matching :class:`LLMError` (never echoing request content)."""
        model, provider = self._model, self.provider
        if isinstance(exc, LLMError):
            return self._filled(exc)
        if isinstance(exc, TimeoutError | anthropic.APITimeoutError | httpx2.TimeoutException):
            return LLMTimeoutError("request timed out", provider=provider, model=model)
        if isinstance(exc, anthropic.APIStatusError):
            body_error = _body_error(exc.body)
            kind = str(body_error.get("type") or body_error.get("status") or "") or None
            return error_for_status(
                exc.status_code,
                _describe(kind or "http_error", body_error.get("message")),
                provider=provider,
                model=model,
                retry_after=parse_retry_after(exc.response.headers),
                request_id=exc.request_id,
                code=kind,
            )
        if isinstance(exc, anthropic.APIConnectionError | httpx2.RequestError | OSError | anyio.EndOfStream):
            return LLMConnectionError(
                f"connection failed: {type(exc).__name__}", provider=provider, model=model
            )
        if isinstance(exc, json.JSONDecodeError | anthropic.APIResponseValidationError):
            return self._filled(
                malformed("Anthropic response", f"undecodable body ({type(exc).__name__})", provider=PROVIDER)
            )
        return LLMError(f"unexpected {type(exc).__name__}", provider=provider, model=model)


def _json_object(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise malformed("Anthropic response", "event data is not JSON", provider=PROVIDER) from None
    if not isinstance(data, dict):
        raise malformed("Anthropic response", "event data is not a JSON object", provider=PROVIDER)
    return data


def _body_error(body: object) -> Mapping[str, Any]:
    """The error object of a failed request: ``{"error": {...}}`` (Anthropic, Vertex AI) or the body
    itself when it carries only a ``message`` (Amazon Bedrock)."""
    if not isinstance(body, Mapping):
        return {}
    error = body.get("error")
    if isinstance(error, Mapping):
        return error
    return body if isinstance(body.get("message"), str) else {}


def _describe(kind: str, message: object) -> str:
    """``<type>: <excerpt>`` (keys in the excerpt are masked by :class:`LLMError`)."""
    text = " ".join(str(message).split())[:_EXCERPT] if message else ""
    return f"{kind}: {text}" if text else kind
