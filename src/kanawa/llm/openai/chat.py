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

import asyncio
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import openai
from openai._types import RequestOptions

from kanawa.llm.base import ToolLike, canonical_model_name, tool_specs
from kanawa.llm.errors import LLMConnectionError, LLMError, seal_errors, seal_stream_errors
from kanawa.llm.lifecycle import ClosableAdapter
from kanawa.llm.openai.chat_payload import MaxTokensField, SystemRole, build_request
from kanawa.llm.openai.chat_response import PROVIDER, ChunkAssembler, parse_completion
from kanawa.llm.openai.common import KEYLESS_PLACEHOLDER, MAPPED_EXCEPTIONS, build_client, map_openai_error
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.secrets import guard_credentials
from kanawa.types import LLMResponse, Message, OutputSchema, ResponseCompleted, StreamEvent


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


class OpenAIChatAdapter(ClosableAdapter):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint, as an ``LLMAdapter``."""

    provider = PROVIDER

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        settings: ModelSettings | None = None,
        timeout: float | None = None,
        client: openai.AsyncOpenAI | None = None,
        system_role: SystemRole = "system",
        max_tokens_field: MaxTokensField = "max_tokens",
        include_usage: bool = True,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self._model = model
        self._settings = settings or ModelSettings()
        self._request_timeout = timeout
        self._system_role: SystemRole = system_role
        self._max_tokens_field: MaxTokensField = max_tokens_field
        self._include_usage = include_usage
        self._owns_client = client is None
        self._client = client or build_client(
            api_key=api_key or chat_api_key(base_url),
            base_url=base_url,
            timeout=timeout,
            require_key=False,
            default_headers=default_headers,
        )
        key = self._client.api_key
        guard_credentials(key if key != KEYLESS_PLACEHOLDER else None, headers=default_headers)

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
        *,
        stream: bool,
    ) -> dict[str, Any]:
        return build_request(
            self._model,
            messages,
            tools=tool_specs(tools),
            settings=settings,
            response_schema=response_schema,
            stream=stream,
            system_role=self._system_role,
            max_tokens_field=self._max_tokens_field,
            include_usage=self._include_usage,
        )

    def _timeout(self, settings: ModelSettings) -> float | None:
        return settings.timeout if settings.timeout is not None else self._request_timeout

    async def _send(self, body: dict[str, Any], *, stream: bool, request_timeout: float | None) -> Any:
        """POST the body through the SDK's HTTP layer (auth, headers, SSE decoding, error mapping).

        Answers come back as plain JSON mappings rather than typed SDK models: the assembler reads
        mappings anyway (servers differ in what they send), and skipping a pydantic model per chunk
        keeps the per-event cost below the bare SDK's (``bench/stream_passthrough.py``)."""
        options: RequestOptions = {} if request_timeout is None else {"timeout": request_timeout}
        if stream:
            return await self._client.post(
                "/chat/completions",
                cast_to=object,
                body=body,
                options=options,
                stream=True,
                stream_cls=openai.AsyncStream[object],
            )
        return await self._client.post(
            "/chat/completions",
            cast_to=object,
            body=body,
            options=options,
        )

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
        body = self._body(messages, tools, effective, response_schema, stream=False)
        timeout = self._timeout(effective)
        try:
            async with asyncio.timeout(timeout):
                completion = await self._send(body, stream=False, request_timeout=timeout)
        except MAPPED_EXCEPTIONS as exc:
            raise self._error(exc, streaming=False) from None
        if not isinstance(completion, Mapping):
            raise LLMConnectionError("malformed response body", provider=PROVIDER, model=self._model)
        return parse_completion(completion)

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
        body = self._body(messages, tools, effective, response_schema, stream=True)
        timeout = self._timeout(effective)
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        assembler = ChunkAssembler()
        sdk_stream: openai.AsyncStream[Any] | None = None
        try:
            async with asyncio.timeout_at(deadline):
                sdk_stream = await self._send(body, stream=True, request_timeout=timeout)
            assert sdk_stream is not None
            chunks = sdk_stream.__aiter__()
            while True:
                async with asyncio.timeout_at(deadline):
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        break
                if not isinstance(chunk, Mapping):
                    raise LLMConnectionError("malformed stream event", provider=PROVIDER, model=self._model)
                for event in assembler.feed(chunk):
                    yield event
            response = assembler.finish()
        except MAPPED_EXCEPTIONS as exc:
            raise self._error(exc, streaming=True) from None
        finally:
            if sdk_stream is not None:
                await sdk_stream.close()
        yield ResponseCompleted(response)

    def _error(self, exc: BaseException, *, streaming: bool) -> LLMError:
        return map_openai_error(exc, provider=PROVIDER, model=self._model, streaming=streaming)

    # ------------------------------------------------------------------------------------- helpers

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        return count_message_tokens(content, model=self._model)

    def normalize_model_name(self, name: str | None = None) -> str:
        """Seed 002 §3-3: lower-case, spaces/underscores → hyphens, no provider prefix
        (``"openai-chat:GPT_4o"`` → ``"gpt-4o"``). Requests always send the model exactly as given."""
        return canonical_model_name(
            self._model if name is None else name, prefixes=("openai-chat:", "openai:", "openai/")
        )
