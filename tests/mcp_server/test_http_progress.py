"""``/mcp``'s progress is rate-limited: text deltas are joined and sent at most every
``PROGRESS_INTERVAL``, a tool call or the end at once — read from a real run store, in order, whether
the chunks come as a writer in this process hands them over (``sourced``: the chunk objects beside
their text) or as text only (read back, or another process's run)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from kanawa.server.http.protocols.mcp import tools as mcp_tools
from kanawa.server.runs.chunks import Chunk
from kanawa.server.runs.manager import RunManager
from kanawa.server.store.base import Entry, RunRecord
from kanawa.server.store.memory import MemoryRunStore


def _chunk(seq: int, kind: str, data: dict[str, Any], *, sourced: bool = False) -> Entry:
    text = json.dumps({"agent": "teller", "type": kind, "data": data, "seq": seq})
    source = Chunk("teller", kind, data, time.time()) if sourced else None
    return Entry(seq, text, kind == "done", source)


@pytest.mark.parametrize("sourced", [False, True], ids=["read-back", "from-writer"])
async def test_text_progress_is_joined_and_sent_at_most_every_interval(sourced: bool) -> None:
    store = MemoryRunStore()
    now = time.time()
    await store.create(RunRecord("r1", "alpha", "teller", "running", now, now))
    words = [f"w{n} " for n in range(40)]
    reports: list[tuple[float, str]] = []

    async def report(message: str) -> None:
        reports.append((time.monotonic(), message))

    async def write() -> None:
        seq = 0
        for index, word in enumerate(words):
            seq += 1
            await store.append("r1", _chunk(seq, "delta", {"text": word}, sourced=sourced))
            if index == 19:  # a tool call halfway: reported at once, after the text before it
                seq += 1
                call = {"name": "look_up", "arguments": "{}"}
                await store.append("r1", _chunk(seq, "tool_call", call, sourced=sourced))
            await asyncio.sleep(0.01)
        await store.append("r1", _chunk(seq + 1, "done", {"status": "completed"}, sourced=sourced))

    writer = asyncio.create_task(write())
    manager = cast(RunManager, SimpleNamespace(store=store))
    outcome = await mcp_tools._follow(manager, "r1", "teller", report)
    await writer
    assert outcome.status == "completed"
    messages = [message for _, message in reports]
    tool_at = messages.index("calling look_up")
    assert "".join(messages[:tool_at]) == "".join(words[:20])  # nothing lost, nothing twice, in order
    assert "".join(messages[tool_at + 1 :]) == "".join(words[20:])
    # 40 deltas ~10 ms apart: without the limit, a notification each
    assert len(messages) <= 2 * (0.01 * 40 / mcp_tools.PROGRESS_INTERVAL) + 4
    text_times = [at for at, message in reports if message != "calling look_up"]
    gaps = [later - earlier for earlier, later in itertools.pairwise(text_times)]
    quick = sum(gap < mcp_tools.PROGRESS_INTERVAL / 2 for gap in gaps)
    assert quick <= 3  # only the text flushed by the tool call, and the end


@pytest.mark.parametrize("sourced", [False, True], ids=["read-back", "from-writer"])
async def test_text_held_while_the_run_pauses_is_reported_after_the_interval(sourced: bool) -> None:
    """Text that is waiting for the interval is not kept back until the run's next chunk: a run
    that stops writing (a slow tool, a slow model) still shows what it said, one interval later."""
    store = MemoryRunStore()
    now = time.time()
    await store.create(RunRecord("r2", "alpha", "teller", "running", now, now))
    reports: list[tuple[float, str]] = []

    async def report(message: str) -> None:
        reports.append((time.monotonic(), message))

    async def write() -> None:
        await store.append("r2", _chunk(1, "delta", {"text": "first "}, sourced=sourced))
        await asyncio.sleep(0.01)
        await store.append("r2", _chunk(2, "delta", {"text": "second"}, sourced=sourced))
        await asyncio.sleep(1.0)
        await store.append("r2", _chunk(3, "done", {"status": "completed"}, sourced=sourced))

    started = time.monotonic()
    writer = asyncio.create_task(write())
    manager = cast(RunManager, SimpleNamespace(store=store))
    outcome = await mcp_tools._follow(manager, "r2", "teller", report)
    await writer
    assert outcome.status == "completed"
    assert "".join(message for _, message in reports) == "first second"
    assert reports[-1][0] - started < 0.9  # all of it before the run's end, 1 s later
