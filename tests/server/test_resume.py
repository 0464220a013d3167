"""Seed 002 §5-1 "フロントは seq ギャップ検出で再接続／リジュームを実装可能": 200 resume trials per mode.

Each trial starts a run, drops the connection after a random number of bytes (often mid-event), then
resumes with ``Last-Event-ID`` = the last complete event's id — again and again, cutting at random
points — and compares the concatenated chunks with an uninterrupted run of the same scripted agent:
same chunks in the same order, seqs exactly 1..N (no gap, no duplicate). The cuts come from a seeded
``random.Random`` (deterministic everywhere, CI included).
"""

from __future__ import annotations

import random

import httpx
import pytest

from tests.server.sse import AUTH_A, Event, comparable, read_stream, start_run


@pytest.fixture(scope="module", params=["embedded", "redis"])
def mode(request: pytest.FixtureRequest) -> str:
    """Both store modes (Celery mode reads the same Redis Streams; its API suite is test_api.py)."""
    return str(request.param)


TRIALS = 200


async def _interrupted_run(client: httpx.AsyncClient, rng: random.Random, size: int) -> list[Event]:
    got: list[Event] = []
    async with client.stream("POST", "/v1/runs", json={"agent": "story", "input": "go"}, headers=AUTH_A) as r:
        run_id = r.headers["x-run-id"]
        events, _ = await read_stream(r, cut_after_bytes=rng.randrange(1, size))
    got.extend(events)
    for _ in range(20):
        if got and got[-1].chunk["type"] == "done":
            break
        last = got[-1].id if got else 0
        assert last is not None
        cut = rng.randrange(1, size) if rng.random() < 0.6 else None
        headers = {**AUTH_A, "Last-Event-ID": str(last)}
        async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as r:
            assert r.status_code == 200
            events, _ = await read_stream(r, cut_after_bytes=cut)
        got.extend(events)
    return got


async def test_seed_5_1_resume_at_random_cut_points_loses_and_repeats_nothing(
    client: httpx.AsyncClient, mode: str
) -> None:
    _, reference = await start_run(client, "story", "go")
    expected = comparable(reference)
    size = sum(len(e.chunk) for e in reference) * 60  # rough byte size of the stream
    rng = random.Random(f"resume-{mode}")
    for trial in range(TRIALS):
        got = await _interrupted_run(client, rng, size)
        assert [e.id for e in got] == list(range(1, len(reference) + 1)), f"trial {trial}"
        assert [e.chunk["seq"] for e in got] == [e.id for e in got]
        assert comparable(got) == expected, f"trial {trial}"
