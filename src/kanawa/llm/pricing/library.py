"""Prices from the ``genai-prices`` package: its bundled data, read offline.

``genai-prices`` keeps providers' published prices as data (input, cached input, output, long-context
tiers, dated price changes) and ships them inside its wheel. kanawa reads only that bundled snapshot:
it never calls ``genai_prices.UpdatePrices`` (the one part of the package that downloads), so a price
never depends on the network and a run prices the same offline as online.

A kanawa model string names its provider (``openai:gpt-5.2``, ``anthropic:claude-sonnet-4-5``,
``gemini:gemini-2.5-pro``); a bare name (a response's own ``model`` field) is given the provider its
family belongs to. A name of no known family is not looked up at all: matching an unknown model
against every provider's list could price a local model at some reseller's rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache

from kanawa.types import Usage

LIBRARY = "genai-prices"

_PROVIDER_IDS = {
    "openai": "openai",
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "google": "google",
    "google-gla": "google",
}
"""kanawa's provider prefixes → genai-prices' provider ids."""

_FAMILIES = (
    (("gpt-", "o1", "o3", "o4", "codex-", "chatgpt-"), "openai"),
    (("claude-",), "anthropic"),
    (("gemini-",), "google"),
)


@dataclass(frozen=True, slots=True)
class LibraryModel:
    """A model genai-prices knows: its provider and model ids there."""

    provider_id: str
    model_id: str


@cache
def library_version() -> str | None:
    """The installed genai-prices version (its data version), or ``None`` when it is not installed.
    Cached: reading package metadata costs ~0.3 ms, and every priced model call asks."""
    from importlib.metadata import PackageNotFoundError, version  # deferred: ~50 modules, asked once

    try:
        return version(LIBRARY)
    except PackageNotFoundError:
        return None


def split_model(model: str) -> tuple[str | None, str]:
    """``provider:name@base_url`` → (genai-prices provider id or ``None``, lower-case name)."""
    prefix, sep, rest = model.strip().partition(":")
    name = rest if sep else prefix
    name = name.split("@", 1)[0].strip().lower()
    if sep:
        return _PROVIDER_IDS.get(prefix.strip().lower()), name
    for starts, provider in _FAMILIES:
        if name.startswith(starts):
            return provider, name
    return None, name


@cache
def find(model: str) -> LibraryModel | None:
    """The genai-prices model ``model`` resolves to, or ``None``."""
    provider_id, name = split_model(model)
    if provider_id is None or not name or library_version() is None:
        return None
    from genai_prices.data_snapshot import get_snapshot

    try:
        provider, info = get_snapshot().find_provider_model(name, None, provider_id, None)
    except LookupError:
        return None
    return LibraryModel(provider.id, info.id)


def library_cost(model: LibraryModel, usage: Usage, *, at: datetime | None = None) -> float:
    """USD for ``usage`` at genai-prices' price of ``model`` on ``at`` (default: now, UTC).

    kanawa's ``Usage`` and genai-prices' agree on what is a subset of what: cached tokens are part of
    the input tokens (billed at the cache-read price), and so are cache-write tokens (billed at the
    cache-write price: Anthropic's 1.25× for a 5-minute cache), reasoning tokens part of the output tokens
    (billed at the model's reasoning price, else its output price). A long-context tier applies by
    the request's input tokens, so a cost is computed per request, never on summed usage."""
    from genai_prices import Usage as LibraryUsage
    from genai_prices import calc_price

    cached = min(usage.cached_tokens, usage.input_tokens)
    written = min(usage.cache_write_tokens, usage.input_tokens - cached)
    reasoning = min(usage.reasoning_tokens, usage.output_tokens)
    counted = LibraryUsage(
        input_tokens=usage.input_tokens,
        cache_read_tokens=cached,
        cache_write_tokens=written,
        output_tokens=usage.output_tokens,
        output_reasoning_tokens=reasoning,
    )
    priced = calc_price(
        counted,
        model.model_id,
        provider_id=model.provider_id,
        genai_request_timestamp=at or datetime.now(tz=UTC),
    )
    total: Decimal = priced.total_price
    return float(total)


__all__ = ["LIBRARY", "LibraryModel", "find", "library_cost", "library_version", "split_model"]
