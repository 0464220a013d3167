"""What a money budget does with a model that has no price: :data:`UnpricedPolicy`.

``block`` (the default) refuses the request: a cost that cannot be known cannot be kept under a
limit, so the budget fails closed. ``warn`` lets the request go and yields a warning each run; the
session's cost is then a lower bound (``BudgetTotals.cost_known`` is ``False``). Set it per guard
(``TokenGuard(unpriced="warn")``) or for the process with ``KANAWA_UNPRICED_POLICY=warn``.
"""

from __future__ import annotations

import os
from typing import Literal, TypeAlias

UnpricedPolicy: TypeAlias = Literal["block", "warn"]

UNPRICED_POLICY_ENVIRONMENT_VARIABLE = "KANAWA_UNPRICED_POLICY"

_POLICIES: tuple[UnpricedPolicy, ...] = ("block", "warn")


def unpriced_policy(value: str | None) -> UnpricedPolicy:
    """``value`` (``None``: not given), else ``$KANAWA_UNPRICED_POLICY``, else ``"block"``; anything
    else is a ``ValueError``."""
    raw = value if value is not None else os.environ.get(UNPRICED_POLICY_ENVIRONMENT_VARIABLE, "")
    text = raw.strip().lower() or "block"
    for policy in _POLICIES:
        if text == policy:
            return policy
    raise ValueError(
        f"unpriced policy must be 'block' or 'warn', not {raw!r} (see {UNPRICED_POLICY_ENVIRONMENT_VARIABLE})"
    )


def unpriced_message(model: str) -> str:
    """Why a money budget cannot price ``model``, and how to give it a price."""
    return (
        f"model {model!r} has no price, so the money budget cannot be kept; give it one with "
        'KANAWA_PRICES=prices.json ({"as_of": ..., "models": {"<model>": {"input": ..., '
        '"output": ...}}}) or TokenGuard(prices=...), or set KANAWA_UNPRICED_POLICY=warn '
        '(TokenGuard(unpriced="warn")) to run it with a warning'
    )


__all__ = ["UNPRICED_POLICY_ENVIRONMENT_VARIABLE", "UnpricedPolicy", "unpriced_message", "unpriced_policy"]
