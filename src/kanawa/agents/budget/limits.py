"""What a budget allows and what a session has spent: :class:`BudgetLimits` and :class:`BudgetTotals`.

Money is kept as an integer number of nano-dollars (``10⁻⁹`` USD) everywhere a total is stored —
memory and Redis alike — so that adding the costs of many responses in any order gives the same
total, bit for bit (floating-point sums depend on the order of addition, and concurrent runs add in
whatever order they finish). Each response's cost is rounded to the nearest nano-dollar once, when
it is counted; a total is exact in that unit up to about nine million dollars (2⁵³ nano-dollars,
where Redis's Lua numbers stop being exact integers).
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import Literal, TypeAlias

NANO_USD_PER_USD = 1_000_000_000

BudgetKind: TypeAlias = Literal["tokens", "requests", "money"]
"""The three things a budget can limit."""

Verdict: TypeAlias = Literal["ok", "tokens", "requests", "money"]
"""The answer to a reservation: ``"ok"``, or the kind of budget that is spent."""


def usd_to_nano(usd: float) -> int:
    """``usd`` as whole nano-dollars, rounded to the nearest (how every cost enters a total)."""
    return round(usd * NANO_USD_PER_USD)


def _check_count(name: str, value: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int or None, not {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """The limits of one session's budget; ``None`` means unlimited.

    ``max_tokens`` counts input + output tokens of every model request (seed 002 §3-1 "トークン計算":
    system + messages + tool I/O — exactly what a request's input tokens cover, plus what the model
    wrote); ``max_requests`` counts model requests; ``max_cost_usd`` counts US dollars at the price
    table's prices. ``unpriced_blocks``: whether a response from a model without a price spends a
    money budget (the ``block`` unpriced policy, :mod:`kanawa.llm.pricing.policy`) or only makes the
    session's cost a lower bound (``warn``).
    """

    _: KW_ONLY
    max_tokens: int | None = None
    max_requests: int | None = None
    max_cost_usd: float | None = None
    unpriced_blocks: bool = True

    def __post_init__(self) -> None:
        _check_count("max_tokens", self.max_tokens)
        _check_count("max_requests", self.max_requests)
        cost = self.max_cost_usd
        if cost is not None and (
            isinstance(cost, bool)
            or not isinstance(cost, int | float)
            or not math.isfinite(cost)
            or cost <= 0
        ):
            raise ValueError(f"max_cost_usd must be a positive number of US dollars or None, not {cost!r}")

    @property
    def max_cost_nano(self) -> int | None:
        """``max_cost_usd`` in nano-dollars."""
        return None if self.max_cost_usd is None else usd_to_nano(self.max_cost_usd)

    @property
    def unlimited(self) -> bool:
        return self.max_tokens is None and self.max_requests is None and self.max_cost_usd is None


NO_LIMITS = BudgetLimits()


@dataclass(frozen=True, slots=True)
class BudgetTotals:
    """What one session has spent so far (``await guard.totals(session)``).

    ``requests`` counts model requests admitted (reserved before they were sent); ``input_tokens`` and
    ``output_tokens`` the tokens of the responses counted; ``cost_nano_usd`` their cost in
    nano-dollars; ``unpriced_responses`` the responses whose model has no price (their cost is not in
    ``cost_nano_usd``, so with any of them :attr:`cost_usd` is a lower bound).
    """

    _: KW_ONLY
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_nano_usd: int = 0
    unpriced_responses: int = 0

    @property
    def tokens(self) -> int:
        """Input + output tokens: what ``max_tokens`` limits."""
        return self.input_tokens + self.output_tokens

    @property
    def cost_usd(self) -> float:
        """The priced part of the cost in US dollars."""
        return self.cost_nano_usd / NANO_USD_PER_USD

    @property
    def cost_known(self) -> bool:
        """``True`` when every counted response had a price."""
        return self.unpriced_responses == 0


@dataclass(frozen=True, slots=True)
class Charge:
    """What one model response adds to a session (see :mod:`kanawa.agents.budget.accounting`)."""

    input_tokens: int
    output_tokens: int
    cost_nano_usd: int
    unpriced: bool
    _: KW_ONLY
    estimated: bool = False
    """``True`` when a token count was estimated because the response reported none."""


@dataclass(frozen=True, slots=True)
class Reservation:
    """The answer of a store to "may this session send one more request?": the verdict and the
    session's totals right after it (the request counted when the verdict is ``"ok"``)."""

    verdict: Verdict
    totals: BudgetTotals


__all__ = [
    "NANO_USD_PER_USD",
    "NO_LIMITS",
    "BudgetKind",
    "BudgetLimits",
    "BudgetTotals",
    "Charge",
    "Reservation",
    "Verdict",
    "usd_to_nano",
]
