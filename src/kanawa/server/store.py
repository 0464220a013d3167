"""Where runs live while they stream: run records and each run's numbered chunks.

A :class:`RunStore` keeps, per run, a :class:`RunRecord` (owner tenant, agent, status) and the
chunks in ``seq`` order. Writers append; readers iterate from any ``seq`` and are woken as chunks
arrive, until the run's ``done`` chunk — one at a time (:meth:`RunStore.read`), as batches of
whatever has arrived since the reader last looked (:meth:`RunStore.read_batches`), or as those
batches' SSE frames (:meth:`RunStore.read_frames`, what the SSE endpoint sends, so that chunks that
queued up while a client was busy go out in one write). Two implementations share this contract and
the same test suite: :class:`MemoryRunStore` here (one process, a compact ring per run) and
:class:`~kanawa.server.redis_store.RedisRunStore` (a Redis Stream per run, any worker resumes).

Retention: a run and its chunks are kept ``ttl`` seconds after its last chunk, and at most ``cap``
chunks per run (the oldest go first). A reader asking for chunks that have been dropped gets
:class:`ChunksExpired` rather than a stream with a gap.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, Protocol, TypeAlias

from kanawa.server.direct import DirectSender
from kanawa.server.ring import ChunkRing, sse_frame

RunStatus: TypeAlias = Literal["running", "completed", "failed", "cancelled", "awaiting_approval"]
FINISHED: frozenset[str] = frozenset({"completed", "failed", "cancelled", "awaiting_approval"})
SEND_BYTES: Final = 64 * 1024
"""About the most frame bytes :meth:`MemoryRunStore.read_frames` yields at once: a client far behind
its run (a resume from the start of a long one) gets its backlog a piece at a time, so one that stops
reading pins a piece, not the run (the server buffers one send for a client whose socket is full)."""


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
    async def create(self, record: RunRecord, *, writes_here: bool = False) -> None:
        """Store a new run's record. ``writes_here``: this process will write the run's chunks (not a
        worker elsewhere), so readers here can be fed by the writer directly."""
        ...

    async def get(self, tenant: str, run_id: str) -> RunRecord | None: ...

    async def get_any(self, run_id: str) -> RunRecord | None:
        """The record whoever owns it (for workers, never for request handlers)."""
        ...

    async def list(self, tenant: str, *, limit: int) -> list[RunRecord]: ...

    async def set_status(self, run_id: str, status: RunStatus, *, reason: str | None = None) -> None: ...

    async def claim_status(self, run_id: str, expected: RunStatus, status: RunStatus) -> bool:
        """Set the status to ``status`` (reason cleared) only if it is ``expected``, in one atomic
        step; whether it was. Of two requests racing to continue a run waiting for approval, exactly
        one wins."""
        ...

    async def append(self, run_id: str, entry: Entry) -> bool:
        """Store one chunk; returns ``True`` when the run has been asked to stop (a store that reads
        the cancel flag along with its writes says so by the next chunk at the latest). A chunk that cannot
        be stored (its seq is not above the last one, the store is unreachable) raises here or, where
        the store confirms writes while the run goes on (Redis), at the run's next append — by its
        terminal chunk at the latest; readers never see it."""
        ...

    async def append_many(self, run_id: str, entries: Sequence[Entry]) -> bool:
        """:meth:`append` for chunks a run made together (only the last may be terminal): stored in
        order, and a reader at the head gets them in one send."""
        ...

    async def request_cancel(self, run_id: str) -> None: ...

    async def cancel_requested(self, run_id: str) -> bool: ...

    def read(self, run_id: str, *, after: int) -> AsyncIterator[Entry]:
        """Chunks with ``seq > after`` as they come, ending after the terminal chunk."""
        ...

    def read_batches(self, run_id: str, *, after: int) -> AsyncIterator[Sequence[Entry]]:
        """The same chunks as :meth:`read`, in non-empty batches of those already there."""
        ...

    def read_frames(
        self, run_id: str, *, after: int, sender: DirectSender | None = None
    ) -> AsyncIterator[bytes]:
        """The same batches as server-sent events (:func:`~kanawa.server.ring.sse_frame` each), one
        ``bytes`` per batch: what the SSE endpoint sends. With a ``sender``, whenever the reader has
        caught up the writer sends the next chunks through it directly
        (:mod:`kanawa.server.direct`); the frames that go out that way are not yielded."""
        ...

    async def save_checkpoint(self, run_id: str, data: str) -> None: ...

    async def load_checkpoint(self, run_id: str) -> str | None: ...

    async def used_bytes(self, tenant: str | None = None) -> int:
        """What the kept runs of ``tenant`` (``None``: of everyone) are counted for in the memory
        budget."""
        ...

    async def aclose(self) -> None: ...


@dataclass(slots=True)
class _Run:
    """One run's state. The record's ``last_seq``/``updated`` live here and are put into the record
    only when someone asks for it: a chunk costs no record copy."""

    record: RunRecord
    ring: ChunkRing
    expires: float
    last_seq: int = 0
    updated: float = 0.0
    waiters: list[asyncio.Future[None]] | None = None
    """Readers waiting for the next chunk; a future is made only when a reader has caught up."""
    senders: list[DirectSender] | None = None
    """Readers at the head that the writer sends to directly."""
    cancel: bool = False
    checkpoint: str | None = None
    size: int = 0
    """The bytes this run is counted for in the store's memory budget."""
    evicted: bool = False
    """Its chunks were dropped for the memory budget (the record stays until its TTL)."""

    def snapshot(self) -> RunRecord:
        record = self.record
        if record.last_seq == self.last_seq and record.updated >= self.updated:
            return record
        self.record = replace(record, last_seq=self.last_seq, updated=max(record.updated, self.updated))
        return self.record

    def wake(self) -> None:
        waiters, self.waiters = self.waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def offer(self, first: int, last: int, frames: bytes, terminal: bool) -> None:
        """New chunks to the readers the writer sends to directly; those that stepped aside are
        dropped from the list (they read on themselves)."""
        senders = self.senders
        if senders is None:
            return
        stepped_aside = False
        for sender in senders:
            sender.offer(first, last, frames, terminal)
            stepped_aside = stepped_aside or not sender.attached
        if stepped_aside:
            self.senders = [sender for sender in senders if sender.attached] or None

    def release(self) -> None:
        """The run is gone from the store: every reader wakes (and finds it gone)."""
        self.wake()
        senders, self.senders = self.senders, None
        for sender in senders or ():
            sender.detach()


