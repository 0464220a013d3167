"""The server never changes an agent it serves: the trace sink of a run's ``trace`` chunks and the
tenant's budget guard are given to each run (run options), so the same agent objects served by two
apps — or by one app across several lifespans — neither stack tracers nor count a tenant's spending
twice, and come out of serving exactly as they went in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kanawa import Agent
from kanawa.server.http.app import create_app
from kanawa.trace.events import TraceEvent, Tracer
from tests.server.agents import server_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A, Event, start_run


class Recorder:
    """The user's own trace sink."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []

    def emit(self, event: TraceEvent) -> None:
        self.events.append(event)

    async def aclose(self) -> None:
        return None


@pytest.fixture
def agents() -> dict[str, Agent[Any, Any]]:
    served = server_agents()
    served["calc"].tracer = Tracer(sinks=[Recorder()])  # a user's tracer, with a sink of its own
    return served


def _trace_kinds(events: list[Event]) -> list[str]:
    return [e.chunk["data"]["event"] for e in events if e.chunk["type"] == "trace"]


@pytest.fixture
def two_apps(agents: dict[str, Agent[Any, Any]]) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two apps over the same agent objects, each with a budget of 3 model requests per tenant (calc
    makes 2 per run)."""
    first = LiveServer(
        create_app(agents=agents, settings=settings_for("embedded", None, tenant_max_requests=3))
    )
    second = LiveServer(
        create_app(agents=agents, settings=settings_for("embedded", None, tenant_max_requests=3))
    )
    first.start()
    second.start()
    try:
        yield first, second
    finally:
        first.stop()
        second.stop()


async def test_two_apps_serving_the_same_agents_leave_them_as_they_were(
    agents: dict[str, Agent[Any, Any]], two_apps: tuple[LiveServer, LiveServer]
) -> None:
    before = {name: (agent.tracer, agent.guardrails) for name, agent in agents.items()}
    for server in two_apps:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            _, events = await start_run(client, "calc", "what is 2 + 3?", headers=AUTH_A)
            assert events[-1].chunk["data"]["status"] == "completed"
            # each app's timeline gets the run's trace, from the run's own sink
            assert _trace_kinds(events).count("agent_start") == 1
            _, handed = await start_run(client, "coordinator", "grade", headers=AUTH_A)
            assert handed[-1].chunk["data"]["status"] == "failed"  # alpha's 3 requests are spent here
    after = {name: (agent.tracer, agent.guardrails) for name, agent in agents.items()}
    for name, (tracer, guardrails) in before.items():
        assert after[name][0] is tracer, f"{name}'s tracer was replaced"
        assert after[name][1] is guardrails, f"{name}'s guardrails were changed"
    recorder = agents["calc"].tracer.sinks[0]  # type: ignore[union-attr]
    assert isinstance(recorder, Recorder)
    # the user's sink saw each of the two runs once: not once per app that wrapped the tracer
    assert [e.event for e in recorder.events].count("agent_start") == 2


async def test_each_app_counts_a_tenants_spending_once_with_its_own_guard(
    two_apps: tuple[LiveServer, LiveServer],
) -> None:
    first, second = two_apps
    async with httpx.AsyncClient(base_url=first.url, timeout=30) as client:
        _, events = await start_run(client, "calc", "what is 2 + 3?", headers=AUTH_A)
        assert events[-1].chunk["data"]["status"] == "completed"  # 2 of the first app's 3
    async with httpx.AsyncClient(base_url=second.url, timeout=30) as client:
        # had the first app's guard been put on the agent, this run's requests would count on it
        # too, and the second app's guard would have seen the first app's 2 requests: 4 > 3
        _, events = await start_run(client, "calc", "what is 4 + 5?", headers=AUTH_A)
        assert events[-1].chunk["data"]["status"] == "completed"
        assert not [e for e in events if e.chunk["type"] == "error"]
    async with httpx.AsyncClient(base_url=first.url, timeout=30) as client:
        _, events = await start_run(client, "calc", "and 1 + 1?", headers=AUTH_A)  # 2 + 2 > 3 here
        codes = [e.chunk["data"].get("code") for e in events if e.chunk["type"] == "error"]
        assert codes == ["BudgetExceeded"]


def test_an_apps_lifespans_one_after_another_never_wrap_an_agents_tracer(
    agents: dict[str, Agent[Any, Any]],
) -> None:
    tracer = agents["calc"].tracer
    app = create_app(agents=agents, settings=settings_for("embedded", None, tenant_max_requests=3))
    for _ in range(3):
        server = LiveServer(app).start()
        server.stop()
    assert agents["calc"].tracer is tracer
    assert all(agent.guardrails == () or agent.name in ("warned", "blocked") for agent in agents.values())
    assert len(agents["warned"].guardrails) == 1
