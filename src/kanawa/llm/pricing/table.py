"""A price table: the user's own prices first, then genai-prices' bundled data.

Prices are US dollars per million tokens. A model's price comes from, in order:

1. the table's own prices (:attr:`PriceTable.prices`) — what a user sets with
   ``PriceTable(...).with_prices({...})``, ``PriceTable.load(path)`` or ``KANAWA_PRICES=path.json``,
   dated by the table's ``as_of`` and reported with source ``override``;
2. the ``genai-prices`` package's bundled data (:mod:`.library`), reported with its version: input,
   cached input and output prices by each provider's rules, long-context tiers and dated price
   changes included.

A model found in neither has no price: its cost is ``None``, never ``0``.

An override is flat: ``input``, ``output``, ``cached_input`` (cache reads, default: ``input``),
``cache_write`` (default: ``input``) and ``reasoning`` (default: ``output``); cost = other input ×
input + cache reads × cached_input + cache writes × cache_write + (output − reasoning) × output +
reasoning × reasoning. ``Usage.cached_tokens`` and ``Usage.cache_write_tokens`` are subsets of the
input tokens, ``Usage.reasoning_tokens`` of the output tokens, as providers report them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from pathlib import Path

from kanawa.llm.pricing.library import LIBRARY, find, library_cost, library_version
from kanawa.types import Usage

_PRICE_FIELDS = ("input", "output", "cached_input", "cache_write", "reasoning")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens. ``cached_input`` (cache reads) and ``cache_write`` default to ``input``;
    ``reasoning`` to ``output``."""

    input: float
    output: float
    _: KW_ONLY
    cached_input: float | None = None
    reasoning: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        for name in _PRICE_FIELDS:
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
            ):
                raise ValueError(f"price {name} must be a non-negative number of USD per million tokens")

    def cost(self, usage: Usage) -> float:
        """USD for ``usage`` at these prices."""
        cached = min(usage.cached_tokens, usage.input_tokens)
        written = min(usage.cache_write_tokens, usage.input_tokens - cached)
        reasoning = min(usage.reasoning_tokens, usage.output_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        reasoning_price = self.output if self.reasoning is None else self.reasoning
        total = (
            (usage.input_tokens - cached - written) * self.input
            + cached * cached_price
            + written * write_price
            + (usage.output_tokens - reasoning) * self.output
            + reasoning * reasoning_price
        )
        return total / 1_000_000


@dataclass(frozen=True, slots=True)
class PriceSource:
    """Where a price came from: ``override`` (dated by the table's ``as_of``) or ``genai-prices``
    (dated by its package version, which is its data version)."""

    name: str
    version: str

    def __str__(self) -> str:
        if self.name == "override":
            return f"override, as of {self.version}"
        return f"{self.name} {self.version}"


@dataclass(frozen=True, slots=True)
class Quote:
    """The cost of one response and where its price came from."""

    cost_usd: float
    source: PriceSource


@dataclass(frozen=True, slots=True)
class PriceTable:
    """The user's prices by model name (``as_of``: their ISO date), in front of genai-prices' data
    (``library=False`` leaves the library out: only the table's own prices count)."""

    as_of: str
    _: KW_ONLY
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    library: bool = True

    def price_of(self, model: str) -> ModelPrice | None:
        """The table's own price of ``model``: exact name, else the name without a provider prefix
        (``openai:gpt-5``) or a base URL, else the longest known name it extends with a ``-`` suffix
        (``gpt-5-2025-08-07`` → ``gpt-5``); ``None`` when the table sets none."""
        if not model:
            return None
        name = model.split(":", 1)[1] if ":" in model else model
        name = name.split("@", 1)[0]
        found = self.prices.get(name)
        if found is not None:
            return found
        best = ""
        for known in self.prices:
            if name.startswith(known + "-") and len(known) > len(best):
                best = known
        return self.prices.get(best) if best else None

    def source_of(self, model: str) -> PriceSource | None:
        """Where ``model``'s price comes from; ``None`` when it has none."""
        if self.price_of(model) is not None:
            return PriceSource("override", self.as_of)
        version = library_version()
        if self.library and version is not None and find(model) is not None:
            return PriceSource(LIBRARY, version)
        return None

    def has_price(self, model: str) -> bool:
        """Whether ``model`` has a price here (its cost is known)."""
        return self.source_of(model) is not None

    def quote(self, model: str, usage: Usage, *, at: datetime | None = None) -> Quote | None:
        """The cost of ``usage`` on ``model`` and its source; ``None`` when the model has no price.
        ``at`` picks a dated library price (default: now)."""
        own = self.price_of(model)
        if own is not None:
            return Quote(own.cost(usage), PriceSource("override", self.as_of))
        version = library_version()
        found = find(model) if self.library and version is not None else None
        if found is None or version is None:
            return None
        return Quote(library_cost(found, usage, at=at), PriceSource(LIBRARY, version))

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD for ``usage`` on ``model``; ``None`` when the model has no price."""
        quote = self.quote(model, usage)
        return None if quote is None else quote.cost_usd

    def with_prices(self, prices: Mapping[str, ModelPrice], *, as_of: str | None = None) -> PriceTable:
        """This table with ``prices`` added or replaced."""
        return PriceTable(as_of or self.as_of, prices={**self.prices, **prices}, library=self.library)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> PriceTable:
        """``{"as_of": "2026-01-01", "models": {"my-model": {"input": 1.25, "output": 10, ...}}}``;
        ``"library": false`` leaves genai-prices out."""
        as_of = data.get("as_of")
        models = data.get("models")
        library = data.get("library", True)
        if not isinstance(as_of, str) or not isinstance(models, dict):
            raise ValueError("a price table needs 'as_of' (an ISO date) and 'models' (name -> prices)")
        if not isinstance(library, bool):
            raise ValueError("'library' of a price table must be true or false")
        prices: dict[str, ModelPrice] = {}
        for name, entry in models.items():
            if not isinstance(entry, dict):
                raise ValueError(f"prices of {name!r} must be an object")
            unknown = set(entry) - set(_PRICE_FIELDS)
            if unknown:
                raise ValueError(f"prices of {name!r} have unknown fields: {sorted(unknown)}")
            prices[str(name)] = ModelPrice(**entry)
        return cls(as_of, prices=prices, library=library)

    @classmethod
    def load(cls, path: str | Path) -> PriceTable:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


__all__ = ["ModelPrice", "PriceSource", "PriceTable", "Quote"]
