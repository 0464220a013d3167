"""Budgets: a session's tokens, model requests and money, kept under limits by :class:`TokenGuard`.

Seed 002 §3-1 ("トークン計算": system + messages + tool I/O), §3-4 (``TokenGuard`` is a ``Guardrail``
with session totals in Redis counters; ``warn`` → a chat bubble, ``block`` → stop before the tool
runs) and §7 (``GuardrailViolation``); beyond the seed, money, from the dated price table of
:mod:`kanawa.llm.pricing`.

The story of one model request under a guard
(``Agent(..., guardrails=[TokenGuard(max_tokens=..., max_requests=..., max_cost_usd=...)])``):

1. before the request is sent, the guard names the run's session (a string, or a function of the
   :class:`~kanawa.context.RunContext`) and asks its store to *reserve* one request: in one atomic
   step the store checks that no limit is spent and counts the request. A spent budget raises
   :class:`~kanawa.loop.errors.BudgetExceeded` (the stream yields its ``GuardrailTripped`` event
   first); nothing is sent;
2. after the response, its tokens (the provider's usage, estimated offline when it reports none) and
   its cost (nano-dollar integers) are added to the session (:mod:`.accounting`); crossing ``warn_at``
   of a limit, or the limit, yields a warning the client can show;
3. before the tools the response asked for run, the session's totals are read again: once the token or
   money budget is spent, the tools do not run.

Where totals live (:mod:`.store`): in this process by default; with ``KANAWA_REDIS_URL`` (or
``redis_url=``) in Redis hashes updated by Lua scripts (:mod:`.redis_store`), with a TTL, so every
process sharing the server shares one budget. An unreachable store blocks (fail closed).

How far a budget can be overshot — exactly:

- **requests: never.** The reservation counts the request only if it fits, atomically.
- **tokens and money: by the requests in flight when the budget runs out, at most one per run.** A
  request is admitted while its session's total is below the limit; its usage is known only when it
  returns. So with ``R`` runs of a session in flight (any processes), the final total is below
  ``limit + R × (the largest usage of one request)``; a single run overshoots by at most its last
  request. After the total reaches the limit no further request of the session is sent and no tool
  of a response counted after that point runs.

A request counts once it is reserved, even if the model call then fails or a later guardrail in the
chain blocks it (so budgets err towards stopping early, never late).
"""

from kanawa.agents.budget.accounting import charge_for
from kanawa.agents.budget.guard import DEFAULT_TTL_SECONDS, SessionKey, TokenGuard
from kanawa.agents.budget.limits import BudgetKind, BudgetLimits, BudgetTotals, Charge, Reservation
from kanawa.agents.budget.redis_store import REDIS_URL_ENVIRONMENT_VARIABLE, RedisBudgetStore, safe_url
from kanawa.agents.budget.store import BudgetStore, BudgetStoreError, MemoryBudgetStore

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "REDIS_URL_ENVIRONMENT_VARIABLE",
    "BudgetKind",
    "BudgetLimits",
    "BudgetStore",
    "BudgetStoreError",
    "BudgetTotals",
    "Charge",
    "MemoryBudgetStore",
    "RedisBudgetStore",
    "Reservation",
    "SessionKey",
    "TokenGuard",
    "charge_for",
    "safe_url",
]
