"""``kanawa models``: the model catalogue with each model's prices and where they come from.

One row per catalogue card (or per model string given on the command line, catalogued or not):
context window, maximum output, and the USD per million tokens of fresh input, cache reads, cache
writes and output — each read through the price table a run uses (:func:`default_prices`:
``KANAWA_PRICES`` overrides in front of genai-prices), so the figures are the ones a budget charges.
The heading names the price data (the genai-prices version — the package carries no date of its
data, so its version is the data's version — and the override file's ``as_of``) and the catalogue's
date. Prices are sampled at 100k tokens, under every provider's long-context tier, so they are the
base rates.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from kanawa.cli.tables import Column, fitted_table
from kanawa.llm.catalogue import card_for, catalogue
from kanawa.llm.pricing import PRICES_ENVIRONMENT_VARIABLE, PriceTable, default_prices, library_version
from kanawa.types import Usage

_SAMPLE = 100_000
"""Tokens priced per figure (scaled to a million): below every long-context tier."""


def per_million(table: PriceTable, model: str, usage: Usage) -> float | None:
    """USD per million tokens of ``usage`` (a sample of :data:`_SAMPLE` tokens) on ``model``."""
    cost = table.cost(model, usage)
    return None if cost is None else cost * (1_000_000 / _SAMPLE)


def rates(table: PriceTable, model: str) -> tuple[float | None, float | None, float | None, float | None]:
    """Input, cache-read, cache-write and output USD per million tokens (``None``: no price)."""
    n = _SAMPLE
    return (
        per_million(table, model, Usage(input_tokens=n)),
        per_million(table, model, Usage(input_tokens=n, cached_tokens=n)),
        per_million(table, model, Usage(input_tokens=n, cache_write_tokens=n)),
        per_million(table, model, Usage(output_tokens=n)),
    )


COLUMNS = (
    Column("model", key=True),
    Column("window", "right", drop=3),
    Column("max out", "right", drop=5),
    Column("input", "right", drop=1),
    Column("cache read", "right", drop=4),
    Column("cache write", "right", drop=6),
    Column("output", "right", drop=2),
    Column("price from", wrap=True, drop=7),
)
"""The model is the key; at 80 columns the price source, cache-write price and maximum output give
way first, then the cache-read price, the window, output and input prices (never the model)."""


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${value:,.4g}"


def price_heading(table: PriceTable) -> str:
    """Where the prices come from: the genai-prices version and the override table's date."""
    version = library_version()
    parts = [
        f"genai-prices {version} (bundled data, read offline)" if version else "genai-prices not installed"
    ]
    if table.prices:
        parts.insert(0, f"overrides from ${PRICES_ENVIRONMENT_VARIABLE}, as of {table.as_of}")
    return "prices: " + "; then ".join(parts)


def show_models(console: Console, models: Sequence[str] = ()) -> int:
    """Print the table (the catalogue, or ``models``); exit code 0."""
    table = default_prices()
    names = list(models) or [f"{card.provider}:{name}" for name, card in catalogue().cards.items()]
    console.print(price_heading(table))
    console.print(f"catalogue: as of {catalogue().as_of}")
    rows = []
    for model in names:
        card = card_for(model)
        source = table.source_of(model)
        rows.append(
            [
                model,
                "–" if card is None else f"{card.context_window:,}",
                "–" if card is None else f"{card.max_output:,}",
                *(_usd(v) for v in rates(table, model)),
                "no price" if source is None else str(source),
            ]
        )
    grid = fitted_table(console, COLUMNS, rows, show_edge=False, header_style="bold")
    console.print(grid)
    console.print("USD per million tokens; '–' is unknown, never free.", style="dim")
    return 0


__all__ = ["per_million", "price_heading", "rates", "show_models"]
