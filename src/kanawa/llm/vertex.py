"""Google Cloud Vertex AI: ``vertex:<model>`` — Gemini through ``google-genai`` (``vertexai=True``) and
Claude through the Anthropic SDK's ``AsyncAnthropicVertex``.

The adapters are :class:`~kanawa.llm.gemini.adapter.GeminiAdapter` and
:class:`~kanawa.llm.anthropic.adapter.AnthropicAdapter` with a Vertex client: the same payloads,
parsing and error mapping, other paths and other credentials.

* Gemini: ``POST /v1/projects/<project>/locations/<location>/publishers/google/models/<model>``
  ``:generateContent`` and ``:streamGenerateContent?alt=sse``.
* Claude (any model whose name starts with ``claude``, e.g. ``claude-sonnet-4-5@20250929``):
  ``POST /v1/projects/<project>/locations/<location>/publishers/anthropic/models/<model>:rawPredict``
  and ``:streamRawPredict``, with ``anthropic_version`` ``vertex-2023-10-16`` in the body.

Settings: ``project`` (else ``GOOGLE_CLOUD_PROJECT``), ``location`` (else ``GOOGLE_CLOUD_LOCATION``,
else ``CLOUD_ML_REGION``, else ``global``), ``base_url`` (the API root, without the version; default
Google's endpoint for the location). Credentials: ``access_token`` (a ready OAuth2 access token,
e.g. from ``gcloud auth print-access-token``) or ``credentials`` (a ``google.auth`` credentials
object, refreshed as it expires); with neither, Application Default Credentials. A given token is
registered with :mod:`kanawa.secrets`. The adapters' ``provider`` is ``vertex``.
"""

from __future__ import annotations

import os
from typing import Any, Unpack

import google.auth.credentials
import google.oauth2.credentials
from anthropic import AsyncAnthropicVertex, AsyncStream
from google import genai
from google.genai import types

from kanawa.llm.adapter import LLMAdapter, canonical_model_name
from kanawa.llm.anthropic.adapter import AnthropicAdapter, AnthropicOptions, adapter_options
from kanawa.llm.errors import LLMBadRequestError, LLMError
from kanawa.llm.gemini.adapter import GeminiAdapter, split_base_url
from kanawa.llm.provider_adapter import Call, ChatRequest
from kanawa.secrets import guard_credentials

__all__ = ["VertexAnthropicAdapter", "VertexGeminiAdapter", "VertexOptions", "vertex_model"]

PROVIDER = "vertex"
PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
LOCATION_ENVS = ("GOOGLE_CLOUD_LOCATION", "CLOUD_ML_REGION")
DEFAULT_LOCATION = "global"
API_VERSION = "v1"
ANTHROPIC_VERSION = "vertex-2023-10-16"
"""The Messages API version Vertex AI accepts, sent in the body."""


class VertexOptions(AnthropicOptions, total=False):
    """The connection options plus Vertex AI's own (the module docstring has the fallbacks); Claude's
    options (:class:`~kanawa.llm.anthropic.adapter.AnthropicOptions`) apply to Claude models."""

    project: str | None
    location: str | None
    access_token: str | None
    credentials: google.auth.credentials.Credentials | None


def _place(options: VertexOptions, model: str) -> tuple[str, str]:
    """``(project, location)``; a missing project is an error naming ``GOOGLE_CLOUD_PROJECT``."""
    project = options.get("project") or os.environ.get(PROJECT_ENV)
    if not project:
        raise LLMBadRequestError(
            f"no Google Cloud project for Vertex AI: pass project=... or export {PROJECT_ENV}",
            provider=PROVIDER,
            model=model,
        )
    location = options.get("location") or next(
        (os.environ[name] for name in LOCATION_ENVS if os.environ.get(name)), DEFAULT_LOCATION
    )
    return project, location


