"""Where session totals live: the :class:`BudgetStore` protocol and the in-memory store.

A store does two atomic things per model request (DESIGN "Scale-out": budgets are atomic counters):

- :meth:`BudgetStore.reserve` — *before* the request: check the session's totals against the limits
  and, if nothing is spent, count the request, in one indivisible step. Two runs can never both take
  the last request, so a request budget is never overshot.
- :meth:`BudgetStore.add` — *after* the response: add its tokens and cost. These are known only
  afterwards, so a token or money budget can be overshot by the requests already in flight when it
  runs out — at most one per run (see :mod:`kanawa.agents.budget`).

Totals expire ``ttl`` seconds after the session's last update (a sliding window: an idle session's
budget starts afresh), in memory as in Redis.

:class:`MemoryBudgetStore` keeps totals in this process (the default without ``KANAWA_REDIS_URL``).
Its methods do not await between reading and writing a total, so under asyncio each is atomic; a
lock makes them safe across threads too (``Agent.run``, the sync face, from several threads).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kanawa.agents.budget.limits import BudgetLimits, BudgetTotals, Charge, Reservation, Verdict


class BudgetStoreError(RuntimeError):
    """The store cannot be reached or answered nonsense. The message names the store without any
    credential (a Redis URL's password is masked)."""


class BudgetStore(Protocol):
    """Session totals with atomic check-and-count (see the module docstring)."""

    async def reserve(self, key: str, limits: BudgetLimits, *, ttl: float | None) -> Reservation:
        """Count one request for ``key`` unless a limit is spent; the verdict and the totals after."""
        ...

    async def add(self, key: str, charge: Charge, *, ttl: float | None) -> BudgetTotals:
        """Add a response's tokens and cost to ``key``; the totals after."""
        ...

    async def totals(self, key: str) -> BudgetTotals:
        """The totals of ``key`` (zeros for a session never seen or expired)."""
        ...

    async def reset(self, key: str) -> None:
        """Forget ``key``'s totals."""
        ...

    async def aclose(self) -> None:
        """Release connections (the in-memory store has none)."""
        ...


def verdict_for(totals: BudgetTotals, limits: BudgetLimits) -> Verdict:
    """Whether one more request fits: tokens and money must not be spent already (``total < limit``),
    and the request must fit the request budget (``requests + 1 <= limit``). A money budget also counts
    as spent once a response came from a model without a price: the cost is then unknown, and an
    unknown cost cannot be kept under a limit (fail closed). The Redis script applies the same rule."""
    if limits.max_tokens is not None and totals.tokens >= limits.max_tokens:
        return "tokens"
    max_nano = limits.max_cost_nano
    unpriced = limits.unpriced_blocks and totals.unpriced_responses > 0
    if max_nano is not None and (totals.cost_nano_usd >= max_nano or unpriced):
        return "money"
    if limits.max_requests is not None and totals.requests + 1 > limits.max_requests:
        return "requests"
    return "ok"


@dataclass(slots=True)
class _Entry:
    totals: BudgetTotals
    expires_at: float | None


class MemoryBudgetStore:
    """Session totals in this process. Each guard without Redis gets its own; share one between
    guards (``TokenGuard(store=shared)``) to give several agents one budget. ``clock`` (seconds,
    monotonic) measures the TTL."""

    _SWEEP_EVERY = 1024
    """Expired sessions are dropped on access, and all of them every this many writes, so a
    long-running process with many short sessions does not keep them forever."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self._writes = 0

    def _current(self, key: str, now: float) -> BudgetTotals:
        entry = self._entries.get(key)
        if entry is None:
            return BudgetTotals()
        if entry.expires_at is not None and entry.expires_at <= now:
            del self._entries[key]
            return BudgetTotals()
        return entry.totals

    def _store(self, key: str, totals: BudgetTotals, ttl: float | None, now: float) -> None:
        self._entries[key] = _Entry(totals, None if ttl is None else now + ttl)
        self._writes += 1
        if self._writes % self._SWEEP_EVERY == 0:
            expired = [
                k for k, e in self._entries.items() if e.expires_at is not None and e.expires_at <= now
            ]
            for k in expired:
                del self._entries[k]

    def __len__(self) -> int:
        """Sessions held (expired ones not yet swept included)."""
        return len(self._entries)

    async def reserve(self, key: str, limits: BudgetLimits, *, ttl: float | None) -> Reservation:
        with self._lock:
            now = self._clock()
            totals = self._current(key, now)
            verdict = verdict_for(totals, limits)
            if verdict == "ok":
                t = totals
                totals = BudgetTotals(
                    requests=t.requests + 1,
                    input_tokens=t.input_tokens,
                    output_tokens=t.output_tokens,
                    cost_nano_usd=t.cost_nano_usd,
                    unpriced_responses=t.unpriced_responses,
                )
                self._store(key, totals, ttl, now)
            return Reservation(verdict, totals)

    async def add(self, key: str, charge: Charge, *, ttl: float | None) -> BudgetTotals:
        with self._lock:
            now = self._clock()
            t = self._current(key, now)
            totals = BudgetTotals(
                requests=t.requests,
                input_tokens=t.input_tokens + charge.input_tokens,
                output_tokens=t.output_tokens + charge.output_tokens,
                cost_nano_usd=t.cost_nano_usd + charge.cost_nano_usd,
                unpriced_responses=t.unpriced_responses + (1 if charge.unpriced else 0),
            )
            self._store(key, totals, ttl, now)
            return totals

    async def totals(self, key: str) -> BudgetTotals:
        with self._lock:
            return self._current(key, self._clock())

    async def reset(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)

    async def aclose(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return f"MemoryBudgetStore({len(self)} sessions)"


__all__ = ["BudgetStore", "BudgetStoreError", "MemoryBudgetStore", "verdict_for"]
