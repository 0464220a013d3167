"""A small SSE client over httpx for the tests: parse ``id:``/``data:`` blocks, cut connections."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

KEY_A = "kw-test-alpha-0123456789abcdef"
KEY_B = "kw-test-beta-0123456789abcdef"
AUTH_A = {"Authorization": f"Bearer {KEY_A}"}
AUTH_B = {"Authorization": f"Bearer {KEY_B}"}


@dataclass
class Event:
    id: int | None
    chunk: dict[str, Any]


def parse_blocks(buffer: bytes) -> tuple[list[Event], bytes, int]:
    """Complete events in ``buffer``, the incomplete rest, and how many comment (ping) blocks were seen."""
    events: list[Event] = []
    pings = 0
    text = buffer.replace(b"\r\n", b"\n")
    *blocks, rest = text.split(b"\n\n")
    for block in blocks:
        event_id: int | None = None
        data = []
        comment = False
        for line in block.decode().split("\n"):
            if line.startswith("id:"):
                event_id = int(line[3:].strip())
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif line.startswith(":"):
                comment = True
        if data:
            events.append(Event(event_id, json.loads("\n".join(data))))
        elif comment:
            pings += 1
    return events, rest, pings


async def read_stream(
    response: httpx.Response, *, cut_after_bytes: int | None = None
) -> tuple[list[Event], int]:
    """Read SSE events until the stream ends (or ``cut_after_bytes`` have arrived: the connection is
    then dropped and only complete events count). Returns the events and the ping count."""
    buffer = b""
    seen = 0
    events: list[Event] = []
    pings = 0
    async for piece in response.aiter_raw():
        if cut_after_bytes is not None and seen + len(piece) >= cut_after_bytes:
            buffer += piece[: max(0, cut_after_bytes - seen)]
            break
        seen += len(piece)
        buffer += piece
        got, buffer, more = parse_blocks(buffer)
        events.extend(got)
        pings += more
        if events and events[-1].chunk["type"] == "done":
            return events, pings
    got, _, more = parse_blocks(buffer)
    events.extend(got)
    return events, pings + more


async def start_run(
    client: httpx.AsyncClient, agent: str, text: str, *, headers: dict[str, str] | None = None
) -> tuple[str, list[Event]]:
    """Start a run and read its whole stream."""
    async with client.stream(
        "POST", "/v1/runs", json={"agent": agent, "input": text}, headers=headers or AUTH_A
    ) as r:
        assert r.status_code == 200, await r.aread()
        run_id = r.headers["x-run-id"]
        events, _ = await read_stream(r)
    return run_id, events


async def resume(
    client: httpx.AsyncClient, run_id: str, last: int, *, headers: dict[str, str] | None = None
) -> list[Event]:
    async with client.stream(
        "GET", f"/v1/runs/{run_id}/events", headers={**(headers or AUTH_A), "Last-Event-ID": str(last)}
    ) as r:
        assert r.status_code == 200, await r.aread()
        events, _ = await read_stream(r)
    return events


def comparable(events: list[Event]) -> list[tuple[Any, ...]]:
    """What must be equal between two runs of the same scripted agent: chunk types and payloads,
    without times, ids and durations (trace chunks compare by their event name)."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        chunk = event.chunk
        data = chunk["data"]
        if chunk["type"] == "trace":
            out.append(("trace", data["event"], data.get("tool")))
        elif isinstance(data, dict):
            out.append((chunk["type"], chunk["agent"], {k: v for k, v in data.items() if k != "duration_ms"}))
        else:
            out.append((chunk["type"], chunk["agent"], data))
    return out
