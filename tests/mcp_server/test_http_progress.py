"""``/mcp``'s progress is rate-limited: text deltas are joined and sent at most every
``PROGRESS_INTERVAL``, a tool call or the end at once — read from a real run store, in order."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from types import SimpleNamespace
from typing import Any, cast

from kanawa.server.http.protocols import mcp_tools
from kanawa.server.runs.manager import RunManager
from kanawa.server.store.base import Entry, RunRecord
from kanawa.server.store.memory import MemoryRunStore


def _chunk(seq: int, kind: str, data: dict[str, Any]) -> Entry:
    return Entry(seq, json.dumps({"agent": "teller", "type": kind, "data": data, "seq": seq}), kind == "done")


async def test_text_progress_is_joined_and_sent_at_most_every_interval() -> None:
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
            await store.append("r1", _chunk(seq, "delta", {"text": word}))
            if index == 19:  # a tool call halfway: reported at once, after the text before it
                seq += 1
                await store.append("r1", _chunk(seq, "tool_call", {"name": "look_up", "arguments": "{}"}))
            await asyncio.sleep(0.01)
        await store.append("r1", _chunk(seq + 1, "done", {"status": "completed"}))

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
