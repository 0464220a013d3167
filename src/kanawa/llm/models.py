"""Model strings → adapters.

``"openai:gpt-5"``, ``"openai-chat:qwen2.5-7b-instruct@http://localhost:8000/v1"``,
``"anthropic:claude-sonnet-4-5"``, ``"gemini:gemini-2.5-flash"``, the cloud platforms'
``"azure:<deployment>"``, ``"azure-chat:<deployment>"``, ``"bedrock:<model id>"`` and
``"vertex:<model>"`` (Gemini or Claude), and ``"test"`` name a provider and a model. Provider modules
are imported only when their prefix is resolved, so ``import kanawa`` never pays for a provider SDK.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import LLMBadRequestError

if TYPE_CHECKING:
    from kanawa.llm.retry import RetryPolicy


@dataclass(frozen=True, slots=True)
class ProviderEntry:
    """Where a provider's adapter lives and which extra installs its SDK."""

    module: str
    factory: str
    extra: str
    env_key: str | None


PROVIDERS: dict[str, ProviderEntry] = {
    "openai": ProviderEntry(
        "kanawa.llm.openai.responses", "OpenAIResponsesAdapter", "openai", "OPENAI_API_KEY"
    ),
    "openai-chat": ProviderEntry("kanawa.llm.openai.chat", "OpenAIChatAdapter", "openai", None),
    "anthropic": ProviderEntry(
        "kanawa.llm.anthropic.adapter", "AnthropicAdapter", "anthropic", "ANTHROPIC_API_KEY"
    ),
    "gemini": ProviderEntry("kanawa.llm.gemini.adapter", "GeminiAdapter", "gemini", "GEMINI_API_KEY"),
    "azure": ProviderEntry("kanawa.llm.openai.azure", "AzureOpenAIAdapter", "openai", "AZURE_OPENAI_API_KEY"),
    "azure-chat": ProviderEntry(
        "kanawa.llm.openai.azure", "AzureOpenAIChatAdapter", "openai", "AZURE_OPENAI_API_KEY"
    ),
    "bedrock": ProviderEntry(
        "kanawa.llm.anthropic.bedrock", "BedrockAnthropicAdapter", "bedrock", "AWS_ACCESS_KEY_ID"
    ),
    "vertex": ProviderEntry("kanawa.llm.vertex", "vertex_model", "vertex", "GOOGLE_CLOUD_PROJECT"),
}
"""Prefix → adapter. ``google`` is accepted as an alias of ``gemini``."""

_ALIASES = {"google": "gemini", "google-gla": "gemini", "openai-responses": "openai"}


@dataclass(frozen=True, slots=True)
class ModelString:
    """A parsed model string: ``provider:model[@base_url]``."""

    provider: str
    model: str
    base_url: str | None = None


def parse_model_string(spec: str) -> ModelString:
    """Split ``provider:model[@base_url]``; raise :class:`LLMBadRequestError` with an example if malformed.

    ``test`` (or ``test:<name>``) names :class:`~kanawa.llm.testing.models.TestLLM`. The base URL starts at
    the first ``@http://`` or ``@https://``; any other ``@`` belongs to the model id (Vertex AI
    spells versions ``claude-sonnet-4@20250514``), unless what follows it looks like a URL without
    its scheme, which is refused.
    """
    text = spec.strip()
    if text == "test":
        return ModelString("test", "test")
    provider, sep, rest = text.partition(":")
    provider = _ALIASES.get(provider.lower(), provider.lower())
    if not sep or not rest or (provider not in PROVIDERS and provider != "test"):
        known = ", ".join(sorted([*PROVIDERS, "test"]))
        raise LLMBadRequestError(
            f"unknown model string {spec!r}: expected 'provider:model' with provider one of {known} "
            "(e.g. 'openai:gpt-5', 'openai-chat:llama3@http://localhost:11434/v1')"
        )
    url_at = re.search(r"@(?=https?://)", rest)
    if url_at is not None:
        model, base_url = rest[: url_at.start()], rest[url_at.end() :]
    elif "@" in rest and re.search(r"[:/]", rest.rpartition("@")[2]):
        raise LLMBadRequestError(f"model string {spec!r}: the part after '@' must be an http(s) base URL")
    else:
        model, base_url = rest, None
    if not model:
        raise LLMBadRequestError(f"model string {spec!r} names no model")
    return ModelString(provider, model, base_url)


def resolve_model(
    spec: str | LLMAdapter,
    *,
    fallback_model: str | LLMAdapter | Sequence[str | LLMAdapter] | None = None,
    retry_policy: RetryPolicy | None = None,
    **kwargs: Any,
) -> LLMAdapter:
    """Turn a model string (or an adapter) into an :class:`LLMAdapter`.

    Provider models come wrapped in :class:`~kanawa.llm.retry.RetryingLLM` (seed 002 §7: three
    attempts on the same model with backoff, honouring ``Retry-After``, then each ``fallback_model``);
    pass ``retry_policy=NO_RETRY`` to opt out. An adapter passed in is returned as is unless a fallback
    or retry policy is given. ``kwargs`` go to the primary adapter's constructor (``api_key``,
    ``base_url``, ``settings``, ``timeout`` …); fallbacks given as strings get no kwargs.

    Raises :class:`LLMBadRequestError` for a malformed string or a provider whose SDK is not installed,
    and :class:`~kanawa.llm.errors.LLMAuthError` when its API key is missing.
    """
    from kanawa.llm.retry import RetryingLLM

    if isinstance(spec, str):
        primary = _build(spec, kwargs)
        wrap = parse_model_string(spec).provider != "test"
    else:
        primary = spec
        wrap = False
    fallbacks: list[LLMAdapter] = []
    if fallback_model is not None:
        items = (
            [fallback_model]
            if isinstance(fallback_model, str) or not isinstance(fallback_model, Sequence)
            else fallback_model
        )
        fallbacks = [_build(f, {}) if isinstance(f, str) else f for f in items]
    if not (wrap or fallbacks or retry_policy is not None):
        return primary
    return RetryingLLM(primary, fallbacks=fallbacks, policy=retry_policy)


def _build(spec: str, kwargs: dict[str, Any]) -> LLMAdapter:
    parsed = parse_model_string(spec)
    if parsed.provider == "test":
        from kanawa.llm.testing.models import TestLLM

        return TestLLM(model=parsed.model)
    entry = PROVIDERS[parsed.provider]
    try:
        module = importlib.import_module(entry.module)
    except ImportError as exc:
        missing_adapter = isinstance(exc, ModuleNotFoundError) and exc.name == entry.module
        message = (
            f"provider {parsed.provider!r} is not available in this kanawa build ({entry.module} is missing)"
            if missing_adapter
            else f"provider {parsed.provider!r} needs its SDK: pip install 'kanawa[{entry.extra}]' ({exc})"
        )
        raise LLMBadRequestError(message, provider=parsed.provider, model=parsed.model) from None
    factory = getattr(module, entry.factory, None)
    if factory is None:
        raise LLMBadRequestError(
            f"provider {parsed.provider!r}: {entry.module} defines no {entry.factory}",
            provider=parsed.provider,
            model=parsed.model,
        )
    if parsed.base_url is not None and "base_url" not in kwargs:
        kwargs = {**kwargs, "base_url": parsed.base_url}
    adapter: LLMAdapter = factory(parsed.model, **kwargs)
    return adapter
