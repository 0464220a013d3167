"""Azure OpenAI: ``azure:<deployment>`` (Responses API) and ``azure-chat:<deployment>`` (Chat
Completions), through the ``openai`` SDK's ``AsyncAzureOpenAI`` client.

The two adapters are the OpenAI ones with another client: requests, parsing and error mapping are
exactly those of :class:`~kanawa.llm.openai.responses.OpenAIResponsesAdapter` and
:class:`~kanawa.llm.openai.chat.OpenAIChatAdapter`. What differs is where the request goes and how
it authenticates:

* ``endpoint`` (else ``AZURE_OPENAI_ENDPOINT``) is the resource, ``https://<name>.openai.azure.com``;
  ``api_version`` (else ``OPENAI_API_VERSION``, else :data:`DEFAULT_API_VERSION`) goes on every
  request as ``?api-version=``. Chat Completions go to
  ``/openai/deployments/<deployment>/chat/completions``, the Responses API to ``/openai/responses``
  with the deployment as ``model``.
* Authentication is an ``api_key`` (else ``AZURE_OPENAI_API_KEY``), sent as the ``api-key`` header, or
  ``azure_ad_token_provider``: a callable returning a Microsoft Entra ID access token (sync or async,
  e.g. ``azure.identity.get_bearer_token_provider(...)``), called before each request and sent as
  ``Authorization: Bearer`` (a fixed token may also come from ``AZURE_OPENAI_AD_TOKEN``). Every key
  and every token the provider returns is registered with :mod:`kanawa.secrets`, so a server echoing
  one never shows it; a provider that fails raises :class:`~kanawa.llm.errors.LLMAuthError` naming
  only the failure's type.
* The deployment name is sent exactly as given (Azure deployment names are the user's own, not
  model names); the adapters' ``provider`` is ``azure`` and ``azure-chat``.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Unpack

import openai

from kanawa.llm.errors import LLMAuthError, LLMBadRequestError
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.openai.chat_payload import MaxTokensField, SystemRole
from kanawa.llm.openai.common import DEFAULT_TIMEOUT
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.llm.provider_adapter import ConnectionOptions
from kanawa.secrets import guard_credentials, register_secret

__all__ = [
    "DEFAULT_API_VERSION",
    "AzureChatOptions",
    "AzureOpenAIAdapter",
    "AzureOpenAIChatAdapter",
    "AzureOptions",
    "TokenProvider",
    "build_azure_client",
]

PROVIDER = "azure"
DEFAULT_API_VERSION = "2025-04-01-preview"
"""The API version sent when neither ``api_version`` nor ``OPENAI_API_VERSION`` says (the first to
serve both the Responses API and Chat Completions with reasoning models)."""

ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
KEY_ENV = "AZURE_OPENAI_API_KEY"
TOKEN_ENV = "AZURE_OPENAI_AD_TOKEN"
VERSION_ENV = "OPENAI_API_VERSION"

TokenProvider = Callable[[], str | Awaitable[str]]
"""A Microsoft Entra ID token source: called before each request, returns a bearer token."""


def _guarded(provider: TokenProvider) -> Callable[[], Awaitable[str]]:
    """``provider`` with each token registered as a secret and its failures as :class:`LLMAuthError`."""

    async def token() -> str:
        try:
            value = provider()
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:  # the user's credential code: any failure means "not authenticated"
            raise LLMAuthError(
                f"the Azure token provider failed ({type(exc).__name__})", provider=PROVIDER
            ) from None
        if not isinstance(value, str) or not value.strip():
            raise LLMAuthError("the Azure token provider returned no token", provider=PROVIDER)
        register_secret(value)
        return value

    return token


def build_azure_client(
    deployment: str,
    *,
    endpoint: str | None = None,
    api_version: str | None = None,
    api_key: str | None = None,
    azure_ad_token_provider: TokenProvider | None = None,
    timeout: float | None = None,
    default_headers: Mapping[str, str] | None = None,
) -> openai.AsyncAzureOpenAI:
    """An ``AsyncAzureOpenAI`` client with SDK retries off (module docstring has the settings).

    Raises :class:`LLMBadRequestError` without an endpoint and :class:`LLMAuthError` without a key
    or token provider, each naming the environment variable to set."""
    resource = (endpoint or os.environ.get(ENDPOINT_ENV) or "").strip()
    if not resource:
        raise LLMBadRequestError(
            f"no Azure OpenAI endpoint: pass endpoint=... or export {ENDPOINT_ENV}",
            provider=PROVIDER,
            model=deployment,
        )
    key = api_key or (None if azure_ad_token_provider else os.environ.get(KEY_ENV)) or None
    token = None if key or azure_ad_token_provider else os.environ.get(TOKEN_ENV) or None
    if key is None and token is None and azure_ad_token_provider is None:
        raise LLMAuthError(
            f"{KEY_ENV} is not set: pass api_key=..., azure_ad_token_provider=... or export {KEY_ENV}",
            provider=PROVIDER,
            model=deployment,
        )
    guard_credentials(key, token, headers=default_headers)
    return openai.AsyncAzureOpenAI(
        azure_endpoint=resource,
        api_version=api_version or os.environ.get(VERSION_ENV) or DEFAULT_API_VERSION,
        api_key=key,
        azure_ad_token=token,
        azure_ad_token_provider=_guarded(azure_ad_token_provider) if azure_ad_token_provider else None,
        timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
        max_retries=0,
        default_headers=default_headers,
    )


class AzureOptions(ConnectionOptions, total=False):
    """The connection options plus Azure's own: ``endpoint`` (``base_url`` is accepted as its alias, so
    ``azure:<deployment>@https://<name>.openai.azure.com`` works), ``api_version`` and
    ``azure_ad_token_provider``."""

    endpoint: str | None
    api_version: str | None
    azure_ad_token_provider: TokenProvider | None
    default_headers: Mapping[str, str] | None


class AzureChatOptions(AzureOptions, total=False):
    """Azure's options plus the Chat Completions adapter's (see
    :class:`~kanawa.llm.openai.chat.OpenAIChatAdapter`); here ``max_tokens_field`` defaults to
    ``max_completion_tokens``, which reasoning deployments require."""

    system_role: SystemRole
    max_tokens_field: MaxTokensField
    include_usage: bool


def _client_from(deployment: str, options: AzureOptions) -> openai.AsyncAzureOpenAI:
    """The client for ``options``."""
    endpoint = options.get("endpoint") or options.get("base_url")
    return build_azure_client(
        deployment,
        endpoint=endpoint,
        api_version=options.get("api_version"),
        api_key=options.get("api_key"),
        azure_ad_token_provider=options.get("azure_ad_token_provider"),
        timeout=options.get("timeout"),
        default_headers=options.get("default_headers"),
    )


def _adapter_options(options: AzureOptions) -> ConnectionOptions:
    """What the OpenAI adapter itself still needs once the client is built."""
    return ConnectionOptions(settings=options.get("settings"), timeout=options.get("timeout"))


def _deployment(name: str, prefixes: tuple[str, ...]) -> str:
    text = name.strip()
    for prefix in prefixes:
        if text.lower().startswith(prefix):
            text = text[len(prefix) :].strip()
    if not text:
        raise LLMBadRequestError("an Azure OpenAI adapter needs a deployment name", provider=PROVIDER)
    return text


class AzureOpenAIAdapter(OpenAIResponsesAdapter):
    """A GPT deployment on Azure OpenAI over the Responses API (``azure:<deployment>``)."""

    provider = PROVIDER
    NAME_PREFIXES = ("azure:",)

    def __init__(
        self,
        deployment: str,
        *,
        client: openai.AsyncAzureOpenAI | None = None,
        **options: Unpack[AzureOptions],
    ) -> None:
        name = _deployment(deployment, self.NAME_PREFIXES)
        built = client or _client_from(name, options)
        super().__init__(name, client=built, **_adapter_options(options))
        if client is None:
            self._close_owned = built.close

    def _request_model(self, model: str) -> str:
        return model


class AzureOpenAIChatAdapter(OpenAIChatAdapter):
    """A deployment on Azure OpenAI over Chat Completions (``azure-chat:<deployment>``)."""

    provider = "azure-chat"
    NAME_PREFIXES = ("azure-chat:", "azure:")

    def __init__(
        self,
        deployment: str,
        *,
        client: openai.AsyncAzureOpenAI | None = None,
        **options: Unpack[AzureChatOptions],
    ) -> None:
        name = _deployment(deployment, self.NAME_PREFIXES)
        built = client or _client_from(name, options)
        super().__init__(
            name,
            client=built,
            system_role=options.get("system_role", "system"),
            max_tokens_field=options.get("max_tokens_field", "max_completion_tokens"),
            include_usage=options.get("include_usage", True),
            **_adapter_options(options),
        )
        if client is None:
            self._close_owned = built.close
