"""Where a resume (``Last-Event-ID`` or ``?after=``) may start, before a stream is opened.

A run's stream waits for chunks that have not come yet — right for a run that can still grow, wrong
for one that has ended: a client resuming at a finished run's last chunk used to get a ``200`` with
no bytes, held open until the run expired. :func:`resume_point` decides instead:

- a resume point beyond any seq (:data:`MAX_SEQ`, below Redis's 64-bit stream ids): ``past_end`` —
  400, in every store;
- a resume point after the last stored chunk of a run that ended names no chunk it will ever have:
  ``past_end`` — 400. A run that can still grow is streamed instead: a client at the head may have
  been sent a chunk directly before the store's write-behind committed it (the Redis store), so its
  ``Last-Event-ID`` can be one ahead of the stored ``last_seq`` for a moment, and must not be refused;
- the last chunk of a run that ended (``completed``, ``failed``, ``cancelled``) with its ``done``
  chunk stored: ``ended`` — 204 No Content, which also tells an ``EventSource`` to stop reconnecting;
- anything else is streamed (``stream``): a running run, one waiting for approval (a decision
  continues it in the same stream), or a run whose ``done`` chunk is being written.
"""

from __future__ import annotations

import contextlib
from typing import Literal, TypeAlias

from kanawa.server.store.base import ChunksExpired, RunRecord, RunStore

ResumePoint: TypeAlias = Literal["stream", "ended", "past_end"]
ENDED: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
"""Statuses after which nothing is added to a run's stream (``awaiting_approval`` may go on)."""
MAX_SEQ = 2**63 - 1
"""The largest resume point any store can name (a chunk seq is a signed 64-bit count)."""


async def resume_point(store: RunStore, record: RunRecord, start: int) -> ResumePoint:
    """What a resume of ``record`` after ``start`` gets (module docstring)."""
    if start > MAX_SEQ:
        return "past_end"
    if start > record.last_seq:
        return "past_end" if record.status in ENDED else "stream"
    if start == 0 or start < record.last_seq or record.status not in ENDED:
        return "stream"
    return "ended" if await _is_terminal(store, record.run_id, start) else "stream"


async def _is_terminal(store: RunStore, run_id: str, seq: int) -> bool:
    """Whether the stored chunk ``seq`` (the run's last) is its terminal ``done`` chunk; when even
    that chunk is gone, the memory budget evicted the ended run's chunks and nothing will be added to
    it: it counts as the end."""
    return await stored_terminal(store, run_id, seq) is not False


async def stored_terminal(store: RunStore, run_id: str, seq: int) -> bool | None:
    """Whether the run's stored chunk ``seq`` is a terminal ``done`` chunk; ``None`` when the
    chunks there are no longer kept."""
    batches = store.read_batches(run_id, after=seq - 1)
    try:
        async for batch in batches:
            return any(entry.seq == seq and entry.terminal for entry in batch)
    except ChunksExpired:
        return None
    finally:
        with contextlib.suppress(Exception):
            await batches.aclose()  # type: ignore[attr-defined]
    return False


__all__ = ["ENDED", "MAX_SEQ", "ResumePoint", "resume_point", "stored_terminal"]
