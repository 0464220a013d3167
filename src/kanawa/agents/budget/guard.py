"""``TokenGuard``: a guardrail that keeps a session's tokens, requests and money under a budget.

Seed 002 §3-4: "TokenGuard は Guardrail のサブクラス。Redis カウンタでセッション累計を持つ" and
"``action:"warn"`` … Chat バブル、``"block"`` はツール実行前に即返却". The guard sits at three points
of the loop's :class:`~kanawa.loop.hooks.RunHooks`:

- ``before_request`` — reserves the request atomically (the store counts it only if no limit is
  spent); a spent budget raises :class:`~kanawa.loop.errors.BudgetExceeded` there, so the model
  request is never sent;
- ``after_response`` — charges the response's tokens and cost (:mod:`.accounting`) and warns when the
  session crosses ``warn_at`` of a limit, or the limit itself;
- ``before_tools`` — a turn's tools do not run once the response that asked for them spent the
  budget (the seed's ``_execute_tool`` check).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from typing import Any, Literal, Self

from kanawa.agents.budget.accounting import charge_for
from kanawa.agents.budget.limits import NO_LIMITS, BudgetKind, BudgetLimits, BudgetTotals, Verdict
from kanawa.agents.budget.redis_store import (
    DEFAULT_KEY_PREFIX,
    REDIS_URL_ENVIRONMENT_VARIABLE,
    RedisBudgetStore,
)
from kanawa.agents.budget.store import BudgetStore, BudgetStoreError, MemoryBudgetStore, verdict_for
from kanawa.agents.guardrails import Guardrail
from kanawa.context import RunContext
from kanawa.llm.pricing import PriceTable, UnpricedPolicy, default_prices, unpriced_message, unpriced_policy
from kanawa.loop.errors import BudgetExceeded
from kanawa.loop.events import FinalResponse, GuardrailStage, GuardrailTripped
from kanawa.loop.hooks import Warnings
from kanawa.tools.base import ToolResult
from kanawa.types import LLMResponse, Message, ToolCall

SessionKey = str | Callable[[RunContext[Any]], str]
"""A session's name, or a function of the run's context that names it (``lambda ctx: ctx.deps.user``)."""

DEFAULT_TTL_SECONDS = 86_400.0
"""A session's totals are forgotten after a day without requests."""

_NOUN = {"tokens": "token", "requests": "request", "money": "money"}