def _credentials(options: VertexOptions) -> google.auth.credentials.Credentials | None:
    """The credentials to send: a given object, a given token wrapped as one, or ``None`` (ADC)."""
    token = options.get("access_token")
    guard_credentials(token)
    if token:
        return google.oauth2.credentials.Credentials(token=token)  # type: ignore[no-untyped-call]
    given = options.get("credentials")
    if given is not None:
        guard_credentials(getattr(given, "token", None))
    return given


def _without_prefix(model: str) -> str:
    name = model.strip()
    if name.lower().startswith("vertex:"):
        name = name[len("vertex:") :].strip()
    if not name:
        raise LLMBadRequestError("a Vertex AI adapter needs a model name", provider=PROVIDER)
    return name


def _named(error: LLMError) -> LLMError:
    error.provider = PROVIDER
    return error


class VertexGeminiAdapter(GeminiAdapter):
    """A Gemini model on Vertex AI (``vertex:gemini-…``); the module docstring has the settings."""

    provider = PROVIDER
    NAME_PREFIXES = ("vertex:", *GeminiAdapter.NAME_PREFIXES)

    def __init__(
        self, model: str, *, client: genai.Client | None = None, **options: Unpack[VertexOptions]
    ) -> None:
        name = _without_prefix(model)
        built = client or self._client_from(name, options)
        super().__init__(name, client=built, settings=options.get("settings"), timeout=options.get("timeout"))
        if client is None:
            self._close_owned = built.aio.aclose

    @staticmethod
    def _client_from(model: str, options: VertexOptions) -> genai.Client:
        project, location = _place(options, model)
        root, version = split_base_url(options.get("base_url"))
        explicit = options.get("base_url") is not None and version != "v1beta"
        http = types.HttpOptions(
            base_url=root,
            api_version=version if explicit else API_VERSION,
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(
            vertexai=True,
            project=project,
            location=location,
            credentials=_credentials(options),
            http_options=http,
        )

    def _map_error(self, exc: BaseException, call: Call[Any], handle: Any) -> LLMError:
        return _named(super()._map_error(exc, call, handle))


class VertexAnthropicAdapter(AnthropicAdapter):
    """A Claude model on Vertex AI (``vertex:claude-…``); the module docstring has the settings."""

    provider = PROVIDER
    NAME_PREFIXES = ("vertex:", *AnthropicAdapter.NAME_PREFIXES)

    def __init__(
        self,
        model: str,
        *,
        client: AsyncAnthropicVertex | None = None,
        **options: Unpack[VertexOptions],
    ) -> None:
        name = _without_prefix(model)
        super().__init__(name, client=client or self._client_from(name, options), **adapter_options(options))
        if client is None:
            self._close_owned = self._client.close

    @staticmethod
    def _client_from(model: str, options: VertexOptions) -> AsyncAnthropicVertex:
        project, location = _place(options, model)
        root = options.get("base_url")
        timeout = options.get("timeout")
        token = options.get("access_token")
        guard_credentials(token)
        return AsyncAnthropicVertex(
            region=location,
            project_id=project,
            access_token=token,
            credentials=None if token else _credentials(options),
            base_url=None if root is None else f"{root.rstrip('/')}/{API_VERSION}",
            timeout=600.0 if timeout is None else timeout,
            max_retries=0,
            default_headers=options.get("default_headers"),
            open_telemetry=False,
        )

    def _build(self, request: ChatRequest) -> dict[str, Any]:
        return {**super()._build(request), "anthropic_version": ANTHROPIC_VERSION}

    def _map_error(self, exc: BaseException, call: Call[Any], handle: AsyncStream[Any] | None) -> LLMError:
        return _named(super()._map_error(exc, call, handle))


def vertex_model(model: str, **options: Any) -> LLMAdapter:
    """``vertex:<model>``: Claude models (``claude-…``) on :class:`VertexAnthropicAdapter`, every other
    model on :class:`VertexGeminiAdapter`."""
    name = _without_prefix(model)
    family = canonical_model_name(name, prefixes=("anthropic/", "publishers/anthropic/models/"))
    if family.startswith("claude"):
        return VertexAnthropicAdapter(name, **options)
    return VertexGeminiAdapter(name, **options)
