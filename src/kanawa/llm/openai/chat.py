"""``OpenAIChatAdapter``: Chat Completions on any OpenAI-compatible server (seed 002 §3-3).

For vLLM, Ollama, llama.cpp server, LM Studio — and OpenAI itself. Model string
``openai-chat:<model>@<base_url>`` (``resolve_model`` passes ``base_url``; it is used exactly as given,
e.g. ``http://localhost:11434/v1``; without one the SDK uses ``OPENAI_BASE_URL`` or api.openai.com).
Request building lives in :mod:`kanawa.llm.openai.chat_payload`, answer parsing in
:mod:`kanawa.llm.openai.chat_response`; the client and error mapping are shared with the Responses
adapter through :mod:`kanawa.llm.openai.common`.

Contract:

* The key is optional: ``api_key``, else ``KANAWA_CHAT_API_KEY`` when set, else — only when the
  server is OpenAI's own (no ``base_url``, or host ``api.openai.com``) — ``OPENAI_API_KEY``, else the
  placeholder ``sk-no-key-required`` (keyless local servers ignore it; the SDK will not run without
  one). An OpenAI key in the environment is never sent to a third-party or local server by accident.
* SDK retries are off (``max_retries=0``); :mod:`kanawa.llm.retry` decides.
* ``timeout`` (or ``settings.timeout``) bounds the whole call, the stream included.
* Only :class:`~kanawa.llm.errors.LLMError` subclasses escape, via ``map_openai_error`` (statuses,
  ``Retry-After``, request id, in-stream error payloads, disconnects, malformed chunks), sealed by
  :func:`~kanawa.llm.errors.seal_errors`: the key (and credential-named ``default_headers``) are
  masked by :mod:`kanawa.secrets` wherever a server echoes them, and no SDK exception is chained.
* Options: ``system_role="developer"`` for OpenAI reasoning models, ``max_tokens_field=
  "max_completion_tokens"`` where ``max_tokens`` is refused, ``include_usage=False`` for servers that
  reject ``stream_options``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Unpack
from urllib.parse import urlsplit

import openai
from openai._types import RequestOptions

from kanawa.llm.errors import LLMConnectionError, LLMError
from kanawa.llm.openai.chat_payload import MaxTokensField, SystemRole, build_request
from kanawa.llm.openai.chat_response import PROVIDER, ChunkAssembler, parse_completion
from kanawa.llm.openai.common import KEYLESS_PLACEHOLDER, MAPPED_EXCEPTIONS, build_client, map_openai_error
from kanawa.llm.provider_adapter import Assembly, Call, ChatRequest, ConnectionOptions, ProviderAdapter
from kanawa.secrets import guard_credentials
from kanawa.types import LLMResponse, StreamEvent


def chat_api_key(base_url: str | None) -> str | None:
    """The key to use when none was passed: ``KANAWA_CHAT_API_KEY``, then ``OPENAI_API_KEY`` for
    OpenAI's own host only, else ``None`` (the keyless placeholder)."""
    explicit = os.environ.get("KANAWA_CHAT_API_KEY")
    if explicit:
        return explicit
    host = urlsplit(base_url).hostname if base_url else "api.openai.com"
    if host == "api.openai.com":
        return os.environ.get("OPENAI_API_KEY") or None
    return None


class OpenAIChatAdapter(ProviderAdapter[dict[str, Any], openai.AsyncStream[object]]):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint, as an ``LLMAdapter``."""

    provider = PROVIDER
    NAME_PREFIXES: ClassVar[tuple[str, ...]] = ("openai-chat:", "openai:", "openai/")
    SDK_ERRORS = MAPPED_EXCEPTIONS

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        system_role: SystemRole = "system",
        max_tokens_field: MaxTokensField = "max_tokens",
        include_usage: bool = True,
        default_headers: Mapping[str, str] | None = None,
        **options: Unpack[ConnectionOptions],
    ) -> None:
        super().__init__(model, options)
        base_url = options.get("base_url")
        self._system_role: SystemRole = system_role
        self._max_tokens_field: MaxTokensField = max_tokens_field
        self._include_usage = include_usage
        self._client = client or build_client(
            api_key=options.get("api_key") or chat_api_key(base_url),
            base_url=base_url,
            timeout=self._request_timeout,
            require_key=False,
            default_headers=default_headers,
        )
        if client is None:
            self._close_owned = self._client.close
        key = self._client.api_key
        guard_credentials(key if key != KEYLESS_PLACEHOLDER else None, headers=default_headers)

    # ------------------------------------------------------------------------------------ requests

    def _build(self, request: ChatRequest) -> dict[str, Any]:
        return build_request(
            self._model,
            **request.arguments(),
            stream=request.stream,
            system_role=self._system_role,
            max_tokens_field=self._max_tokens_field,
            include_usage=self._include_usage,
        )

    def _options(self, call: Call[dict[str, Any]]) -> RequestOptions:
        return {} if call.timeout is None else {"timeout": call.timeout}

    # Answers come back as plain JSON mappings rather than typed SDK models: the assembler reads
    # mappings anyway (servers differ in what they send), and skipping a pydantic model per chunk
    # keeps the per-event cost below the bare SDK's (``bench/stream_passthrough.py``).

    async def _send(self, call: Call[dict[str, Any]]) -> object:
        return await self._client.post(
            "/chat/completions", cast_to=object, body=call.body, options=self._options(call)
        )

    def _parse(self, raw: object, call: Call[dict[str, Any]]) -> LLMResponse:
        if not isinstance(raw, Mapping):
            raise LLMConnectionError("malformed response body", provider=self.provider, model=self._model)
        return parse_completion(raw)

    async def _open(self, call: Call[dict[str, Any]]) -> openai.AsyncStream[object]:
        return await self._client.post(
            "/chat/completions",
            cast_to=object,
            body=call.body,
            options=self._options(call),
            stream=True,
            stream_cls=openai.AsyncStream[object],
        )

    def _items(self, handle: openai.AsyncStream[object]) -> AsyncIterator[object]:
        return handle.__aiter__()

    async def _close(self, handle: openai.AsyncStream[object]) -> None:
        await handle.close()

    def _assembly(self, call: Call[dict[str, Any]], handle: openai.AsyncStream[object]) -> Assembly:
        assembler = ChunkAssembler()

        def feed(chunk: object) -> list[StreamEvent]:
            if not isinstance(chunk, Mapping):
                raise LLMConnectionError("malformed stream event", provider=self.provider, model=self._model)
            return assembler.feed(chunk)

        return Assembly(feed=feed, finish=assembler.finish)

    def _map_error(
        self, exc: BaseException, call: Call[dict[str, Any]], handle: openai.AsyncStream[object] | None
    ) -> LLMError:
        return map_openai_error(exc, provider=self.provider, model=self._model, streaming=handle is not None)
