"""One run's execution, the parts the run manager drives it with: numbering and storing its chunks,
routing its trace events (and its nested runs') into them, what its earlier parts spent, and which
events close a step (after which a checkpoint is saved).

A run's trace records go out with its next chunk (before it), so most cost no store write of their
own. A record that *starts* something — a model call, a tool call, a handoff — is stored on its own
when no chunk has taken it :data:`START_DELAY` seconds later (:meth:`ChunkWriter.flush_soon`): a
model call sends its first chunk only once the model has answered, and until then the live timeline
would not show the call at all. A call that answers sooner costs no write of its own."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kanawa._logging import get_logger
from kanawa.loop.events import ApprovalRequired, FinalResponse, HandoffEnded, Thinking, ToolResultStep
from kanawa.server.runs.chunks import Chunk
from kanawa.server.store.base import Entry, RunStore
from kanawa.trace.costs import with_cost
from kanawa.trace.events import TraceEvent
from kanawa.trace.redaction import drop_payloads
from kanawa.trace.serialize import event_to_record
from kanawa.types import Usage

_log = get_logger("kanawa.server")

CHECKPOINT_EVENTS: tuple[type[Any], ...] = (
    ToolResultStep,
    Thinking,
    FinalResponse,
    HandoffEnded,
    ApprovalRequired,
)
"""Events after which a step is complete and the run's state is saved."""


class TraceRouter:
    """A trace sink that hands each event of a run the server executes to that run's chunk writer.

    A run started inside a served run — a handoff target, an agent a coordinator routes to — has its
    own run id (a trace tree needs one per run) and names its parent in its ``agent_start``
    (``parent_run_id``); its events go to the served run's chunks too, so the timeline shows every
    agent that worked on the request."""

    def __init__(self) -> None:
        self.pending: dict[str, list[TraceEvent]] = {}
        self.starts: dict[str, Callable[[], None]] = {}
        """Served run id → what stores its queued records now (called when one of
        :data:`START_RECORDS` is queued)."""
        self.skip_start: set[str] = set()
        """Runs continued from a checkpoint: their ``agent_start`` was sent by the first worker."""
        self._served: dict[str, str] = {}
        """Nested run id → the id of the served run it works for."""

    def emit(self, event: TraceEvent) -> None:
        owner = run_id = event.run_id
        queue = self.pending.get(run_id)
        if queue is None:
            served = self._served.get(run_id)
            if served is None and event.event == "agent_start":
                parent = event.data.get("parent_run_id")
                if isinstance(parent, str):
                    served = parent if parent in self.pending else self._served.get(parent)
                    if served is not None:
                        self._served[run_id] = served
            if served is None:
                return
            owner = served
            queue = self.pending.get(served)
            if queue is None:
                return
        elif event.event == "agent_start" and run_id in self.skip_start:
            return
        queue.append(event)
        if event.event in START_RECORDS:
            flush = self.starts.get(owner)
            if flush is not None:
                flush()

    def end(self, run_id: str) -> None:
        """The served run ``run_id`` ended: forget it and the nested runs that worked for it."""
        self.pending.pop(run_id, None)
        self.starts.pop(run_id, None)
        self.skip_start.discard(run_id)
        for nested in [n for n, served in self._served.items() if served == run_id]:
            del self._served[nested]

    async def aclose(self) -> None:
        self.pending.clear()
        self.starts.clear()


START_RECORDS = frozenset({"agent_start", "llm_start", "tool_start", "handoff_start"})
"""Trace records stored soon after they are queued, chunk or not (module docstring)."""
START_DELAY = 0.05
"""Seconds a start record waits for a chunk to go out with, before it is stored on its own: below
what a person watching the timeline notices, above what a model that answers at once takes."""


