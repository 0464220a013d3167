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

A response's stream is a :class:`~kanawa.server.http.event_stream.RunEventStream` like kanawa's own
(:func:`part_stream`), with the protocol's :class:`Framing` as its encoder: while the client keeps up,
the run's writer sends each batch's events itself (:mod:`kanawa.server.http.direct`), and the write
timeout, keep-alive comments, stream caps and shutdown are the same for every protocol. The chunks
the writer hands over carry the chunk they were encoded from (:attr:`Entry.source
<kanawa.server.store.base.Entry.source>`), so a stream at the head of its run never parses the JSON
it was just given; chunks read back from the store (a resume, a client behind, another process's
run) are parsed — either way once, into typed chunks (:mod:`.framing`).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, Final, Protocol

from fastapi import Request

from kanawa.server.http.event_stream import RunEventStream
from kanawa.server.http.protocols.errors import ProtocolError
from kanawa.server.http.protocols.framing import RunChunk, typed_chunk
from kanawa.server.http.resume import stored_terminal
from kanawa.server.runs.manager import RunManager
from kanawa.server.settings import ServerSettings
from kanawa.server.store.base import ChunksExpired, Entry, RunRecord, RunStore

JSON: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""One encoder for every event (``json.dumps`` with options builds a new one per call)."""
json_string: Final[Callable[[str], str]] = encode_basestring
"""A string as JSON, what ``JSON.encode(text)`` gives, without the encoder's dispatch (text deltas)."""
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


class Framing(Protocol):
    """How one protocol's stream turns its part's chunks into its wire bytes (state per stream: its
    sequence numbers, its open items) — every protocol's is a :class:`~.framing.ChunkFraming`. The
    stream is a :class:`RunEventStream` like kanawa's own, so while the client keeps up the run's
    writer sends each batch's frames itself (:mod:`..direct`)."""

    def opening(self) -> bytes:
        """The events before the first chunk (sent with the headers)."""
        ...

    def __call__(self, entries: Sequence[Entry]) -> bytes:
        """The frames of the next chunks (the part ends with its terminal one)."""
        ...

    def expired(self, exc: ChunksExpired) -> bytes:
        """What the client gets when the part's chunks are no longer kept."""
        ...


def part_stream(
    request: Request, part: Part, framing: Framing, admitted: tuple[str, str | None]
) -> RunEventStream:
    """``part``'s events as a streaming response, fed by the run's writer while the client keeps up;
    the write timeout, the keep-alive comments, shutdown and the stream's place (``admitted``,
    released when it ends) as for kanawa's own streams."""
    settings: ServerSettings = request.app.state.settings
    return RunEventStream(
        manager_of(request).store,
        part.run_id,
        part.after,
        encode=framing,
        expired=framing.expired,
        opening=framing.opening(),
        ping=settings.sse_ping,
        streams=request.app.state.streams,
        write_timeout=settings.sse_write_timeout,
        admitted=admitted,
    )


async def owned_part(
    request: Request, tenant: str, part: Part | None, *, kind: str = "response"
) -> tuple[RunRecord, Part]:
    """The record of the run ``part`` belongs to, when it is ``tenant``'s and the part exists; else
    404 — another tenant's response exactly like a missing one."""
    missing = ProtocolError(404, f"no {kind} with that id", code="not_found")
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
    return await stored_terminal(store, record.run_id, after) is True  # gone: no such part now


async def part_chunks(store: RunStore, part: Part, *, until: int | None = None) -> AsyncIterator[RunChunk]:
    """The chunks of ``part`` in order, typed (:mod:`.framing`), up to its ``done`` chunk (waiting for them
    as the run writes them); with ``until``, none after that seq (what is there now, no waiting)."""
    if until is not None and until <= part.after:
        return
    batches = store.read_batches(part.run_id, after=part.after)
    try:
        async for batch in batches:
            for entry in batch:
                yield typed_chunk(entry)
                if entry.terminal or (until is not None and entry.seq >= until):
                    return
    except ChunksExpired:
        raise ProtocolError(404, "this response's events are no longer kept", code="not_found") from None
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


__all__ = [
    "JSON",
    "Framing",
    "Part",
    "json_string",
    "manager_of",
    "owned_part",
    "part_chunks",
    "part_stream",
    "usage_counts",
]