class TokenGuard(Guardrail):
    """A :class:`~kanawa.agents.guardrails.Guardrail` (seed 002 §3-4) on a session's spending.

    ``TokenGuard(max_tokens=50_000, max_cost_usd=2.0, session=lambda ctx: ctx.deps.user_id)`` and
    ``Agent(..., guardrails=[guard])``. Every run through the guard adds to its session's totals; runs
    of one session — in this process, or with Redis in any process — share one budget.

    Args:
        max_tokens: input + output tokens of all model requests (seed 002 §3-1: system + messages +
            tool I/O, as the provider reports them; estimated offline when a response reports none).
        max_requests: model requests. Reserved atomically before each request: never overshot.
        max_cost_usd: US dollars at ``prices`` (default: the shipped, dated table, or
            ``KANAWA_PRICES`` in front of genai-prices, as set when the guard is made). What a
            model without a price does to a money budget is ``unpriced``.
        unpriced: ``"block"`` (default: an unknown cost cannot be kept under a limit, so the
            request is refused with a message naming the model and how to price it) or ``"warn"``
            (the request goes on with a warning, and the session's cost becomes a lower bound).
            Default: ``$KANAWA_UNPRICED_POLICY``, else ``"block"``.
        session: the session's name, or a function of the :class:`~kanawa.context.RunContext` giving
            it (from ``deps``, the agent's name …). Default ``"default"``: every run shares one budget.
        action: ``"block"`` (default) ends the run with :class:`~kanawa.loop.errors.BudgetExceeded`
            before the model request or the tools the budget no longer covers; ``"warn"`` lets the run
            go on and yields a :class:`~kanawa.loop.events.GuardrailTripped` warning instead.
        warn_at: the fraction of a limit at which a warning is yielded first (``None``: no early
            warning). A warning is yielded by the run whose request crossed the line, and at the first
            request of each later run while the session stays past it.
        redis_url: share totals through Redis (default: ``$KANAWA_REDIS_URL``; without either, or with
            ``redis_url=""``, totals stay in this process). Unreachable Redis blocks (fail closed).
        key_prefix: prefix of the Redis keys (``<prefix><session>``).
        ttl: seconds of inactivity after which a session's totals are forgotten (``None``: never).
        store: a :class:`~kanawa.agents.budget.store.BudgetStore` to use instead (e.g. one
            :class:`MemoryBudgetStore` shared by guards with different limits).
        name: the guardrail name events carry.
    """

    def __init__(
        self,
        *,
        max_tokens: int | None = None,
        max_requests: int | None = None,
        max_cost_usd: float | None = None,
        session: SessionKey = "default",
        action: Literal["warn", "block"] = "block",
        warn_at: float | None = 0.8,
        prices: PriceTable | None = None,
        unpriced: UnpricedPolicy | None = None,
        redis_url: str | None = None,
        key_prefix: str = DEFAULT_KEY_PREFIX,
        ttl: float | None = DEFAULT_TTL_SECONDS,
        store: BudgetStore | None = None,
        name: str = "token_guard",
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a guard needs a non-empty name")
        # A Guardrail with no content checks of its own: it looks only at spending, through the hooks
        # below (validate_input / validate_output pass everything).
        super().__init__(action=action, stages=(), name=name)
        self.unpriced: UnpricedPolicy = unpriced_policy(unpriced)
        self.limits = BudgetLimits(
            max_tokens=max_tokens,
            max_requests=max_requests,
            max_cost_usd=max_cost_usd,
            unpriced_blocks=self.unpriced == "block",
        )
        if warn_at is not None and (
            isinstance(warn_at, bool)
            or not isinstance(warn_at, int | float)
            or not math.isfinite(warn_at)
            or not 0 < warn_at <= 1
        ):
            raise ValueError(f"warn_at must be a fraction in (0, 1] or None, not {warn_at!r}")
        if ttl is not None and (
            isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl) or ttl <= 0
        ):
            raise ValueError(f"ttl must be a positive number of seconds or None, not {ttl!r}")
        if isinstance(session, str):
            if not session:
                raise ValueError("session must be a non-empty string or a function of the run context")
        elif not callable(session):
            raise TypeError("session must be a string or a function of the run context")
        self.warn_at = warn_at
        self.ttl = ttl
        self._session = session
        self._prices = prices if prices is not None else default_prices()
        limits: tuple[tuple[BudgetKind, int | None], ...] = (
            ("tokens", self.limits.max_tokens),
            ("requests", self.limits.max_requests),
            ("money", self.limits.max_cost_nano),
        )
        self._caps: dict[BudgetKind, int] = {kind: cap for kind, cap in limits if cap is not None}
        self._uncounted: dict[str, BudgetStoreError] = {}
        if store is None:
            url = redis_url if redis_url is not None else os.environ.get(REDIS_URL_ENVIRONMENT_VARIABLE, "")
            store = RedisBudgetStore(url, key_prefix=key_prefix) if url.strip() else MemoryBudgetStore()
        self.store: BudgetStore = store

    # ------------------------------------------------------------------------------------- public

    @property
    def prices(self) -> PriceTable:
        """The price table costs are computed with."""
        return self._prices

    def session_of(self, context: RunContext[Any]) -> str:
        """The session a run belongs to."""
        session = self._session
        if isinstance(session, str):
            return session
        key = session(context)
        if not isinstance(key, str) or not key:
            raise TypeError(f"the session function must return a non-empty string, not {key!r}")
        return key

    async def totals(self, session: str | None = None) -> BudgetTotals:
        """The session's totals (``session`` may be omitted when the guard was given a fixed name).
        Raises :class:`~kanawa.agents.budget.store.BudgetStoreError` when the store is unreachable."""
        return await self.store.totals(self._named(session))

    async def reset(self, session: str | None = None) -> None:
        """Forget the session's totals: its budget starts afresh."""
        await self.store.reset(self._named(session))

    async def aclose(self) -> None:
        """Close the store's connections (Redis)."""
        await self.store.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        limits = ", ".join(
            f"{f.name}={getattr(self.limits, f.name)!r}" for f in dataclasses.fields(self.limits)
        )
        return f"TokenGuard({limits}, action={self.action!r}, store={self.store!r})"

    # ---------------------------------------------------------------------------------- the hooks

    async def check_input(self, messages: Sequence[Message], context: RunContext[Any]) -> Warnings:
        return ()

    async def before_request(self, step: int, context: RunContext[Any]) -> Warnings:
        """Reserve the request; block (before it is sent) when a limit is spent."""
        key = self.session_of(context)
        blocking = self.action == "block"
        money = self.limits.max_cost_usd is not None
        warnings: list[GuardrailTripped] = []
        self._raise_uncounted(step, "model_call", context)
        if money and not self.prices.has_price(context.model_name):
            reason = unpriced_message(context.model_name)
            if blocking and self.unpriced == "block":
                raise self._blocked(step, "model_call", reason)
            if step <= 1:
                warnings.append(self._event(step, "model_call", "warn", reason))
        try:
            reservation = await self.store.reserve(key, self.limits if blocking else NO_LIMITS, ttl=self.ttl)
        except BudgetStoreError as exc:
            raise self._unreachable(step, "model_call", exc) from exc
        after = reservation.totals
        if reservation.verdict != "ok":
            raise self._blocked(step, "model_call", self._spent(reservation.verdict, after))
        before = dataclasses.replace(after, requests=after.requests - 1)
        warnings.extend(self._crossings(step, "model_call", before, after, ("requests",)))
        if step <= 1:
            warnings.extend(self._standing(step, after, ("tokens", "money")))
        return warnings

    async def after_response(self, step: int, response: LLMResponse, context: RunContext[Any]) -> Warnings:
        """Charge the response's tokens and cost to the session.

        A response the store could not count stops the run (fail closed): at once when it is a final
        answer; when it asks for tools, at ``before_tools``, where the loop answers the unrun calls,
        so the run's history stays valid to continue from."""
        charge = charge_for(response, context, self.prices)
        try:
            after = await self.store.add(self.session_of(context), charge, ttl=self.ttl)
        except BudgetStoreError as exc:
            if not response.message.tool_calls:
                raise self._unreachable(step, "model_call", exc) from exc
            self._defer_uncounted(context.run_id, exc)
            return ()
        before = BudgetTotals(
            requests=after.requests,
            input_tokens=after.input_tokens - charge.input_tokens,
            output_tokens=after.output_tokens - charge.output_tokens,
            cost_nano_usd=after.cost_nano_usd - charge.cost_nano_usd,
            unpriced_responses=after.unpriced_responses - (1 if charge.unpriced else 0),
        )
        warnings = self._crossings(step, "model_call", before, after, ("tokens", "money"))
        if charge.unpriced and self.limits.max_cost_usd is not None:
            model = response.model or context.model_name
            warnings.append(
                self._event(
                    step, "model_call", "warn", f"model {model!r} has no price: the session's cost is unknown"
                )
            )
        return warnings

    async def before_tools(self, step: int, calls: Sequence[ToolCall], context: RunContext[Any]) -> Warnings:
        """Tools do not run once the session's token or money budget is spent (seed 002 §3-1: the
        TokenGuard check in ``_execute_tool``; §3-4: ``block`` returns before the tool runs)."""
        self._raise_uncounted(step, "tool_call", context)
        limits = self.limits
        if self.action != "block" or (limits.max_tokens is None and limits.max_cost_usd is None):
            return ()
        try:
            totals = await self.store.totals(self.session_of(context))
        except BudgetStoreError as exc:
            raise self._unreachable(step, "tool_call", exc) from exc
        verdict = verdict_for(
            totals,
            BudgetLimits(
                max_tokens=limits.max_tokens,
                max_requests=None,
                max_cost_usd=limits.max_cost_usd,
                unpriced_blocks=limits.unpriced_blocks,
            ),
        )
        if verdict != "ok":
            raise self._blocked(step, "tool_call", self._spent(verdict, totals))
        return ()

    async def after_tools(
        self, step: int, results: Sequence[ToolResult], context: RunContext[Any]
    ) -> Warnings:
        return ()

    async def check_output(self, final: FinalResponse[Any], context: RunContext[Any]) -> Warnings:
        self._raise_uncounted(final.step, "output", context)
        return ()

    # ------------------------------------------------------------------------------------ helpers

    _UNCOUNTED_LIMIT = 1024
    """Runs whose uncounted response is remembered; a run that ended without another check (tools
    left pending, a termination policy) leaves its entry behind, so the oldest are dropped."""

    def _defer_uncounted(self, run_id: str, exc: BudgetStoreError) -> None:
        uncounted = self._uncounted
        uncounted[run_id] = exc
        while len(uncounted) > self._UNCOUNTED_LIMIT:
            del uncounted[next(iter(uncounted))]

    def _raise_uncounted(self, step: int, stage: GuardrailStage, context: RunContext[Any]) -> None:
        if self._uncounted:
            failed = self._uncounted.pop(context.run_id, None)
            if failed is not None:
                raise self._unreachable(step, stage, failed) from failed

    def _named(self, session: str | None) -> str:
        if session is not None:
            return session
        if isinstance(self._session, str):
            return self._session
        raise ValueError("this guard names sessions with a function: pass the session's name")

    def _limit(self, kind: BudgetKind) -> int | None:
        return self._caps.get(kind)

    @staticmethod
    def _used(totals: BudgetTotals, kind: BudgetKind) -> int:
        if kind == "tokens":
            return totals.tokens
        if kind == "requests":
            return totals.requests
        return totals.cost_nano_usd

    def _crossings(
        self,
        step: int,
        stage: GuardrailStage,
        before: BudgetTotals,
        after: BudgetTotals,
        kinds: tuple[BudgetKind, ...],
    ) -> list[GuardrailTripped]:
        """Warnings for the lines (``warn_at`` of a limit, the limit) this change crossed."""
        warnings = []
        for kind in kinds:
            limit = self._limit(kind)
            if limit is None:
                continue
            was, now = self._used(before, kind), self._used(after, kind)
            if was < limit <= now:
                warnings.append(self._event(step, stage, "warn", self._reached(kind, after)))
            elif self.warn_at is not None and was < self.warn_at * limit <= now:
                warnings.append(self._event(step, stage, "warn", self._near(kind, after)))
        return warnings

    def _standing(
        self, step: int, totals: BudgetTotals, kinds: tuple[BudgetKind, ...]
    ) -> list[GuardrailTripped]:
        """At a run's first request: warnings for lines the session is already past."""
        warnings = []
        for kind in kinds:
            limit = self._limit(kind)
            if limit is None:
                continue
            used = self._used(totals, kind)
            if used >= limit:  # only reachable with action="warn": "block" refused the reservation
                warnings.append(self._event(step, "model_call", "warn", self._reached(kind, totals)))
            elif self.warn_at is not None and used >= self.warn_at * limit:
                warnings.append(self._event(step, "model_call", "warn", self._near(kind, totals)))
        return warnings

    def _amounts(self, kind: BudgetKind, totals: BudgetTotals) -> str:
        limits = self.limits
        if kind == "tokens":
            return f"{totals.tokens:,} of {limits.max_tokens:,} tokens"
        if kind == "requests":
            return f"{totals.requests:,} of {limits.max_requests:,} model requests"
        return f"${totals.cost_usd:.6f} of ${limits.max_cost_usd:.6f}"

    def _near(self, kind: BudgetKind, totals: BudgetTotals) -> str:
        limit = self._limit(kind) or 1
        percent = int(100 * self._used(totals, kind) / limit)
        return f"the session has used {percent}% of its {_NOUN[kind]} budget ({self._amounts(kind, totals)})"

    def _reached(self, kind: BudgetKind, totals: BudgetTotals) -> str:
        then = "further model requests will be blocked" if self.action == "block" else "the run goes on"
        return f"the session has reached its {_NOUN[kind]} budget ({self._amounts(kind, totals)}); {then}"

    def _spent(self, verdict: Verdict, totals: BudgetTotals) -> str:
        if verdict == "ok":  # pragma: no cover - callers check the verdict first
            raise AssertionError("a budget that is not spent has no reason to block")
        if verdict == "money" and totals.unpriced_responses and self.limits.unpriced_blocks:
            return "the session's cost is unknown (a response came from a model without a price)"
        return f"the session's {_NOUN[verdict]} budget is spent ({self._amounts(verdict, totals)})"

    def _event(
        self, step: int, stage: GuardrailStage, action: Literal["warn", "block"], reason: str
    ) -> GuardrailTripped:
        return GuardrailTripped(step, stage, self.name, action, (reason,))

    def _blocked(self, step: int, stage: GuardrailStage, reason: str) -> BudgetExceeded:
        return BudgetExceeded(self._event(step, stage, "block", reason))

    def _unreachable(self, step: int, stage: GuardrailStage, exc: BudgetStoreError) -> BudgetExceeded:
        return self._blocked(step, stage, f"the budget cannot be checked, so the run is stopped: {exc}")


__all__ = ["DEFAULT_TTL_SECONDS", "SessionKey", "TokenGuard"]