@dataclass(frozen=True, slots=True)
class Spent:
    """Usage and cost of a run's parts before the current runner (restored from a checkpoint)."""

    usage: Usage = dataclasses.field(default_factory=Usage)
    cost_usd: float | None = 0.0

    def plus(self, cost: float | None) -> float | None:
        """The run's cost so far: unknown once any part's cost is unknown (never a partial sum)."""
        return None if self.cost_usd is None or cost is None else self.cost_usd + cost


@dataclass(slots=True)
class ChunkWriter:
    """Numbers chunks and appends them. Chunks up to ``replayed_to`` were already sent by a worker that
    died after its last checkpoint; the step being replayed produces them again, and they are skipped
    so no client sees one twice."""

    store: RunStore
    run_id: str
    agent: str
    seq: int
    replayed_to: int = 0
    writing: bool = False
    """A write of the run's own is being stored (a flush waits for the next one instead)."""
    flushing: asyncio.Task[None] | None = None
    """The :meth:`flush_soon` being stored: the run's next write waits for it (seq order)."""
    due: asyncio.TimerHandle | None = None
    """The :meth:`flush_soon` waiting for :data:`START_DELAY`."""

    async def write(self, chunk: Chunk, *, terminal: bool = False) -> bool:
        if terminal and self.due is not None:  # nothing is stored after the run's last chunk
            self.due.cancel()
            self.due = None
        while self.flushing is not None:
            await asyncio.shield(self.flushing)  # a cancelled run still leaves no gap in its seqs
        self.seq += 1
        if self.seq <= self.replayed_to:
            return False
        entry = Entry(self.seq, chunk.encode(self.seq), terminal, chunk)
        self.writing = True
        try:
            return await self.store.append(self.run_id, entry)
        finally:
            self.writing = False

    async def write_many(self, chunks: Sequence[Chunk]) -> bool:
        """Chunks a step made together, stored as one batch (a client at the head gets one send)."""
        while self.flushing is not None:
            await asyncio.shield(self.flushing)
        self.writing = True
        try:
            return await self._append(chunks)
        finally:
            self.writing = False

    async def _append(self, chunks: Sequence[Chunk]) -> bool:
        entries = []
        for chunk in chunks:
            self.seq += 1
            if self.seq > self.replayed_to:
                entries.append(Entry(self.seq, chunk.encode(self.seq), False, chunk))
        if not entries:
            return False
        return await self.store.append_many(self.run_id, entries)

    def flush_soon(self, traces: list[TraceEvent]) -> None:
        """Store the trace records queued in ``traces`` in :data:`START_DELAY` seconds, unless a chunk
        has taken them by then (module docstring)."""
        if self.due is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # recorded outside the run's loop: they go with the next chunk
                return
            self.due = loop.call_later(START_DELAY, self._flush_due, traces)

    def _flush_due(self, traces: list[TraceEvent]) -> None:
        self.due = None
        # while the run's own write is being stored, the records go with its next one
        if traces and self.flushing is None and not self.writing:
            self.flushing = asyncio.get_running_loop().create_task(self._flush(traces))

    async def _flush(self, traces: list[TraceEvent]) -> None:
        try:
            if traces and not self.writing:
                await self._append(trace_chunks(traces))
        except Exception as exc:  # the run's next write meets the store's failure and ends the run
            _log.warning("run %s: its trace records could not be stored: %s", self.run_id, type(exc).__name__)
        finally:
            self.flushing = None


def trace_chunks(traces: list[TraceEvent]) -> list[Chunk]:
    """The run's trace events recorded so far as ``trace`` chunks (taken from ``traces``)."""
    chunks = []
    for event in traces:
        record = with_cost(event_to_record(drop_payloads(event)))  # a model call's price
        record.pop("session", None)  # the agent's tracer session is shared by every tenant's runs
        chunks.append(Chunk(event.agent, "trace", dict(record), event.time))
    traces.clear()
    return chunks


__all__ = ["CHECKPOINT_EVENTS", "ChunkWriter", "Spent", "TraceRouter", "trace_chunks"]
