"""Per-tenant budgets: every run a tenant starts spends from that tenant's one budget.

With ``KANAWA_TENANT_MAX_TOKENS``, ``KANAWA_TENANT_MAX_REQUESTS`` or ``KANAWA_TENANT_MAX_COST_USD`` set,
the app makes one :class:`~kanawa.agents.budget.TokenGuard` whose session is the tenant of the run
being served, and adds it to every registered agent and every agent they can hand off to (a handoff
target's model requests are the tenant's spending too). The tenant reaches the guard through a context
variable the run manager sets around each run's task, so nothing tenant-specific is put on the agents
themselves. With ``KANAWA_REDIS_URL`` the totals live in Redis and every worker shares them; a spent
budget ends the run with a ``BudgetExceeded`` error chunk before the model request it no longer
covers (seed 002 §7).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

from kanawa.agents.agent import Agent
from kanawa.agents.budget import TokenGuard
from kanawa.agents.handoffs import Handoff
from kanawa.context import RunContext
from kanawa.server.runs.servable import ServableAgent
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


def apply_tenant_budget(agents: Iterable[ServableAgent], settings: ServerSettings) -> TokenGuard | None:
    """Make the tenants' guard from ``settings`` and add it to ``agents`` (and their handoff targets);
    ``None`` when no tenant limit is configured."""
    guard = tenant_budget(
        max_tokens=settings.tenant_max_tokens,
        max_requests=settings.tenant_max_requests,
        max_cost_usd=settings.tenant_max_cost_usd,
        redis_url=settings.redis_url,
        key_prefix=settings.redis_prefix,
    )
    if guard is not None:
        guard_agents(agents, guard)
    return guard


def guard_agents(agents: Iterable[ServableAgent], guard: TokenGuard) -> None:
    """Add ``guard`` to each agent and to every agent reachable through their handoffs (once each)."""
    for agent in _reachable(agents):
        if guard not in agent.guardrails:
            agent.guardrails = (*agent.guardrails, guard)


def _reachable(agents: Iterable[ServableAgent]) -> Iterator[ServableAgent]:
    seen: set[int] = set()
    stack = list(agents)
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        for handoff in agent.handoffs:
            target = handoff.target if isinstance(handoff, Handoff) else handoff
            if isinstance(target, Agent):
                stack.append(target)


__all__ = ["CURRENT_TENANT", "apply_tenant_budget", "guard_agents", "tenant_budget", "tenant_session"]
