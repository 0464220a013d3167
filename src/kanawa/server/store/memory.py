"""The run store of one process: :class:`MemoryRunStore` (the contract: :mod:`.base`).

Each run keeps its chunks in a compact :class:`~.ring.ChunkRing`; readers that have caught up wait
on a future the next append resolves, or — given a :class:`~.base.Subscriber` — are offered the new
entries by the writer directly. Expired runs are swept lazily.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

from kanawa.server.store.base import (
    EVICTABLE,
    RECORD_BYTES,
    SEND_BYTES,
    ChunksExpired,
    Entry,
    RunExists,
    RunRecord,
    RunStatus,
    Subscriber,
)
from kanawa.server.store.ring import ChunkRing


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
    subscribers: list[Subscriber] | None = None
    """Readers at the head that the writer offers new chunks to directly."""
    cancel: bool = False
    checkpoint: str | None = None
    notes: dict[str, str] | None = None
    """What a protocol keeps of its requests (:meth:`~.base.RunStore.save_note`)."""
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

    def offer(self, entries: Sequence[Entry]) -> None:
        """New chunks to the readers the writer feeds directly; those that stepped aside are dropped
        from the list (they read on themselves)."""
        subscribers = self.subscribers
        if subscribers is None:
            return
        stepped_aside = False
        for subscriber in subscribers:
            subscriber.offer(entries)
            stepped_aside = stepped_aside or not subscriber.attached
        if stepped_aside:
            self.subscribers = [s for s in subscribers if s.attached] or None

    def release(self) -> None:
        """The run is gone from the store: every reader wakes (and finds it gone)."""
        self.wake()
        subscribers, self.subscribers = self.subscribers, None
        for subscriber in subscribers or ():
            subscriber.detach()


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


class MemoryRunStore:
    """One process: a compact :class:`~kanawa.server.store.ring.ChunkRing` of ``cap`` chunks per run;
    readers that have caught up wait on a future the next append resolves.
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

    async def create(self, record: RunRecord, *, writes_here: bool = False, exclusive: bool = False) -> None:
        self._sweep()
        if exclusive and self._live(record.run_id) is not None:  # no await before the insert: atomic
            raise RunExists(record.run_id)
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
        # one chunk (a run's text deltas, each on its own): no batch to check and walk
        run = self._runs.get(run_id)
        if run is None:
            return True
        if entry.seq <= run.last_seq:
            raise ValueError(f"seq {entry.seq} is not above the last seq {run.last_seq}")
        run.ring.add(entry.seq, entry.text.encode(), entry.terminal)
        return self._stored(run, (entry,))

    async def append_many(self, run_id: str, entries: Sequence[Entry]) -> bool:
        run = self._runs.get(run_id)
        if run is None:
            return True
        last = run.last_seq
        for entry in entries:  # all checked before any is kept
            if entry.seq <= last:
                raise ValueError(f"seq {entry.seq} is not above the last seq {last}")
            last = entry.seq
        if not entries:
            return run.cancel
        ring = run.ring
        for entry in entries:
            ring.add(entry.seq, entry.text.encode(), entry.terminal)
        return self._stored(run, entries)

    def _stored(self, run: _Run, entries: Sequence[Entry]) -> bool:
        """``entries`` are in ``run``'s ring: count them, hand them to the readers; whether the run
        has been asked to stop."""
        last = entries[-1]
        run.last_seq = last.seq
        self._account(run)
        if last.terminal:
            self._enforce(run.record.tenant)
        run.updated = time.time()
        run.expires = time.monotonic() + self._ttl
        if run.subscribers is not None:
            run.offer(entries)
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

    async def read_batches(
        self, run_id: str, *, after: int, subscriber: Subscriber | None = None
    ) -> AsyncIterator[Sequence[Entry]]:
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
                after = cursor
                cursor, ended = run.ring.batch_end(after, SEND_BYTES)
                # yielded unnamed: a reader whose client stopped reading does not keep the batch alive
                # here while the batch's frames wait in the send
                yield run.ring.entries_after(after, SEND_BYTES)
                if ended:
                    return
                continue
            if subscriber is None:
                await _next_chunk(run)
                continue
            subscriber.attach(cursor)
            if run.subscribers is None:
                run.subscribers = [subscriber]
            else:
                run.subscribers.append(subscriber)
            try:
                await subscriber.wait()
            finally:
                if run.subscribers is not None and subscriber in run.subscribers:
                    run.subscribers.remove(subscriber)
                    run.subscribers = run.subscribers or None
            if subscriber.finished:
                return
            cursor = subscriber.cursor

    async def save_checkpoint(self, run_id: str, data: str) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            run.checkpoint = data
            self._account(run)

    async def load_checkpoint(self, run_id: str) -> str | None:
        run = self._runs.get(run_id)
        return run.checkpoint if run is not None else None

    async def save_note(self, run_id: str, name: str, text: str) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            if run.notes is None:
                run.notes = {}
            run.notes[name] = text

    async def load_note(self, run_id: str, name: str) -> str | None:
        run = self._runs.get(run_id)
        return None if run is None or run.notes is None else run.notes.get(name)

    async def aclose(self) -> None:
        runs = list(self._runs.values())
        self._runs.clear()
        self._tenant_bytes.clear()
        self.total_bytes = 0
        for run in runs:
            run.release()


__all__ = ["MemoryRunStore"]
