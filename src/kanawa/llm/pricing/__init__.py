"""What a model request costs: a price table per model, kept as data with its date.

Prices are US dollars per million tokens for input, cached input, output and reasoning (reasoning is
billed as output by every provider we know of, so it defaults to the output price). The shipped table
(``prices.json`` beside this file, dated by its ``as_of`` field; :func:`default_prices` returns it)
lists the providers' published list prices for the models we know; a price we did not know is not
guessed — an unknown model has no price and its cost is ``None``, never ``0``. Users override or
extend the table: ``PriceTable.load(path)`` / ``default_prices().with_prices({...})``, or
``KANAWA_PRICES=path.json`` (which replaces the shipped table wherever the default is used).

Cost of one response (:meth:`PriceTable.cost`): uncached input × input price + cached input × cached
price + (output − reasoning) × output price + reasoning × reasoning price. ``Usage.cached_tokens`` and
``Usage.reasoning_tokens`` are subsets of input and output tokens, as providers report them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

from kanawa.types import Usage

PRICES_ENVIRONMENT_VARIABLE = "KANAWA_PRICES"
"""Path of a JSON price table that replaces the shipped one (same format as ``prices.json``)."""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens. ``cached_input`` defaults to ``input``; ``reasoning`` to ``output``."""

    input: float
    output: float
    _: KW_ONLY
    cached_input: float | None = None
    reasoning: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input", "reasoning"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
            ):
                raise ValueError(f"price {name} must be a non-negative number of USD per million tokens")

    def cost(self, usage: Usage) -> float:
        """USD for ``usage`` at these prices."""
        cached = min(usage.cached_tokens, usage.input_tokens)
        reasoning = min(usage.reasoning_tokens, usage.output_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        reasoning_price = self.output if self.reasoning is None else self.reasoning
        total = (
            (usage.input_tokens - cached) * self.input
            + cached * cached_price
            + (usage.output_tokens - reasoning) * self.output
            + reasoning * reasoning_price
        )
        return total / 1_000_000


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model name, with the date they were read (``as_of``, ISO date)."""

    as_of: str
    prices: Mapping[str, ModelPrice]

    def price_of(self, model: str) -> ModelPrice | None:
        """The price of ``model``: exact name, else the name without a provider prefix
        (``openai:gpt-5``) or a date/version suffix (``gpt-5-2025-08-07``), else ``None``."""
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

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD for ``usage`` on ``model``; ``None`` when the model has no price."""
        price = self.price_of(model)
        return None if price is None else price.cost(usage)

    def with_prices(self, prices: Mapping[str, ModelPrice], *, as_of: str | None = None) -> PriceTable:
        """This table with ``prices`` added or replaced."""
        return PriceTable(as_of or self.as_of, {**self.prices, **prices})

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> PriceTable:
        """``{"as_of": "2025-10-01", "models": {"gpt-5": {"input": 1.25, "output": 10, ...}}}``."""
        as_of = data.get("as_of")
        models = data.get("models")
        if not isinstance(as_of, str) or not isinstance(models, dict):
            raise ValueError("a price table needs 'as_of' (an ISO date) and 'models' (name -> prices)")
        prices: dict[str, ModelPrice] = {}
        for name, entry in models.items():
            if not isinstance(entry, dict):
                raise ValueError(f"prices of {name!r} must be an object")
            unknown = set(entry) - {"input", "output", "cached_input", "reasoning"}
            if unknown:
                raise ValueError(f"prices of {name!r} have unknown fields: {sorted(unknown)}")
            prices[str(name)] = ModelPrice(**entry)
        return cls(as_of, prices)

    @classmethod
    def load(cls, path: str | Path) -> PriceTable:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


@cache
def _shipped() -> PriceTable:
    return PriceTable.from_json(
        json.loads(files(__name__).joinpath("prices.json").read_text(encoding="utf-8"))
    )


@cache
def _load_cached(path: str) -> PriceTable:
    return PriceTable.load(path)


def default_prices() -> PriceTable:
    """``$KANAWA_PRICES`` when set (read once per path), else the shipped table."""
    path = os.environ.get(PRICES_ENVIRONMENT_VARIABLE, "").strip()
    return _load_cached(path) if path else _shipped()


def cost_of(model: str, usage: Usage, *, table: PriceTable | None = None) -> float | None:
    """USD for ``usage`` on ``model`` (``None`` when it has no price in ``table``/the default table)."""
    return (table if table is not None else default_prices()).cost(model, usage)


__all__ = ["PRICES_ENVIRONMENT_VARIABLE", "ModelPrice", "PriceTable", "cost_of", "default_prices"]
