"""What a model request costs: the user's prices, then the maintained ``genai-prices`` data.

:class:`PriceTable` (:mod:`.table`) answers a model's cost and its source — ``override`` for a price
the user set (``with_prices``, ``PriceTable.load``, ``KANAWA_PRICES=path.json``), else
``genai-prices <version>`` for the package's bundled, offline data (:mod:`.library`). A model with no
price has cost ``None``, never ``0``. A money budget facing such a model follows
:data:`UnpricedPolicy` (:mod:`.policy`): ``block`` (default) or ``warn``.
"""

from __future__ import annotations

import os
from functools import cache

from kanawa.llm.pricing.library import library_version
from kanawa.llm.pricing.policy import (
    UNPRICED_POLICY_ENVIRONMENT_VARIABLE,
    UnpricedPolicy,
    unpriced_message,
    unpriced_policy,
)
from kanawa.llm.pricing.table import ModelPrice, PriceSource, PriceTable, Quote
from kanawa.types import Usage

PRICES_ENVIRONMENT_VARIABLE = "KANAWA_PRICES"
"""Path of a JSON price table whose prices override genai-prices' (same format as
:meth:`PriceTable.from_json`)."""

LIBRARY_TABLE = PriceTable(as_of="", prices={})
"""genai-prices' data alone, with no override."""


@cache
def _load_cached(path: str) -> PriceTable:
    return PriceTable.load(path)


def default_prices() -> PriceTable:
    """``$KANAWA_PRICES`` (read once per path) in front of genai-prices, else genai-prices alone."""
    path = os.environ.get(PRICES_ENVIRONMENT_VARIABLE, "").strip()
    return _load_cached(path) if path else LIBRARY_TABLE


def cost_of(model: str, usage: Usage, *, table: PriceTable | None = None) -> float | None:
    """USD for ``usage`` on ``model`` (``None`` when it has no price in ``table``/the default table)."""
    return (table if table is not None else default_prices()).cost(model, usage)


def quote_of(model: str, usage: Usage, *, table: PriceTable | None = None) -> Quote | None:
    """The cost of ``usage`` on ``model`` with its price's source (``None``: no price)."""
    return (table if table is not None else default_prices()).quote(model, usage)


__all__ = [
    "LIBRARY_TABLE",
    "PRICES_ENVIRONMENT_VARIABLE",
    "UNPRICED_POLICY_ENVIRONMENT_VARIABLE",
    "ModelPrice",
    "PriceSource",
    "PriceTable",
    "Quote",
    "UnpricedPolicy",
    "cost_of",
    "default_prices",
    "library_version",
    "quote_of",
    "unpriced_message",
    "unpriced_policy",
]
