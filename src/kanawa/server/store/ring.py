"""A run's kept chunks in memory, compact: their texts back to back, older ones compressed.

The in-memory store keeps every chunk of every run until the run's TTL, so what a kept chunk costs
adds up with the number of runs: as Python objects (an ``Entry``, its ``str``, its ``seq``) a
delta of ~150 bytes of JSON costs ~280. Here a chunk is its JSON text (UTF-8, encoded once when it
is added) plus two 8-byte slots in integer arrays (its ``seq`` and where its text ends). Texts
gather in an open block (a list of the texts as they came: no buffer grown by reallocation); once it
holds :data:`BLOCK_BYTES` it is sealed, joined and
compressed, and so is what is open when the run's terminal chunk arrives. Compression is raw
deflate at level 1 with a 4 KiB window and a small hash table: ~5 µs for a block, where
``zlib.compress``'s defaults set up a 32 KiB window and ~256 KiB of tables for every call, ten
times that; chunks of one run repeat their keys, agent and time prefix, so a block shrinks about
fivefold. Live readers read the open block; only a reader resuming from further back
decompresses.

At most ``cap`` chunks are kept: the oldest are dropped first (sealed blocks whose chunks are all
dropped are freed, the arrays trimmed once at least half of them is dropped: amortised O(1)).
"""

from __future__ import annotations

import zlib
from array import array
from bisect import bisect_right
from typing import Final

from kanawa.server.store.base import Entry

BLOCK_BYTES: Final = 1024
"""Text bytes gathered in the open block before it is compressed."""
_WINDOW_BITS: Final = -12
"""Raw deflate (no header or checksum: the block is never stored anywhere else) with a 4 KiB window,
more than a block spans but for the rare text longer than that."""
_MEMORY_LEVEL: Final = 3


def _pack(data: bytes) -> bytes:
    packer = zlib.compressobj(1, zlib.DEFLATED, _WINDOW_BITS, _MEMORY_LEVEL)
    return packer.compress(data) + packer.flush()


def _unpack(packed: bytes) -> bytes:
    return zlib.decompress(packed, _WINDOW_BITS)


