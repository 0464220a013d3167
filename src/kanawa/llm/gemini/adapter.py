"""Google Gemini through the official ``google-genai`` SDK (model string ``gemini:<model>``).

:class:`GeminiAdapter` implements :class:`~kanawa.llm.LLMAdapter` (seed 002 §3-3): ``chat()`` calls
``models/{model}:generateContent``, ``stream()`` calls ``models/{model}:streamGenerateContent?alt=sse``.
The request is built by :mod:`kanawa.llm.gemini.payload` (messages) and :mod:`kanawa.llm.gemini.config`
(settings, tools, thinking), the answer assembled by :mod:`kanawa.llm.gemini.response` (``STOP`` with
function calls stays ``end_turn`` — seed 003), and faults mapped by :mod:`kanawa.llm.gemini.errors`
and sealed by :func:`~kanawa.llm.errors.seal_errors` (the key masked by :mod:`kanawa.secrets` wherever
a server echoes it, no SDK exception in the chain).

The SDK is only the transport. Its retries are off (``HttpRetryOptions(attempts=1)``), as are its
automatic function calling and automatic continuation: retrying and falling back is kanawa's job
(:mod:`kanawa.llm.retry`, seed 002 §7), and two retry layers multiply. The API version is pinned to
``v1beta`` (thinking, ``parametersJsonSchema`` and ``responseJsonSchema`` live there); a ``base_url``
ending in ``/v1``, ``/v1beta`` or ``/v1alpha`` chooses that version instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from google import genai
from google.genai import types

from kanawa.llm.base import ToolLike, canonical_model_name, tool_specs
from kanawa.llm.errors import LLMAuthError, LLMBadRequestError, seal_errors, seal_stream_errors
from kanawa.llm.gemini.config import ModelProfile, build_config
from kanawa.llm.gemini.errors import SDK_ERRORS, map_error
from kanawa.llm.gemini.payload import PROVIDER, build_contents
from kanawa.llm.gemini.response import ResponseAssembler
from kanawa.llm.lifecycle import ClosableAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.secrets import guard_credentials
from kanawa.types import LLMResponse, Message, OutputSchema, ResponseCompleted, StreamEvent

API_VERSION = "v1beta"
DEFAULT_TIMEOUT = 600.0
"""Seconds for one request, the whole stream included, when neither settings nor the constructor say."""

MISSING_KEY_MESSAGE = "no Gemini API key: pass api_key= or set GEMINI_API_KEY (or GOOGLE_API_KEY)"

_PROVIDER_PREFIXES = ("gemini:", "google:", "google-gla:")
_PREFIXES = (*_PROVIDER_PREFIXES, "models/", "google/")
_VERSIONED_BASE = re.compile(r"^(?P<root>.*?)/(?P<version>v1(?:alpha|beta)?)/?$")


# ------------------------------------------------------------------------------------------ client


def split_base_url(base_url: str | None) -> tuple[str | None, str]:
    """``(root, api_version)``: ``http://h/v1beta`` → ``("http://h", "v1beta")``; no version → v1beta."""
    if not base_url:
        return None, API_VERSION
    match = _VERSIONED_BASE.match(base_url.strip())
    if match is None:
        return base_url.strip().rstrip("/"), API_VERSION
    return match["root"], match["version"]


def _build_client(*, model: str, api_key: str | None, base_url: str | None) -> genai.Client:
    key = (api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or "").strip()
    if not key:
        raise LLMAuthError(MISSING_KEY_MESSAGE, provider=PROVIDER, model=model)
    root, version = split_base_url(base_url)
    options = types.HttpOptions(
        base_url=root, api_version=version, retry_options=types.HttpRetryOptions(attempts=1)
    )
    return genai.Client(vertexai=False, api_key=key, http_options=options)


@dataclass(frozen=True, slots=True)
class _Request:
    contents: list[types.Content]
    config: types.GenerateContentConfig
    timeout: float


# ----------------------------------------------------------------------------------------- adapter


