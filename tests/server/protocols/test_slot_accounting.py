"""The slot-accounting property (issue 30): across any sequence of opens, failures, refusals,
disconnects and cancels on every door (:mod:`.doors`), once everything is closed and every run has
ended, the tenant holds nothing — no stream slot, no run going, no MCP session beyond those it
had — in memory and with Redis.

hypothesis draws the sequence: each step is a door and what happens on it — a run read to its end,
a run that fails, a request refused before it opens, a stream cut by the client while its run goes
on, a stream held open while later steps run (the tenant's stream cap is small, so some steps meet
it: a 429 must hold nothing either), a run cancelled through ``/v1/runs/{id}/cancel`` while its
stream is read, and an unknown agent.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kanawa.server.http.app import create_app
from tests.server.agents import server_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.doors import (
    DOORS,
    Counts,
    Door,
    mcp_headers,
    mcp_session,
    request_headers,
    tenant_counts,
)
from tests.server.sse import AUTH_A

TENANT = "alpha"
MAX_STREAMS = 4
SLOW = '"0.2"'
"""The ``slow`` agent's question: 0.2 s per model step (three steps)."""
ACTIONS = ("complete", "fail", "disconnect", "hold", "cancel", "unknown-agent")
"""What a step does; besides these, ``refused:<slot>``: a hostile value in one of the door's slots."""


@pytest.fixture(scope="module", params=["embedded", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    settings = settings_for(request.param, redis, max_streams=MAX_STREAMS)
    server = LiveServer(create_app(agents=server_agents(), settings=settings)).start()
    try:
        yield server
    finally:
        server.stop()


def _run_ids(http: httpx.Client) -> set[str]:
    return {run["id"] for run in http.get("/v1/runs", headers=AUTH_A).json()["runs"]}


def _body(d: Door, action: str) -> tuple[str, bytes]:
    """The agent and the request body ``action`` sends through ``d``."""
    if action == "complete":
        return "echo", d.request("echo")
    if action == "fail":
        return "boom", d.request("boom")
    if action.startswith("refused:"):  # NaN in one of the door's places (its text, ids, metadata)
        return "echo", d.request("echo", action.removeprefix("refused:"), "NaN")
    if action == "unknown-agent":
        return "nobody", d.request("nobody")
    return "slow", d.request("slow", "text", SLOW)


def _step(http: httpx.Client, held: contextlib.ExitStack, d: Door, action: str, session: str | None) -> None:
    """One step of a sequence (module docstring)."""
    agent, body = _body(d, action)
    before = _run_ids(http) if action == "cancel" else set()
    opened = http.stream(
        "POST", d.path.format(agent=agent), content=body, headers=request_headers(d, session)
    )
    if action == "hold":
        answer = held.enter_context(opened)
        if answer.status_code == 200:
            next(answer.iter_raw(), b"")  # the stream has begun; it stays open until the sequence ends
        return
    with opened as answer:
        assert answer.status_code < 500, answer.read()[:300]
        chunks = answer.iter_raw()
        if action == "disconnect":
            next(chunks, b"")
            return  # closed here, its run still going
        if action == "cancel" and answer.status_code == 200:
            next(chunks, b"")
            for run_id in _run_ids(http) - before:
                http.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_A)
        for _ in chunks:  # to the stream's end
            pass


def _settled(live: LiveServer, expected: Counts) -> Counts:
    counts = tenant_counts(live.app, TENANT)
    for _ in range(600):  # the runs of cut and held streams end on their own (a few 0.2 s steps)
        if counts == expected:
            break
        time.sleep(0.05)
        counts = tenant_counts(live.app, TENANT)
    return counts


steps = st.lists(
    st.sampled_from(DOORS).flatmap(
        lambda d: st.tuples(st.just(d), st.sampled_from([*ACTIONS, *(f"refused:{slot}" for slot in d.slots)]))
    ),
    min_size=1,
    max_size=7,
)


@given(sequence=steps)
@settings(
    max_examples=12,  # each example is a handful of real requests and runs: seconds, not minutes
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
def test_every_count_returns_to_zero_once_all_is_closed(
    live: LiveServer, sequence: list[tuple[Door, str]]
) -> None:
    baseline = tenant_counts(live.app, TENANT)
    assert (baseline.streams, baseline.runs) == (0, 0)
    with httpx.Client(base_url=live.url, timeout=httpx.Timeout(60)) as http:
        session = mcp_session(http) if any(d.mcp for d, _ in sequence) else None
        with contextlib.ExitStack() as held:
            for d, action in sequence:
                _step(http, held, d, action, session)
        if session is not None:
            closed = http.delete("/mcp", headers={**AUTH_A, **mcp_headers(session)})
            assert closed.status_code < 300
    expected = Counts(0, 0, baseline.mcp_sessions)
    assert _settled(live, expected) == expected, json.dumps([(d.name, a) for d, a in sequence])
