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

import functools
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import ClassVar, Unpack

from google import genai
from google.genai import types

from kanawa.llm.errors import LLMAuthError, LLMBadRequestError, LLMError
from kanawa.llm.gemini.config import ModelProfile, build_config
from kanawa.llm.gemini.errors import SDK_ERRORS, map_error
from kanawa.llm.gemini.payload import PROVIDER, build_contents
from kanawa.llm.gemini.response import ResponseAssembler
from kanawa.llm.provider_adapter import Assembly, Call, ChatRequest, ConnectionOptions, ProviderAdapter
from kanawa.secrets import guard_credentials
from kanawa.types import LLMResponse

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


_Chunks = AsyncIterator[types.GenerateContentResponse]


# ----------------------------------------------------------------------------------------- adapter


class GeminiAdapter(ProviderAdapter[_Request, _Chunks]):
    """A Gemini model behind :class:`~kanawa.llm.LLMAdapter`.

    ``api_key`` falls back to ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``; with none of them the
    constructor raises :class:`LLMAuthError`. ``base_url`` points at another endpoint (a proxy, a
    test server). ``settings`` are this adapter's defaults, merged under each call's settings.
    ``timeout`` (seconds, the whole stream included) applies when the settings give none, else
    :data:`DEFAULT_TIMEOUT`. ``client`` is a ready ``google.genai.Client`` (e.g. for Vertex AI); it is
    used as given, with its own credentials and retry options.
    """

    provider = PROVIDER
    NAME_PREFIXES: ClassVar[tuple[str, ...]] = _PREFIXES
    DEFAULT_TIMEOUT = DEFAULT_TIMEOUT
    SDK_ERRORS = SDK_ERRORS

    def __init__(
        self,
        model: str,
        *,
        client: genai.Client | None = None,
        **options: Unpack[ConnectionOptions],
    ) -> None:
        name = model.strip()
        for prefix in _PROVIDER_PREFIXES:
            if name.lower().startswith(prefix):
                name = name[len(prefix) :]
        if not name:
            raise LLMBadRequestError("GeminiAdapter needs a model name", provider=PROVIDER)
        super().__init__(name, options)
        self._profile = ModelProfile.of(self.normalize_model_name())
        self._client = client or _build_client(
            model=self._model, api_key=options.get("api_key"), base_url=options.get("base_url")
        )
        if client is None:
            self._close_owned = self._client.aio.aclose
        guard_credentials(getattr(getattr(self._client, "_api_client", None), "api_key", None))

    def _build(self, request: ChatRequest) -> _Request:
        system, contents = build_contents(
            request.messages, signature_placeholder=self._profile.uses_thinking_level
        )
        config = build_config(
            request.settings,
            profile=self._profile,
            system=system,
            tools=request.tools,
            response_schema=request.response_schema,
            timeout=request.timeout if request.timeout is not None else DEFAULT_TIMEOUT,
        )
        return _Request(contents, config)

    async def _send(self, call: Call[_Request]) -> types.GenerateContentResponse:
        """One ``generateContent`` call, assembled exactly as a stream would be."""
        return await self._client.aio.models.generate_content(
            model=self._model, contents=call.body.contents, config=call.body.config
        )

    def _parse(self, raw: types.GenerateContentResponse, call: Call[_Request]) -> LLMResponse:
        assembler = ResponseAssembler(model=self._model)
        assembler.feed(raw)
        return assembler.finish(streamed=False)

    async def _open(self, call: Call[_Request]) -> _Chunks:
        """``streamGenerateContent?alt=sse``."""
        return await self._client.aio.models.generate_content_stream(
            model=self._model, contents=call.body.contents, config=call.body.config
        )

    def _items(self, handle: _Chunks) -> _Chunks:
        return handle

    def _assembly(self, call: Call[_Request], handle: _Chunks) -> Assembly:
        assembler = ResponseAssembler(model=self._model)
        return Assembly(feed=assembler.feed, finish=functools.partial(assembler.finish, streamed=True))

    async def _close(self, handle: _Chunks) -> None:
        close = getattr(handle, "aclose", None)
        if close is not None:
            await close()

    def _map_error(self, exc: BaseException, call: Call[_Request], handle: _Chunks | None) -> LLMError:
        return map_error(exc, model=self._model, streaming=handle is not None)


__all__ = ["API_VERSION", "DEFAULT_TIMEOUT", "MISSING_KEY_MESSAGE", "GeminiAdapter", "split_base_url"]
