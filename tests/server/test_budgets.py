"""Per-tenant budgets through TokenGuard: every run a tenant starts spends from that tenant's budget,
another tenant's budget is untouched, and a spent budget is a ``BudgetExceeded`` error chunk before the
model request it no longer covers (seed 002 §7) — in memory and in Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from kanawa.server.http.app import create_app
from tests.server.agents import server_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A, AUTH_B, start_run


@pytest.fixture(scope="module", params=["embedded", "redis"])
def budget_live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    # calc makes 2 model requests per run (the calculator call, then the answer)
    settings = settings_for(request.param, redis, tenant_max_requests=3)
    if redis is not None:
        settings = settings_for("redis", redis, tenant_max_requests=3, redis_url=redis)
    server = LiveServer(create_app(agents=server_agents(), settings=settings)).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def budget_client(budget_live: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=budget_live.url, timeout=30) as client:
        yield client


async def test_a_tenants_runs_share_one_budget_and_another_tenant_is_untouched(
    budget_client: httpx.AsyncClient,
) -> None:
    _, first = await start_run(budget_client, "calc", "what is 2 + 3?", headers=AUTH_A)
    assert first[-1].chunk["data"]["status"] == "completed"
    _, second = await start_run(budget_client, "calc", "what is 4 + 5?", headers=AUTH_A)
    chunks = [e.chunk for e in second]
    error = next(c for c in chunks if c["type"] == "error")
    assert error["data"]["code"] == "BudgetExceeded"
    blocked = next(c for c in chunks if c["type"] == "guardrail" and c["data"]["action"] == "block")
    assert blocked["data"]["guardrail"] == "tenant_budget"
    assert chunks[-1]["data"]["status"] == "failed"
    assert not any(c["type"] == "final" for c in chunks), "the 4th request was never sent"
    # tenant beta has its own budget; a handoff target's requests are beta's spending too:
    # coordinator (1) -> evaluator (2) -> coordinator (3) completes, and then beta has nothing left
    _, handoff = await start_run(budget_client, "coordinator", "grade", headers=AUTH_B)
    assert handoff[-1].chunk["data"]["status"] == "completed"
    _, after = await start_run(budget_client, "echo", "one more", headers=AUTH_B)
    codes = [e.chunk["data"].get("code") for e in after if e.chunk["type"] == "error"]
    assert codes == ["BudgetExceeded"], "the evaluator's request was counted against beta"
