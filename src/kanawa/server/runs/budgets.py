"""Per-tenant budgets: every run a tenant starts spends from that tenant's one budget.

With ``KANAWA_TENANT_MAX_TOKENS``, ``KANAWA_TENANT_MAX_REQUESTS`` or ``KANAWA_TENANT_MAX_COST_USD`` set,
the app makes one :class:`~kanawa.agents.budget.TokenGuard` whose session is the tenant of the run
being served, and the run manager gives it to every run it starts as a run option
(:class:`~kanawa.loop.options.RunOptions`), which reaches the run's nested runs too (a handoff
target's model requests are the tenant's spending too). The agents are never changed: two apps
serving the same agents have a guard each, and each run is counted by its own app's guard alone. The
tenant reaches the guard through a context variable the run manager sets around each run's task.
With ``KANAWA_REDIS_URL`` the totals live in Redis and every worker shares them; a spent budget ends
the run with a ``BudgetExceeded`` error chunk before the model request it no longer covers (seed 002
§7).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from kanawa.agents.budget import TokenGuard
from kanawa.context import RunContext
from kanawa.server.settings import ServerSettings

CURRENT_TENANT: ContextVar[str | None] = ContextVar("kanawa_server_tenant", default=None)
"""The tenant of the run the current task serves (set by :class:`~kanawa.server.runs.manager.RunManager`)."""


def tenant_session(context: RunContext[Any]) -> str:
    """The budget session of a run: its tenant (``tenant:-`` outside a served run)."""
    return f"tenant:{CURRENT_TENANT.get() or '-'}"


def tenant_budget(
    *,
    max_tokens: int | None,
    max_requests: int | None,
    max_cost_usd: float | None,
    redis_url: str | None,
    key_prefix: str,
) -> TokenGuard | None:
    """The tenants' guard, or ``None`` when no tenant limit is configured."""
    if max_tokens is None and max_requests is None and max_cost_usd is None:
        return None
    return TokenGuard(
        max_tokens=max_tokens,
        max_requests=max_requests,
        max_cost_usd=max_cost_usd,
        session=tenant_session,
        redis_url=redis_url or "",
        key_prefix=f"{key_prefix}budget:",
        name="tenant_budget",
    )


def tenant_guard(settings: ServerSettings) -> TokenGuard | None:
    """The tenants' guard from ``settings``; ``None`` when no tenant limit is configured."""
    return tenant_budget(
        max_tokens=settings.tenant_max_tokens,
        max_requests=settings.tenant_max_requests,
        max_cost_usd=settings.tenant_max_cost_usd,
        redis_url=settings.redis_url,
        key_prefix=settings.redis_prefix,
    )


__all__ = ["CURRENT_TENANT", "tenant_budget", "tenant_guard", "tenant_session"]
