"""Where runs live while they stream: run records and each run's numbered chunks.

A :class:`RunStore` keeps, per run, a :class:`RunRecord` (owner tenant, agent, status) and the
chunks in ``seq`` order. Writers append; readers iterate from any ``seq`` and are woken as chunks
arrive, until the run's ``done`` chunk. Two implementations share this contract and the same test
suite: :class:`MemoryRunStore` here (one process, a ring per run) and
:class:`~kanawa.server.redis_store.RedisRunStore` (a Redis Stream per run, any worker resumes).

Retention: a run and its chunks are kept ``ttl`` seconds after its last chunk, and at most ``cap``
chunks per run (the oldest go first). A reader asking for chunks that have been dropped gets
:class:`ChunksExpired` rather than a stream with a gap.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Literal, Protocol, TypeAlias

RunStatus: TypeAlias = Literal["running", "completed", "failed", "cancelled", "awaiting_approval"]
FINISHED: frozenset[str] = frozenset({"completed", "failed", "cancelled", "awaiting_approval"})


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What ``GET /v1/runs/{id}`` answers (besides the chunks)."""

    run_id: str
    tenant: str
    agent: str
    status: RunStatus
    created: float
    updated: float
    last_seq: int = 0
    termination_reason: str | None = None
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    seq: int
    text: str
    terminal: bool


class ChunksExpired(Exception):  # noqa: N818 - reads as the condition it reports
    """The chunks after the requested ``seq`` are no longer kept (cap or TTL); ``first`` is the
    oldest kept."""

    def __init__(self, first: int) -> None:
        super().__init__(f"chunks before seq {first} are no longer kept")
        self.first = first


class RunStore(Protocol):
    async def create(self, record: RunRecord) -> None: ...

    async def get(self, tenant: str, run_id: str) -> RunRecord | None: ...

    async def get_any(self, run_id: str) -> RunRecord | None:
        """The record whoever owns it (for workers, never for request handlers)."""
        ...

    async def list(self, tenant: str, *, limit: int) -> list[RunRecord]: ...

    async def set_status(self, run_id: str, status: RunStatus, *, reason: str | None = None) -> None: ...

    async def append(self, run_id: str, entry: Entry) -> bool:
        """Store one chunk; returns ``True`` when the run has been asked to stop."""
        ...

    async def request_cancel(self, run_id: str) -> None: ...

    async def cancel_requested(self, run_id: str) -> bool: ...

    def read(self, run_id: str, *, after: int) -> AsyncIterator[Entry]:
        """Chunks with ``seq > after`` as they come, ending after the terminal chunk."""
        ...

    async def save_checkpoint(self, run_id: str, data: str) -> None: ...

    async def load_checkpoint(self, run_id: str) -> str | None: ...

    async def aclose(self) -> None: ...


@dataclass(slots=True)
class _Run:
    record: RunRecord
    entries: deque[Entry]
    changed: asyncio.Event
    expires: float
    cancel: bool = False
    checkpoint: str | None = None


class MemoryRunStore:
    """One process: a ``deque(maxlen=cap)`` ring per run and an :class:`asyncio.Event` that wakes its
    readers. Expired runs are swept lazily (at most once a second, on create and lookups)."""

    def __init__(self, *, ttl: float = 3600.0, cap: int = 10_000) -> None:
        self._ttl = ttl
        self._cap = cap
        self._runs: dict[str, _Run] = {}
        self._swept = 0.0

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept < 1.0:
            return
        self._swept = now
        for run_id, run in list(self._runs.items()):
            if run.expires < now:
                del self._runs[run_id]
                run.changed.set()

    def _live(self, run_id: str) -> _Run | None:
        self._sweep()
        return self._runs.get(run_id)

    async def create(self, record: RunRecord) -> None:
        self._sweep()
        self._runs[record.run_id] = _Run(
            record, deque(maxlen=self._cap), asyncio.Event(), time.monotonic() + self._ttl
        )

    async def get(self, tenant: str, run_id: str) -> RunRecord | None:
        run = self._live(run_id)
        return run.record if run is not None and run.record.tenant == tenant else None

    async def get_any(self, run_id: str) -> RunRecord | None:
        run = self._live(run_id)
        return run.record if run is not None else None

    async def list(self, tenant: str, *, limit: int) -> list[RunRecord]:
        self._sweep()
        mine = [run.record for run in self._runs.values() if run.record.tenant == tenant]
        mine.sort(key=lambda record: record.created, reverse=True)
        return mine[:limit]

    async def set_status(self, run_id: str, status: RunStatus, *, reason: str | None = None) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            run.record = replace(run.record, status=status, updated=time.time(), termination_reason=reason)
            run.expires = time.monotonic() + self._ttl

    async def append(self, run_id: str, entry: Entry) -> bool:
        run = self._runs.get(run_id)
        if run is None:
            return True
        if entry.seq <= run.record.last_seq:
            raise ValueError(f"seq {entry.seq} is not above the last seq {run.record.last_seq}")
        run.entries.append(entry)
        run.record = replace(run.record, last_seq=entry.seq, updated=time.time())
        run.expires = time.monotonic() + self._ttl
        woken, run.changed = run.changed, asyncio.Event()
        woken.set()
        return run.cancel

    async def request_cancel(self, run_id: str) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            run.cancel = True

    async def cancel_requested(self, run_id: str) -> bool:
        run = self._runs.get(run_id)
        return run is not None and run.cancel

    async def read(self, run_id: str, *, after: int) -> AsyncIterator[Entry]:
        cursor = after
        while True:
            run = self._runs.get(run_id)
            if run is None:
                return
            entries = run.entries
            if entries and cursor < entries[0].seq - 1:
                raise ChunksExpired(entries[0].seq)
            waiter = run.changed
            if entries and entries[-1].seq > cursor:
                start = max(0, len(entries) - (entries[-1].seq - cursor))
                batch = [entries[i] for i in range(start, len(entries))]
                for entry in batch:
                    if entry.seq > cursor:
                        cursor = entry.seq
                        yield entry
                        if entry.terminal:
                            return
                continue
            await waiter.wait()

    async def save_checkpoint(self, run_id: str, data: str) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            run.checkpoint = data

    async def load_checkpoint(self, run_id: str) -> str | None:
        run = self._runs.get(run_id)
        return run.checkpoint if run is not None else None

    async def aclose(self) -> None:
        for run in self._runs.values():
            run.changed.set()
        self._runs.clear()


__all__ = ["FINISHED", "ChunksExpired", "Entry", "MemoryRunStore", "RunRecord", "RunStatus", "RunStore"]