class GeminiAdapter(ClosableAdapter):
    """A Gemini model behind :class:`~kanawa.llm.LLMAdapter`.

    ``api_key`` falls back to ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``; with none of them the
    constructor raises :class:`LLMAuthError`. ``base_url`` points at another endpoint (a proxy, a
    test server). ``settings`` are this adapter's defaults, merged under each call's settings.
    ``timeout`` (seconds, the whole stream included) applies when the settings give none, else
    :data:`DEFAULT_TIMEOUT`. ``client`` is a ready ``google.genai.Client`` (e.g. for Vertex AI); it is
    used as given, with its own credentials and retry options.
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
        client: genai.Client | None = None,
    ) -> None:
        self._model = model.strip()
        for prefix in _PROVIDER_PREFIXES:
            if self._model.lower().startswith(prefix):
                self._model = self._model[len(prefix) :]
        if not self._model:
            raise LLMBadRequestError("GeminiAdapter needs a model name", provider=PROVIDER)
        self._settings = settings or ModelSettings()
        self._timeout = timeout
        self._profile = ModelProfile.of(self.normalize_model_name())
        self._owns_client = client is None
        self._client = client or _build_client(model=self._model, api_key=api_key, base_url=base_url)
        guard_credentials(getattr(getattr(self._client, "_api_client", None), "api_key", None))

    @property
    def model(self) -> str:
        return self._model

    def normalize_model_name(self, name: str | None = None) -> str:
        """Lower-case, without ``gemini:``/``google:`` or ``models/`` prefixes: ``gemini-2.5-flash``."""
        return canonical_model_name(self._model if name is None else name, prefixes=_PREFIXES)

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        """An offline estimate (never Gemini's ``countTokens`` endpoint); real counts come in usage."""
        return count_message_tokens(content, model=self._model)

    async def aclose(self) -> None:
        """Close the HTTP connections of a client this adapter built (a given client is left alone)."""
        if self._owns_client:
            await self._client.aio.aclose()

    def _request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolLike],
        settings: ModelSettings | None,
        response_schema: OutputSchema | None,
    ) -> _Request:
        merged = self._settings.merged(settings)
        timeout = merged.timeout if merged.timeout is not None else self._timeout
        timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        system, contents = build_contents(messages, signature_placeholder=self._profile.uses_thinking_level)
        config = build_config(
            merged,
            profile=self._profile,
            system=system,
            tools=tool_specs(tools),
            response_schema=response_schema,
            timeout=timeout,
        )
        return _Request(contents, config, timeout)

    @seal_errors
    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        """One ``generateContent`` call, assembled exactly as :meth:`stream` would assemble it."""
        request = self._request(messages, tools, settings, response_schema)
        try:
            async with asyncio.timeout(request.timeout):
                response = await self._client.aio.models.generate_content(
                    model=self._model, contents=request.contents, config=request.config
                )
        except SDK_ERRORS as exc:
            raise map_error(exc, model=self._model, streaming=False) from None
        assembler = ResponseAssembler(model=self._model)
        assembler.feed(response)
        return assembler.finish(streamed=False)

    @seal_stream_errors
    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """``streamGenerateContent?alt=sse``: deltas as chunks arrive, then one ``ResponseCompleted``.

        The timeout bounds the whole stream, not only the wait for each chunk."""
        request = self._request(messages, tools, settings, response_schema)
        deadline = asyncio.get_running_loop().time() + request.timeout
        assembler = ResponseAssembler(model=self._model)
        chunks: AsyncIterator[types.GenerateContentResponse] | None = None
        try:
            while True:
                try:
                    async with asyncio.timeout_at(deadline):
                        if chunks is None:
                            chunks = await self._client.aio.models.generate_content_stream(
                                model=self._model, contents=request.contents, config=request.config
                            )
                        chunk = await anext(chunks, None)
                except SDK_ERRORS as exc:
                    raise map_error(exc, model=self._model, streaming=True) from None
                if chunk is None:
                    break
                for event in assembler.feed(chunk):
                    yield event
            yield ResponseCompleted(assembler.finish(streamed=True))
        finally:
            close = getattr(chunks, "aclose", None)
            if close is not None:
                with contextlib.suppress(*SDK_ERRORS):
                    await close()


__all__ = ["API_VERSION", "DEFAULT_TIMEOUT", "MISSING_KEY_MESSAGE", "GeminiAdapter", "split_base_url"]