class ChunkRing:
    """The kept chunks of one run, in ``seq`` order (see the module docstring).

    Byte offsets are virtual: positions in the concatenation of every text ever added, so they stay
    valid as blocks are sealed and dropped."""

    __slots__ = (
        "_base",
        "_blocks",
        "_ends",
        "_head",
        "_open",
        "_open_bytes",
        "_open_index",
        "_packed_bytes",
        "_seqs",
        "_terminals",
        "cap",
    )

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._seqs = array("q")
        self._ends = array("q")
        """Virtual end offset of each chunk's text."""
        self._base = 0
        """Virtual start offset of the chunk at index 0 of the arrays."""
        self._head = 0
        """Index of the oldest kept chunk (those before it are dropped)."""
        self._blocks: list[tuple[int, int, bytes]] = []
        """Sealed blocks: ``(virtual start, virtual end, zlib data)`` (a list: an empty deque alone
        costs a 64-slot block per run, and blocks are dropped from the front only past the cap)."""
        self._open: list[bytes] = []
        """The texts of the open block: those of the chunks from ``_open_index`` on."""
        self._open_index = 0
        self._terminals: list[int] = []
        """The seqs of kept terminal chunks (a run that waited for approval has one before its last)."""
        self._packed_bytes = 0
        self._open_bytes = 0

    @property
    def size(self) -> int:
        """About the bytes this ring holds: its compressed blocks, its open texts and its arrays
        (what a memory budget counts; object headers aside)."""
        return self._packed_bytes + self._open_bytes + 16 * len(self._seqs)

    def __len__(self) -> int:
        return len(self._seqs) - self._head

    @property
    def first(self) -> int | None:
        """The oldest kept seq."""
        return self._seqs[self._head] if len(self) else None

    @property
    def last(self) -> int | None:
        return self._seqs[-1] if len(self) else None

    def add(self, seq: int, text: bytes, terminal: bool) -> None:
        """Keep a chunk whose ``seq`` is above every kept one (the store checks)."""
        size = len(text)
        ends = self._ends
        end = (ends[-1] if ends else self._base) + size
        self._open.append(text)
        self._open_bytes += size
        self._seqs.append(seq)
        ends.append(end)
        if terminal:
            self._terminals.append(seq)
        # the open block's texts are the virtual range [end - _open_bytes, end)
        if terminal or self._open_bytes >= BLOCK_BYTES:  # a finished run keeps nothing uncompressed
            packed = _pack(b"".join(self._open))
            self._blocks.append((end - self._open_bytes, end, packed))
            self._packed_bytes += len(packed)
            self._open = []
            self._open_bytes = 0
            self._open_index = len(self._seqs)
        if len(self._seqs) - self._head > self.cap:
            self._drop_oldest()

    def _start(self, index: int) -> int:
        return self._ends[index - 1] if index else self._base

    def _drop_oldest(self) -> None:
        self._head += 1
        first = self._seqs[self._head]
        if self._terminals and self._terminals[0] < first:
            self._terminals = [seq for seq in self._terminals if seq >= first]
        kept_from = self._start(self._head)
        gone = 0
        while gone < len(self._blocks) and self._blocks[gone][1] <= kept_from:
            gone += 1
        if gone:
            self._packed_bytes -= sum(len(packed) for _, _, packed in self._blocks[:gone])
            del self._blocks[:gone]
        if self._head * 2 >= len(self._seqs):
            if self._open_index < self._head:  # the open block's first chunks are dropped too
                self._open_bytes -= sum(len(text) for text in self._open[: self._head - self._open_index])
                del self._open[: self._head - self._open_index]
                self._open_index = self._head
            self._base = kept_from
            del self._seqs[: self._head]
            del self._ends[: self._head]
            self._open_index -= self._head
            self._head = 0

    def _texts(self, start: int, stop: int) -> bytes:
        """The texts of the chunks at indexes ``[start, stop)``."""
        opened = self._open_index
        if start >= opened:
            return b"".join(self._open[start - opened : stop - opened])
        begin, end = self._start(start), self._ends[min(stop, opened) - 1]
        parts = []
        for first, last, packed in self._blocks:
            if last <= begin or first >= end:
                continue
            raw = _unpack(packed)
            parts.append(raw[max(begin - first, 0) : min(end, last) - first])
        if stop > opened:
            parts.extend(self._open[: stop - opened])
        return b"".join(parts)

    def _span(self, after: int) -> tuple[int, int, bool]:
        """Indexes ``[start, stop)`` of the chunks after ``after`` up to the first terminal one, and
        whether that batch ends with a terminal chunk."""
        start = bisect_right(self._seqs, after, lo=self._head)
        for seq in self._terminals:
            if seq > after:
                return start, bisect_right(self._seqs, seq, lo=start), True
        return start, len(self._seqs), False

    def _batch(self, after: int, limit: int | None) -> tuple[int, int, bool]:
        """:meth:`_span`, cut to about ``limit`` text bytes (whole chunks, at least one)."""
        start, stop, ended = self._span(after)
        if limit is not None and start < stop:
            cut = bisect_right(self._ends, self._start(start) + limit, lo=start + 1, hi=stop)
            if cut < stop:
                stop, ended = max(cut, start + 1), False
        return start, stop, ended

    def batch_end(self, after: int, limit: int | None = None) -> tuple[int, bool]:
        """The last seq of :meth:`entries_after`'s batch (``after`` when there is none) and whether it
        is terminal, without making the batch."""
        start, stop, ended = self._batch(after, limit)
        return (self._seqs[stop - 1], ended) if start < stop else (after, False)

    def entries_after(self, after: int, limit: int | None = None) -> list[Entry]:
        """The chunks after ``after``, up to and including the first terminal one. ``limit``: about
        that many text bytes at most (whole chunks, at least one), so a reader that fell far behind
        gets its backlog a piece at a time, never all of it at once."""
        start, stop, ended = self._batch(after, limit)
        if start >= stop:
            return []
        origin = self._start(start)
        seqs, last = self._seqs, stop - 1
        opened = self._open_index
        if start >= opened:  # a reader near the head: the open block's texts as they are
            texts = self._open
            return [
                Entry(seqs[index], texts[index - opened].decode(), ended and index == last)
                for index in range(start, stop)
            ]
        joined = self._texts(start, stop)
        out = []
        begin = 0
        for index in range(start, stop):
            end = self._ends[index] - origin
            out.append(Entry(seqs[index], joined[begin:end].decode(), ended and index == last))
            begin = end
        return out


__all__ = ["BLOCK_BYTES", "ChunkRing"]
