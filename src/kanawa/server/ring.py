"""A run's kept chunks in memory, compact: their SSE frames back to back in one ``bytearray``.

The in-memory store keeps every chunk of every run until the run's TTL, so what a kept chunk costs
beyond its text adds up with the number of runs: a Python object per chunk (an ``Entry``, its
``str``, its ``seq``) is about 130 bytes on top of a delta's ~150. Here a chunk is its SSE frame
(``id: <seq>`` and ``data: <json>`` lines, encoded once when it is added) plus two 8-byte slots in
integer arrays (its ``seq`` and where its frame ends). A reader that has fallen behind gets all its
frames as one slice, and the SSE endpoint sends that slice as it is.

At most ``cap`` chunks are kept: the oldest are dropped first (their bytes are cut off the buffer
once at least half of it is dropped, so dropping is amortised O(1) per chunk).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Sequence
from typing import Final

_FRAME: Final = b"id: %d\r\ndata: %b\r\n\r\n"


def sse_frame(seq: int, text: str) -> bytes:
    """One chunk as a server-sent event: its ``seq`` as the event id, its JSON as the data line."""
    return _FRAME % (seq, text.encode())


def frame_text(frame: bytes | bytearray | memoryview, seq: int) -> str:
    """The chunk JSON inside :func:`sse_frame`'s frame for ``seq``."""
    prefix = len(b"id: %d\r\ndata: " % seq)
    return bytes(frame[prefix:-4]).decode()


class ChunkRing:
    """The kept chunks of one run, in ``seq`` order (see the module docstring)."""

    __slots__ = ("_data", "_ends", "_head", "_seqs", "_terminals", "cap")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._data = bytearray()
        self._seqs = array("q")
        self._ends = array("q")
        self._head = 0
        """Index of the oldest kept chunk in ``_seqs``/``_ends`` (those before it are dropped)."""
        self._terminals: list[int] = []
        """The seqs of kept terminal chunks (a run waiting for approval has one before its last)."""

    def __len__(self) -> int:
        return len(self._seqs) - self._head

    @property
    def first(self) -> int | None:
        """The oldest kept seq."""
        return self._seqs[self._head] if len(self) else None

    @property
    def last(self) -> int | None:
        return self._seqs[-1] if len(self) else None

    def add(self, seq: int, frame: bytes, terminal: bool) -> None:
        """Keep a chunk whose ``seq`` is above every kept one (the store checks)."""
        self._data += frame
        self._seqs.append(seq)
        self._ends.append(len(self._data))
        if terminal:
            self._terminals.append(seq)
        if len(self) > self.cap:
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        self._head += 1
        first = self._seqs[self._head]
        if self._terminals and self._terminals[0] < first:
            self._terminals = [seq for seq in self._terminals if seq >= first]
        if self._head * 2 >= len(self._seqs):
            cut = self._ends[self._head - 1]
            del self._data[:cut]
            del self._seqs[: self._head]
            self._ends = array("q", (end - cut for end in self._ends[self._head :]))
            self._head = 0

    def _span(self, after: int) -> tuple[int, int, bool]:
        """Indexes ``[start, stop)`` of the chunks after ``after`` up to the first terminal one, and
        whether that batch ends with a terminal chunk."""
        start = bisect_right(self._seqs, after, lo=self._head)
        stop = len(self._seqs)
        for seq in self._terminals:
            if seq > after:
                return start, bisect_right(self._seqs, seq, lo=start), True
        return start, stop, False

    def frames_after(self, after: int) -> tuple[bytes, int, bool]:
        """The frames of the chunks after ``after`` (up to and including the first terminal one) as
        one ``bytes``, the last seq among them (``after`` when there is none), and whether the last
        one is terminal."""
        start, stop, ended = self._span(after)
        if start >= stop:
            return b"", after, False
        begin = self._ends[start - 1] if start else 0
        return bytes(self._data[begin : self._ends[stop - 1]]), self._seqs[stop - 1], ended

    def entries_after(self, after: int) -> list[tuple[int, str, bool]]:
        """``(seq, text, terminal)`` of the chunks after ``after`` (up to the first terminal one)."""
        start, stop, ended = self._span(after)
        out = []
        data = memoryview(self._data)
        try:
            for index in range(start, stop):
                begin = self._ends[index - 1] if index else 0
                seq = self._seqs[index]
                out.append((seq, frame_text(data[begin : self._ends[index]], seq), False))
        finally:
            data.release()
        if ended and out:
            seq, text, _ = out[-1]
            out[-1] = (seq, text, True)
        return out


def sse_frames(chunks: Sequence[tuple[int, str]]) -> bytes:
    """Several chunks' frames as one ``bytes`` (one send, one socket write)."""
    return "".join(f"id: {seq}\r\ndata: {text}\r\n\r\n" for seq, text in chunks).encode()


__all__ = ["ChunkRing", "frame_text", "sse_frame", "sse_frames"]
