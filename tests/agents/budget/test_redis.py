"""TokenGuard on Redis (seed 002 §3-4 "Redis カウンタでセッション累計を持つ"): totals shared by several
processes exactly, atomic Lua counters with a TTL, fail-closed when Redis is unreachable, and no
password in any message."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kanawa.agents.budget import BudgetStoreError, MemoryBudgetStore, RedisBudgetStore, TokenGuard, safe_url
from kanawa.loop.errors import BudgetExceeded
from kanawa.types import ToolMessage
from tests.agents.budget._support import Counted
from tests.agents.budget.conftest import _free_port, delete_keys, start_redis_server, stop_redis_server

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
async def cleanup(redis_url: str, key_prefix: str) -> Any:
    yield
    await delete_keys(redis_url, key_prefix)


async def test_kanawa_redis_url_puts_the_session_totals_in_redis(
    redis_url: str, key_prefix: str, cleanup: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redis.asyncio import Redis

    monkeypatch.setenv("KANAWA_REDIS_URL", redis_url)
    async with TokenGuard(max_requests=10, key_prefix=key_prefix, session="s1", ttl=600) as guard:
        assert isinstance(guard.store, RedisBudgetStore)
        await Counted(tool_turns=1).agent(guard).arun("add")
    client = Redis.from_url(redis_url)
    try:
        fields = await client.hgetall(key_prefix + "s1")
        ttl_ms = await client.pttl(key_prefix + "s1")
    finally:
        await client.aclose()
    assert fields == {
        b"requests": b"2",
        b"input": b"200",
        b"output": b"20",
        b"nano_usd": b"450000",
        b"unpriced": b"0",
    }
    assert 0 < ttl_ms <= 600_000


async def test_without_redis_url_the_totals_stay_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KANAWA_REDIS_URL", raising=False)
    assert isinstance(TokenGuard(max_requests=1).store, MemoryBudgetStore)
    monkeypatch.setenv("KANAWA_REDIS_URL", "redis://127.0.0.1:6379/0")
    assert isinstance(TokenGuard(max_requests=1, redis_url="").store, MemoryBudgetStore)


async def test_the_ttl_is_refreshed_by_each_update(redis_url: str, key_prefix: str, cleanup: None) -> None:
    store = RedisBudgetStore(redis_url, key_prefix=key_prefix)
    async with TokenGuard(max_requests=10, store=store, session="s", ttl=30) as guard:
        await Counted(tool_turns=0).agent(guard).arun("add")
        first = await store.ttl("s")
        assert first is not None
        assert 0 < first <= 30
        guard.ttl = 3000
        await Counted(tool_turns=0).agent(guard).arun("add")
        second = await store.ttl("s")
        assert second is not None
        assert 30 < second <= 3000
        await guard.reset()
        assert await store.ttl("s") is None


async def test_unreachable_redis_blocks_before_the_model_call_and_hides_the_password() -> None:
    url = f"redis://:hunter2-very-secret@127.0.0.1:{_free_port()}/0"
    counted = Counted(tool_turns=0)
    async with TokenGuard(max_tokens=1000, redis_url=url) as guard:
        events: list[Any] = []

        async def consume() -> None:
            async for event in counted.agent(guard).stream("add"):
                events.append(event)

        with pytest.raises(BudgetExceeded) as caught:
            await consume()
        with pytest.raises(BudgetStoreError) as direct:
            await guard.totals()
    assert counted.requests == 0
    assert events == [caught.value.event]
    for text in (str(caught.value), repr(caught.value.event), str(direct.value), repr(guard)):
        assert "hunter2" not in text
    assert "redis://:***@127.0.0.1" in str(caught.value)
    assert caught.value.reasons[0].startswith("the budget cannot be checked, so the run is stopped")


async def test_a_redis_failure_while_counting_a_response_stops_the_run(tmp_path: Path) -> None:
    """Redis goes away while a request is in flight: the response cannot be counted, so the run stops
    (fail closed) before the tools it asked for run, and its history stays valid."""
    binary = shutil.which("redis-server")
    assert binary is not None
    port = _free_port()
    server = start_redis_server(binary, port, tmp_path)
    try:
        guard = TokenGuard(max_tokens=1000, redis_url=f"redis://127.0.0.1:{port}/0")
        counted = Counted(tool_turns=1)

        async def server_goes_away() -> None:
            stop_redis_server(server)

        counted.pause = server_goes_away
        with pytest.raises(BudgetExceeded, match="the budget cannot be checked") as caught:
            await counted.agent(guard).arun("add")
        assert counted.requests == 1
        assert counted.tool_runs == 0
        assert caught.value.stage == "tool_call"
        assert caught.value.partial_result is not None
        last = caught.value.partial_result.messages[-1]
        assert isinstance(last, ToolMessage)
        assert last.is_error
        assert not guard._uncounted
        await guard.aclose()
    finally:
        stop_redis_server(server)


async def test_a_redis_failure_while_counting_a_final_answer_stops_the_run(tmp_path: Path) -> None:
    binary = shutil.which("redis-server")
    assert binary is not None
    port = _free_port()
    server = start_redis_server(binary, port, tmp_path)
    try:
        guard = TokenGuard(max_tokens=1000, redis_url=f"redis://127.0.0.1:{port}/0")
        counted = Counted(tool_turns=0)

        async def server_goes_away() -> None:
            stop_redis_server(server)

        counted.pause = server_goes_away
        with pytest.raises(BudgetExceeded, match="the budget cannot be checked") as caught:
            await counted.agent(guard).arun("add")
        assert caught.value.stage == "model_call"
        assert caught.value.partial_result is not None
        assert caught.value.partial_result.output is None
        await guard.aclose()
    finally:
        stop_redis_server(server)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:pw123@host:6379/0", "redis://:***@host:6379/0"),
        ("redis://user:pw123@host/2", "redis://user:***@host/2"),
        ("rediss://host:6380", "rediss://host:6380"),
        ("redis://:pw@[::1]:6379", "redis://:***@[::1]:6379"),
    ],
)
def test_safe_url_masks_the_password(url: str, shown: str) -> None:
    assert safe_url(url) == shown


def test_an_empty_redis_url_for_a_store_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="needs a redis:// URL"):
        RedisBudgetStore(" ")


async def _workers(config: dict[str, Any], processes: int) -> list[dict[str, Any]]:
    config = {**config, "processes": processes, "ready_key": config["prefix"] + "ready"}
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.agents.budget._worker",
            json.dumps(config),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(processes)
    ]
    runs: list[dict[str, Any]] = []
    for proc in procs:
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        runs.extend(json.loads(out))
    return runs


async def test_several_processes_share_one_request_budget_exactly(
    redis_url: str, key_prefix: str, cleanup: None
) -> None:
    config = {"url": redis_url, "prefix": key_prefix, "session": "shared", "max_requests": 40}
    runs = await _workers({**config, "runs": 5, "tool_turns": 20}, processes=3)
    assert len(runs) == 15
    assert sum(run["requests"] for run in runs) == 40  # never one more, never one less
    assert all(run["blocked"] for run in runs)  # 315 requests wanted, 40 allowed
    async with TokenGuard(redis_url=redis_url, key_prefix=key_prefix) as guard:
        assert (await guard.totals("shared")).requests == 40


async def test_several_processes_overshoot_a_token_budget_by_at_most_one_request_per_run(
    redis_url: str, key_prefix: str, cleanup: None
) -> None:
    config = {"url": redis_url, "prefix": key_prefix, "session": "shared", "max_tokens": 2000}
    runs = await _workers({**config, "runs": 5, "tool_turns": 20}, processes=3)
    async with TokenGuard(redis_url=redis_url, key_prefix=key_prefix) as guard:
        totals = await guard.totals("shared")
    assert totals.tokens == sum(run["tokens"] for run in runs)
    assert totals.requests == sum(run["requests"] for run in runs)
    assert 2000 <= totals.tokens <= 2000 - 1 + len(runs) * 110
    assert all(run["blocked"] for run in runs)


def test_a_redis_guard_serves_sync_run_calls_each_in_its_own_loop(redis_url: str, key_prefix: str) -> None:
    """``Agent.run`` (sync) runs each call in a new event loop: the guard opens a pool per loop, and each pool
    is closed when its loop shuts down (no unclosed-connection warnings), the totals adding up."""
    script = f"""
import asyncio, gc
from kanawa.agents.budget import TokenGuard
from tests.agents.budget._support import Counted

guard = TokenGuard(max_requests=100, redis_url={redis_url!r}, key_prefix={key_prefix!r})
agent = Counted(tool_turns=1).agent(guard)
agent.run("add")
agent.run("add")

async def finish() -> None:
    print((await guard.totals()).requests)
    await guard.reset()
    await guard.aclose()

asyncio.run(finish())
gc.collect()
"""
    proc = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "4"
    assert "ResourceWarning" not in proc.stderr
    assert "unclosed" not in proc.stderr