async def _next_chunk(run: _Run) -> None:
    """Wait until ``run`` gets its next chunk (or is dropped): one future among the run's waiters,
    which the writer resolves."""
    waiter = asyncio.get_running_loop().create_future()
    if run.waiters is None:
        run.waiters = [waiter]
    else:
        run.waiters.append(waiter)
    try:
        await waiter
    finally:
        if not waiter.done():
            waiter.cancel()


RECORD_BYTES: Final = 512
"""What a run's record and bookkeeping count for in the memory budget besides its chunks."""
EVICTABLE: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
"""Runs whose chunks the memory budget may drop (a run waiting for approval keeps its state)."""


class MemoryRunStore:
    """One process: a compact :class:`~kanawa.server.ring.ChunkRing` of ``cap`` chunks per run, each
    kept as its SSE frame; readers that have caught up wait on a future the next append resolves.
    Expired runs are swept lazily (at most once a second, on create and lookups).

    Memory budget: ``tenant_bytes`` per tenant and ``total_bytes`` for all runs (``0``: none). When a
    run ends or starts beyond one, the oldest finished runs (of that tenant, or of anyone) lose their
    chunks and checkpoint until it holds — their records stay, so a resume gets the ``chunks_expired``
    error chunk like one from before a run's oldest kept chunk — and if records alone still exceed it,
    the oldest finished runs go entirely (404, like a run past its TTL). Running runs and runs waiting
    for approval are never evicted: ``KANAWA_MAX_RUNS`` and ``cap`` bound them."""

    def __init__(
        self, *, ttl: float = 3600.0, cap: int = 10_000, tenant_bytes: int = 0, total_bytes: int = 0
    ) -> None:
        self._ttl = ttl
        self._cap = cap
        self._runs: dict[str, _Run] = {}
        self._swept = 0.0
        self._tenant_budget = tenant_bytes
        self._total_budget = total_bytes
        self._tenant_bytes: dict[str, int] = {}
        self.total_bytes = 0
        """What the kept runs are counted for (their chunks as stored, checkpoints, records)."""

    def tenant_bytes(self, tenant: str) -> int:
        return self._tenant_bytes.get(tenant, 0)

    async def used_bytes(self, tenant: str | None = None) -> int:
        return self.total_bytes if tenant is None else self.tenant_bytes(tenant)

    def _account(self, run: _Run) -> None:
        """Count ``run`` at its current size."""
        size = 0 if run.evicted else run.ring.size + len(run.checkpoint or "")
        size += RECORD_BYTES
        delta = size - run.size
        if delta:
            run.size = size
            tenant = run.record.tenant
            self._tenant_bytes[tenant] = self._tenant_bytes.get(tenant, 0) + delta
            self.total_bytes += delta

    def _forget(self, run_id: str) -> _Run:
        run = self._runs.pop(run_id)
        tenant = run.record.tenant
        left = self._tenant_bytes.get(tenant, 0) - run.size
        if left > 0:
            self._tenant_bytes[tenant] = left
        else:
            self._tenant_bytes.pop(tenant, None)
        self.total_bytes -= run.size
        run.size = 0
        return run

    def _over(self, tenant: str) -> bool:
        return bool(
            (self._tenant_budget and self._tenant_bytes.get(tenant, 0) > self._tenant_budget)
            or (self._total_budget and self.total_bytes > self._total_budget)
        )

    def _enforce(self, tenant: str) -> None:
        """Evict the oldest finished runs while ``tenant`` or the store is over its budget."""
        if not self._over(tenant):
            return
        finished = sorted(
            (run for run in self._runs.values() if run.record.status in EVICTABLE),
            key=lambda run: run.updated,
        )
        for whole in (False, True):  # chunks first; records too only if chunks were not enough
            for run in finished:
                if not self._over(tenant):
                    return
                total_over = bool(self._total_budget and self.total_bytes > self._total_budget)
                if run.record.tenant != tenant and not total_over:
                    continue  # only the tenant's own runs pay for its budget
                if whole:
                    if run.record.run_id in self._runs:
                        self._forget(run.record.run_id).release()
                elif not run.evicted:
                    run.evicted = True
                    run.ring = ChunkRing(1)
                    run.checkpoint = None
                    self._account(run)
                    run.release()

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept < 1.0:
            return
        self._swept = now
        for run_id, run in list(self._runs.items()):
            if run.expires < now:
                self._forget(run_id).release()

    def _live(self, run_id: str) -> _Run | None:
        self._sweep()
        return self._runs.get(run_id)

    async def create(self, record: RunRecord, *, writes_here: bool = False) -> None:
        self._sweep()
        run = _Run(
            record, ChunkRing(self._cap), time.monotonic() + self._ttl, record.last_seq, record.updated
        )
        self._runs[record.run_id] = run
        self._account(run)
        self._enforce(record.tenant)

    async def get(self, tenant: str, run_id: str) -> RunRecord | None:
        run = self._live(run_id)
        return run.snapshot() if run is not None and run.record.tenant == tenant else None

    async def get_any(self, run_id: str) -> RunRecord | None:
        run = self._live(run_id)
        return run.snapshot() if run is not None else None

    async def list(self, tenant: str, *, limit: int) -> list[RunRecord]:
        self._sweep()
        mine = [run.snapshot() for run in self._runs.values() if run.record.tenant == tenant]
        mine.sort(key=lambda record: record.created, reverse=True)
        return mine[:limit]

    async def set_status(self, run_id: str, status: RunStatus, *, reason: str | None = None) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            run.updated = time.time()
            run.record = replace(
                run.snapshot(), status=status, updated=run.updated, termination_reason=reason
            )
            run.expires = time.monotonic() + self._ttl

    async def claim_status(self, run_id: str, expected: RunStatus, status: RunStatus) -> bool:
        run = self._runs.get(run_id)
        if run is None or run.record.status != expected:
            return False
        await self.set_status(run_id, status)  # no await inside: nothing runs between check and set
        return True

    async def append(self, run_id: str, entry: Entry) -> bool:
        return await self.append_many(run_id, (entry,))

    async def append_many(self, run_id: str, entries: Sequence[Entry]) -> bool:
        run = self._runs.get(run_id)
        if run is None:
            return True
        last = run.last_seq
        for entry in entries:  # all checked before any is kept
            if entry.seq <= last:
                raise ValueError(f"seq {entry.seq} is not above the last seq {last}")
            last = entry.seq
        frames = []
        for entry in entries:
            frame = sse_frame(entry.seq, entry.text)
            run.ring.add(entry.seq, frame, entry.terminal)
            run.last_seq = entry.seq
            frames.append(frame)
        if not frames:
            return run.cancel
        self._account(run)
        if entries[-1].terminal:
            self._enforce(run.record.tenant)
        run.updated = time.time()
        run.expires = time.monotonic() + self._ttl
        if run.senders is not None:
            run.offer(entries[0].seq, entries[-1].seq, b"".join(frames), entries[-1].terminal)
        if run.waiters is not None:
            run.wake()
        return run.cancel

    async def request_cancel(self, run_id: str) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            run.cancel = True

    async def cancel_requested(self, run_id: str) -> bool:
        run = self._runs.get(run_id)
        return run is not None and run.cancel

    async def read(self, run_id: str, *, after: int) -> AsyncIterator[Entry]:
        async for batch in self.read_batches(run_id, after=after):
            for entry in batch:
                yield entry

    async def read_batches(self, run_id: str, *, after: int) -> AsyncIterator[Sequence[Entry]]:
        async for run, cursor in self._follow(run_id, after):
            batch = [Entry(seq, text, terminal) for seq, text, terminal in run.ring.entries_after(cursor)]
            yield batch
            if batch[-1].terminal:
                return

    async def read_frames(
        self, run_id: str, *, after: int, sender: DirectSender | None = None
    ) -> AsyncIterator[bytes]:
        # :meth:`_follow`'s loop written out: one suspended generator less for every open stream
        cursor = after
        while True:
            run = self._runs.get(run_id)
            if run is None:
                return
            if run.evicted and cursor < run.last_seq:
                raise ChunksExpired(run.last_seq + 1)
            first = run.ring.first
            if first is not None and cursor < first - 1:
                raise ChunksExpired(first)
            if run.last_seq > cursor:
                frames, cursor, ended = run.ring.frames_after(cursor, SEND_BYTES)
                yield frames
                if ended:
                    return
                continue
            if sender is None:
                await _next_chunk(run)
                continue
            sender.attach(cursor)
            if run.senders is None:
                run.senders = [sender]
            else:
                run.senders.append(sender)
            try:
                await sender.wait()
            finally:
                if run.senders is not None and sender in run.senders:
                    run.senders.remove(sender)
                    run.senders = run.senders or None
            if sender.ended or sender.failed:
                return
            cursor = sender.cursor

    async def _follow(self, run_id: str, after: int) -> AsyncIterator[tuple[_Run, int]]:
        """``(run, cursor)`` each time the run has chunks after ``cursor``, waiting in between (the
        caller takes them all, up to a terminal one, before asking again); ends when the run is
        gone."""
        cursor = after
        while True:
            run = self._runs.get(run_id)
            if run is None:
                return
            if run.evicted and cursor < run.last_seq:
                raise ChunksExpired(run.last_seq + 1)
            first = run.ring.first
            if first is not None and cursor < first - 1:
                raise ChunksExpired(first)
            if run.last_seq > cursor:
                last = run.last_seq
                yield run, cursor
                cursor = last
                continue
            await _next_chunk(run)

    async def save_checkpoint(self, run_id: str, data: str) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            run.checkpoint = data
            self._account(run)

    async def load_checkpoint(self, run_id: str) -> str | None:
        run = self._runs.get(run_id)
        return run.checkpoint if run is not None else None

    async def aclose(self) -> None:
        runs = list(self._runs.values())
        self._runs.clear()
        self._tenant_bytes.clear()
        self.total_bytes = 0
        for run in runs:
            run.release()


__all__ = [
    "EVICTABLE",
    "FINISHED",
    "RECORD_BYTES",
    "ChunksExpired",
    "Entry",
    "MemoryRunStore",
    "RunRecord",
    "RunStatus",
    "RunStore",
]
