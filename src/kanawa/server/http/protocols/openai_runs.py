"""What both OpenAI protocols need of kanawa's runs: the caller's manager, a response's place in a
run, and the run's chunks of one response.

A run can answer several OpenAI responses: one that ends with calls for the client's tools (or that
completed) is continued by the client's next request (``previous_response_id``), and the same run
goes on, writing its chunks after the first response's ``done`` chunk. So a response is a *part*
of a run: the chunks after a seq (``after``, 0 for the first) up to the next ``done`` chunk. Its
id says both, ``resp_<run id>`` or ``resp_<run id>_<after>``: derived, never stored, so any
process — a second web worker, one with Redis — finds the same response from the id alone, and the
events of a response are the same whenever they are translated (a stream resumes by sequence
number without a gap or a duplicate).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Final

from fastapi import Request

from kanawa.server.event_stream import OpenStreams, TooManyStreams
from kanawa.server.http.protocols.openai_errors import OpenAIError
from kanawa.server.runs import RunManager
from kanawa.server.store import ChunksExpired, RunRecord, RunStore

JSON: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""One encoder for every event (``json.dumps`` with options builds a new one per call)."""
_PART: Final = re.compile(r"^(?P<prefix>[a-z]+)[_-](?P<run>[0-9a-f]{32})(?:_(?P<after>[0-9]{1,18}))?$")


@dataclass(frozen=True, slots=True)
class Part:
    """One response of a run: its chunks after seq ``after``, up to the next ``done`` chunk."""

    run_id: str
    after: int = 0

    def id(self, prefix: str) -> str:
        return f"{prefix}_{self.run_id}" if self.after == 0 else f"{prefix}_{self.run_id}_{self.after}"

    @classmethod
    def parse(cls, text: str, prefix: str) -> Part | None:
        match = _PART.match(text)
        if match is None or match["prefix"] != prefix.rstrip("_-"):
            return None
        return cls(match["run"], int(match["after"] or 0))


def manager_of(request: Request) -> RunManager:
    manager: RunManager = request.app.state.manager
    return manager


def admit_stream(request: Request, tenant: str, run_id: str | None) -> tuple[str, str | None]:
    """Count a connection about to wait on a run against the stream caps (429 beyond them)."""
    streams: OpenStreams = request.app.state.streams
    try:
        streams.admit(tenant, run_id)
    except TooManyStreams as exc:
        raise OpenAIError(429, str(exc), headers={"Retry-After": "1"}) from None
    return tenant, run_id


async def until_shutdown(request: Request, source: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``source``'s frames until it ends — or the server shuts down: then the stream ends where it
    is (a client resumes it elsewhere), so uvicorn's graceful shutdown is not held up by a run that
    would go on for long. One timeout context per stream, moved to now at shutdown; no task."""
    streams: OpenStreams = request.app.state.streams
    limit = asyncio.timeout(None)

    def stop() -> None:
        limit.reschedule(asyncio.get_running_loop().time())

    streams.ends_at_shutdown(stop)
    try:
        async with limit:
            async for frame in source:
                yield frame
    except TimeoutError:
        return
    finally:
        streams.forget(stop)
        with contextlib.suppress(Exception):
            await source.aclose()  # type: ignore[attr-defined]


def release_stream(request: Request, admitted: tuple[str, str | None]) -> None:
    streams: OpenStreams = request.app.state.streams
    streams.release(*admitted)


async def owned_part(
    request: Request, tenant: str, part: Part | None, *, kind: str = "response"
) -> tuple[RunRecord, Part]:
    """The record of the run ``part`` belongs to, when it is ``tenant``'s and the part exists; else
    404 — another tenant's response exactly like a missing one."""
    missing = OpenAIError(404, f"no {kind} with that id", code="not_found")
    if part is None:
        raise missing
    store = manager_of(request).store
    record = await store.get(tenant, part.run_id)
    if record is None or not await _starts_part(store, record, part.after):
        raise missing
    return record, part


async def _starts_part(store: RunStore, record: RunRecord, after: int) -> bool:
    """Whether chunk ``after`` is a ``done`` chunk of the run (where a later response begins)."""
    if after == 0:
        return True
    if after > record.last_seq:
        return False
    batches = store.read_batches(record.run_id, after=after - 1)
    try:
        async for batch in batches:
            return any(entry.seq == after and entry.terminal for entry in batch)
    except ChunksExpired:
        return False
    finally:
        with contextlib.suppress(Exception):
            await batches.aclose()  # type: ignore[attr-defined]
    return False


async def part_chunks(
    store: RunStore, part: Part, *, until: int | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The chunks of ``part`` in order, as JSON objects, up to its ``done`` chunk (waiting for them
    as the run writes them); with ``until``, none after that seq (what is there now, no waiting)."""
    if until is not None and until <= part.after:
        return
    batches = store.read_batches(part.run_id, after=part.after)
    try:
        async for batch in batches:
            for entry in batch:
                chunk: dict[str, Any] = json.loads(entry.text)
                yield chunk
                if entry.terminal or (until is not None and entry.seq >= until):
                    return
    except ChunksExpired:
        raise OpenAIError(404, "this response's events are no longer kept", code="not_found") from None
    finally:
        with contextlib.suppress(Exception):
            await batches.aclose()  # type: ignore[attr-defined]


def usage_counts(usage: dict[str, Any] | None) -> tuple[int, int, int, int]:
    """(input, output, reasoning, cached) tokens of a ``usage`` chunk's data (zeros without one)."""
    if not usage:
        return 0, 0, 0, 0
    return (
        int(usage.get("input_tokens") or 0),
        int(usage.get("output_tokens") or 0),
        int(usage.get("reasoning_tokens") or 0),
        int(usage.get("cached_tokens") or 0),
    )


def top_level(chunk: dict[str, Any]) -> bool:
    """A chunk of the served agent itself, not of an agent working inside its run (a handoff's
    chunks carry ``depth``): only the served agent's answer is the response's."""
    data = chunk.get("data")
    return not (isinstance(data, dict) and "depth" in data)


__all__ = [
    "JSON",
    "Part",
    "admit_stream",
    "manager_of",
    "owned_part",
    "part_chunks",
    "release_stream",
    "top_level",
    "until_shutdown",
    "usage_counts",
]
