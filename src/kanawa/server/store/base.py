"""What every run store keeps and promises: records, numbered chunks, checkpoints, subscribers.

A :class:`RunStore` keeps, per run, a :class:`RunRecord` (owner tenant, agent, status), the chunks in
``seq`` order (each an :class:`Entry`: its ``seq``, its JSON text, whether it ends the run's stream) and
the run's last checkpoint as text. Writers append; readers iterate from any ``seq`` and are woken as
chunks arrive, until the run's terminal chunk — one at a time (:meth:`RunStore.read`) or as batches of
whatever has arrived since the reader last looked (:meth:`RunStore.read_batches`).

A reader that has caught up can hand the store a :class:`Subscriber`: from then on the run's writer
offers it each batch of new entries the moment they are stored, from the writer's own task, instead of
waking the reader to read them back (what a thousand streams at the head of their runs save is a task
switch per chunk each). The store knows nothing of what a subscriber does with them: the HTTP layer's
direct sender frames them for its wire protocol and sends them.

Two implementations share this contract and one test suite: :class:`~.memory.MemoryRunStore` (one
process, a compact ring per run) and :class:`~.redis.RedisRunStore` (a Redis Stream per run, any worker
resumes). Retention: a run and its chunks are kept ``ttl`` seconds after its last chunk, and at most
``cap`` chunks per run (the oldest go first). A reader asking for chunks that have been dropped gets
:class:`ChunksExpired` rather than a stream with a gap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, TypeAlias

RunStatus: TypeAlias = Literal[
    "running", "completed", "failed", "cancelled", "awaiting_approval", "awaiting_tool_output"
]
FINISHED: frozenset[str] = frozenset(
    {"completed", "failed", "cancelled", "awaiting_approval", "awaiting_tool_output"}
)
SEND_BYTES: Final = 64 * 1024
"""About the most chunk bytes :meth:`RunStore.read_batches` yields at once: a client far behind
its run (a resume from the start of a long one) gets its backlog a piece at a time, so one that stops
reading pins a piece, not the run (the server buffers one send for a client whose socket is full)."""

RECORD_BYTES: Final = 512
"""What a run's record and bookkeeping count for in the memory budget besides its chunks."""
EVICTABLE: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
"""Runs whose chunks the memory budget may drop (a run waiting for approval keeps its state)."""


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
    """One stored chunk: its ``seq``, its JSON text, whether it ends the run's stream (or a part of it)."""

    seq: int
    text: str
    terminal: bool
    source: object = field(default=None, compare=False, repr=False)
    """What the writer made ``text`` from, when it wrote in this process (``None`` in entries read
    back from storage). A subscriber fed by the writer (:class:`Subscriber`) may use it instead of
    parsing ``text`` again; the store neither keeps nor looks at it."""


class ChunksExpired(Exception):  # noqa: N818 - reads as the condition it reports
    """The chunks after the requested ``seq`` are no longer kept (cap or TTL); ``first`` is the
    oldest kept."""

    def __init__(self, first: int) -> None:
        super().__init__(f"chunks before seq {first} are no longer kept")
        self.first = first


class Subscriber(Protocol):
    """A reader at the head of a run that the writer feeds directly (the module docstring).

    The handshake keeps one rule: at any moment either the writer or the reader's own task delivers
    to a subscriber, never both, so entries arrive in ``seq`` order with no gap and no duplicate. The
    reader :meth:`attach`\\ es it at the last ``seq`` it delivered and awaits :meth:`wait`; the writer
    :meth:`offer`\\ s it every batch of new entries while it stays ``attached``; the subscriber
    steps aside (``attached`` false, :meth:`wait` returns) whenever it cannot go on in order — the
    batch does not follow its ``cursor``, it could not take the batch at once, it took the terminal
    entry, it failed — and the reader goes on from ``cursor`` itself. A store that drops the run
    calls :meth:`detach`."""

    attached: bool
    """The writer may offer it entries."""
    cursor: int
    """The last ``seq`` it has taken."""

    @property
    def finished(self) -> bool:
        """It took the run's terminal entry, or it can take no more (its client is gone)."""
        ...

    def attach(self, cursor: int) -> None:
        """The reader delivered everything up to ``cursor``: the writer may offer from here on."""
        ...

    async def wait(self) -> None:
        """Until the subscriber steps aside (or is detached)."""
        ...

    def offer(self, entries: Sequence[Entry]) -> bool:
        """New entries in ``seq`` order (only the last may be terminal). ``True``: taken; ``False``:
        not taken, the subscriber has stepped aside and the reader reads them itself."""
        ...

    def detach(self) -> None:
        """Step aside now (the reader wakes and reads on from ``cursor``)."""
        ...


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

    def read_batches(
        self, run_id: str, *, after: int, subscriber: Subscriber | None = None
    ) -> AsyncIterator[Sequence[Entry]]:
        """The same chunks as :meth:`read`, in non-empty batches of those already there (about
        :data:`SEND_BYTES` at most, at least one chunk). With a ``subscriber``, whenever the reader
        has caught up the writer offers the next chunks to it directly (:class:`Subscriber`); the
        batches it takes are not yielded, and the reading ends when it has :attr:`~Subscriber.finished`."""
        ...

    async def save_checkpoint(self, run_id: str, data: str) -> None: ...

    async def load_checkpoint(self, run_id: str) -> str | None: ...

    async def save_note(self, run_id: str, name: str, text: str) -> None:
        """Keep a short ``text`` under ``name`` with the run's record, as long as the record is kept —
        what a wire protocol remembers of a request that the chunks do not say (an OpenAI response's
        ``metadata``, whether it may be retrieved). Nothing happens when the run is gone. Notes are
        not counted in the memory budget: a protocol keeps them small (a few KiB at most)."""
        ...

    async def load_note(self, run_id: str, name: str) -> str | None:
        """The note kept under ``name`` (``None``: none, or the run is gone)."""
        ...

    async def used_bytes(self, tenant: str | None = None) -> int:
        """What the kept runs of ``tenant`` (``None``: of everyone) are counted for in the memory
        budget."""
        ...

    async def aclose(self) -> None: ...


__all__ = [
    "EVICTABLE",
    "FINISHED",
    "RECORD_BYTES",
    "SEND_BYTES",
    "ChunksExpired",
    "Entry",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "Subscriber",
]
