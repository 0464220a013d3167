"""kanawa's own wire format: each chunk a server-sent event (seed 002 §5-1).

A chunk goes out as ``id: <seq>`` (what a client sends back as ``Last-Event-ID`` to resume) and
``data: <chunk JSON>``, the JSON ``{time, agent, type, data, seq}`` as the run layer encoded it
(:mod:`kanawa.server.runs.chunks`) — the store keeps that text, so a chunk is framed here and never
re-encoded. The chunks a run made together go out as one ``bytes`` (one send, one socket write).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final

from kanawa.server.runs.chunks import Chunk
from kanawa.server.store.base import ChunksExpired, Entry

_FRAME: Final = b"id: %d\r\ndata: %b\r\n\r\n"


def sse_frame(seq: int, text: str) -> bytes:
    """One chunk as a server-sent event: its ``seq`` as the event id, its JSON as the data line."""
    return _FRAME % (seq, text.encode())


def sse_frames(entries: Sequence[Entry]) -> bytes:
    """Several chunks' events as one ``bytes``."""
    if len(entries) == 1:
        entry = entries[0]
        return _FRAME % (entry.seq, entry.text.encode())
    return "".join(f"id: {entry.seq}\r\ndata: {entry.text}\r\n\r\n" for entry in entries).encode()


def expired_frame(exc: ChunksExpired) -> bytes:
    """What a resume asking for chunks no longer kept gets instead of a stream with a gap: an
    ``error`` chunk with code ``chunks_expired`` (no ``id:``: it is not one of the run's chunks)."""
    chunk = Chunk("", "error", {"code": "chunks_expired", "message": str(exc)}, time.time())
    return f"data: {chunk.encode(0)}\r\n\r\n".encode()


__all__ = ["expired_frame", "sse_frame", "sse_frames"]
