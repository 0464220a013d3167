"""Read AG-UI server-sent events in the tests: ``id:`` (``<part>:<seq>:<k>``) and the event JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from tests.server.sse import AUTH_A


@dataclass(frozen=True)
class AguiEvent:
    id: str | None
    event: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.event["type"])

    @property
    def key(self) -> tuple[int, ...]:
        assert self.id is not None
        return tuple(int(part) for part in self.id.split(":"))


def parse(buffer: bytes) -> tuple[list[AguiEvent], bytes]:
    """The complete events in ``buffer`` and the incomplete rest (comments are keep-alives)."""
    events = []
    *blocks, rest = buffer.replace(b"\r\n", b"\n").split(b"\n\n")
    for block in blocks:
        event_id, data = None, []
        for line in block.decode().split("\n"):
            if line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            events.append(AguiEvent(event_id, json.loads("\n".join(data))))
    return events, rest


async def read(response: httpx.Response, *, cut_after: int | None = None) -> list[AguiEvent]:
    """The events of a stream, to its end — or, with ``cut_after``, those complete when that many
    bytes had come (the connection is then dropped by the caller)."""
    buffer = b""
    async for piece in response.aiter_raw():
        if cut_after is not None and len(buffer) + len(piece) >= cut_after:
            buffer += piece[: cut_after - len(buffer)]
            break
        buffer += piece
    return parse(buffer)[0]


def run_input(thread: str, run: str, *messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A ``RunAgentInput`` as a client sends it (camelCase)."""
    return {"threadId": thread, "runId": run, "messages": list(messages), **fields}


def user(text: str, ident: str = "u1") -> dict[str, Any]:
    return {"id": ident, "role": "user", "content": text}


async def post(
    client: httpx.AsyncClient, agent: str, body: dict[str, Any], *, headers: dict[str, str] | None = None
) -> tuple[httpx.Response, list[AguiEvent]]:
    """POST a run and read its whole stream (the response, read, and its events)."""
    async with client.stream("POST", f"/ag-ui/{agent}", json=body, headers=headers or AUTH_A) as response:
        if response.status_code != 200:
            await response.aread()
            return response, []
        return response, await read(response)
