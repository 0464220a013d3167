"""The JSONL trace sink (seed 002 §3-6, App. C).

Why a writer thread rather than async file I/O (seed 002 §6 suggests ``aiofiles``): ``emit`` is called
from the hot path of the loop, sometimes from worker threads running sync tools, and a sink may outlive
the event loop that created it (sync ``Agent.run`` starts and stops a loop per call). A daemon thread
fed by a lock-free :class:`queue.SimpleQueue` serves every caller the same way: ``emit`` is one ``put`` — no
serialisation, no file I/O, no awaiting — and the thread batches, serialises and writes. It also lets
the sink flush at interpreter exit (``atexit``, via :func:`weakref.finalize`) so a script that crashes
before closing the sink still leaves its trace behind.

Failure policy: a write error is logged once (``kanawa.trace`` logger, no payloads) and the batch is
dropped; the run is never interrupted. Values JSON cannot hold are written as truncated ``repr``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import re
import threading
import time
import uuid
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final, TextIO

from kanawa._logging import get_logger
from kanawa.trace.events import TraceEvent
from kanawa.trace.serialize import event_to_line

_log = get_logger("kanawa.trace")

DEFAULT_BATCH_SIZE: Final = 64
DEFAULT_FLUSH_INTERVAL: Final = 1.0
DEFAULT_MAX_PENDING: Final = 100_000
CLOSE_TIMEOUT: Final = 10.0


@dataclass(slots=True)
class _Flush:
    """Queue marker: write everything queued before me, then set ``done``."""

    done: threading.Event


@dataclass(slots=True)
class _Stop:
    """Queue marker: write everything queued before me, close the file and end the thread."""


_Item = TraceEvent | _Flush | _Stop


def trace_file_name(session: str, *, when: float | None = None) -> str:
    """``20250523T041433Z_<session>.jsonl`` — sortable by start time, findable by session id."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", session)[:128] or "session"
    return f"{stamp}_{safe}.jsonl"


def _resolve_path(target: str | os.PathLike[str], session: str) -> Path:
    """A directory (existing, ending in a separator, or with no suffix) gets a per-session file."""
    path = Path(target)
    text = os.fspath(target)
    if path.is_dir() or text.endswith(("/", os.sep)) or not path.suffix:
        return path / trace_file_name(session)
    return path


class _FileWriter:
    """Owned by the writer thread: opens the file lazily (parents created), appends lines, counts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written = 0
        self.dropped = 0
        self._file: TextIO | None = None
        self._failed = False

    def write(self, batch: Sequence[TraceEvent]) -> None:
        if not batch:
            return
        try:
            text = "".join(event_to_line(event) + "\n" for event in batch)
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8", newline="\n")
            self._file.write(text)
            self._file.flush()
        except Exception as exc:  # I/O or anything unexpected: the run must go on.
            self.dropped += len(batch)
            if not self._failed:
                self._failed = True
                _log.warning(
                    "cannot write trace file %s (%s: %s); trace events are being dropped",
                    self.path,
                    type(exc).__name__,
                    exc if isinstance(exc, OSError) else "",
                )
            return
        self.written += len(batch)

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


def _writer_loop(
    items: queue.SimpleQueue[_Item], writer: _FileWriter, batch_size: int, flush_interval: float
) -> None:
    """Drain ``items``: write when ``batch_size`` events are buffered or the oldest buffered event is
    ``flush_interval`` seconds old, on a flush marker, and on the stop marker (then return)."""
    batch: list[TraceEvent] = []
    deadline = 0.0
    while True:
        timeout = None if not batch else max(0.0, deadline - time.monotonic())
        try:
            item = items.get(timeout=timeout)
        except queue.Empty:
            writer.write(batch)
            batch = []
            continue
        if isinstance(item, TraceEvent):
            if not batch:
                deadline = time.monotonic() + flush_interval
            batch.append(item)
            if len(batch) >= batch_size:
                writer.write(batch)
                batch = []
        elif isinstance(item, _Flush):
            writer.write(batch)
            batch = []
            item.done.set()
        else:
            writer.write(batch)
            writer.close()
            return


def _shutdown(items: queue.SimpleQueue[_Item], thread: threading.Thread, timeout: float) -> None:
    """Stop the writer and wait for it; runs on :meth:`JsonlTraceSink.close`, on garbage collection of
    an unclosed sink, and at interpreter exit. Must not reference the sink itself."""
    items.put(_Stop())
    if thread is not threading.current_thread():
        thread.join(timeout)
        if thread.is_alive():
            _log.warning("trace writer did not finish within %.1fs; the trace may be incomplete", timeout)


class JsonlTraceSink:
    """Writes trace events as JSON lines (seed 002 App. C) to ``path``, off the caller's path.

    ``path`` is a file, or a directory (existing, ending with a separator, or without a suffix) in which
    a file named after the session is created (see :func:`trace_file_name`; ``session`` defaults to a
    random id). Parent directories are created at the first write; a sink that never receives an event
    creates no file.

    ``emit`` only enqueues. A background thread writes a batch when ``batch_size`` events are waiting
    or ``flush_interval`` seconds after the first of them arrived, and everything on :meth:`flush`,
    :meth:`close` / :meth:`aclose` and at interpreter exit. More than ``max_pending`` unwritten events
    (a stalled disk) are dropped rather than growing memory without bound; ``dropped`` counts them.
    Events emitted after closing are dropped too. Events are serialised on the writer thread, so an
    event's ``result``/``data`` must not be mutated after it is emitted (the loop builds fresh ones).
    A sink used in a forked child process starts its own writer there.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        session: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if flush_interval <= 0:
            raise ValueError("flush_interval must be positive")
        self.session = session or uuid.uuid4().hex
        self.path = _resolve_path(path, self.session)
        self._batch_size = batch_size
        self._flush_interval = flush_interval
        self._max_pending = max_pending
        self._items: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._writer = _FileWriter(self.path)
        self._thread: threading.Thread | None = None
        self._finalizer: weakref.finalize[..., JsonlTraceSink] | None = None
        self._start_lock = threading.Lock()
        self._pid = 0  # the process whose writer thread serves this sink; 0 = not started
        self._closed = False
        self._overflow = 0

    # ------------------------------------------------------------------------------------ hot path

    def emit(self, event: TraceEvent) -> None:
        """Queue ``event`` for writing; returns at once and never raises."""
        if self._closed:
            self._overflow += 1
            return
        if self._pid != os.getpid():  # first event, or first event in a forked child
            self._start()
        if self._items.qsize() >= self._max_pending:
            self._overflow += 1
            if self._overflow == 1:
                _log.warning("trace writer is %d events behind; dropping new events", self._max_pending)
            return
        self._items.put(event)

    # ----------------------------------------------------------------------------------- lifecycle

    def _start(self) -> None:
        """Start the writer thread. In a forked child (threads do not survive ``fork``) the sink gets a
        fresh queue, lock and thread; events the parent had queued are the parent's to write."""
        pid = os.getpid()
        if self._pid not in (0, pid):
            self._start_lock = threading.Lock()  # may have been copied while held
            self._items = queue.SimpleQueue()
            self._writer = _FileWriter(self.path)
            if self._finalizer is not None:
                self._finalizer.detach()
        with self._start_lock:
            if self._pid == pid:
                return
            thread = threading.Thread(
                target=_writer_loop,
                args=(self._items, self._writer, self._batch_size, self._flush_interval),
                name=f"kanawa-trace-{self.path.name}",
                daemon=True,
            )
            thread.start()
            # Runs at close, at garbage collection and (atexit=True by default) at interpreter exit.
            self._finalizer = weakref.finalize(self, _shutdown, self._items, thread, CLOSE_TIMEOUT)
            self._thread = thread
            self._pid = pid

    def flush(self, *, timeout: float = CLOSE_TIMEOUT) -> bool:
        """Block until every event emitted so far is written; ``False`` if that took over ``timeout``."""
        if self._pid != os.getpid() or self._closed:
            return True
        marker = _Flush(threading.Event())
        self._items.put(marker)
        return marker.done.wait(timeout)

    async def aflush(self) -> bool:
        """:meth:`flush` without blocking the event loop."""
        return await asyncio.to_thread(self.flush)

    def close(self) -> None:
        """Write everything queued, close the file and stop the thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._finalizer is not None:
            self._finalizer()  # calls _shutdown once; later calls (and atexit) are no-ops

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop (the :class:`TraceSink` protocol)."""
        if self._closed:
            return
        await asyncio.to_thread(self.close)

    def __enter__(self) -> JsonlTraceSink:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------------------------ counters

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def written(self) -> int:
        """Events written to the file so far."""
        return self._writer.written

    @property
    def dropped(self) -> int:
        """Events lost: queue overflow, emitted after close, or failed writes."""
        return self._overflow + self._writer.dropped

    def __repr__(self) -> str:
        return f"JsonlTraceSink({os.fspath(self.path)!r}, written={self.written}, dropped={self.dropped})"


__all__ = ["JsonlTraceSink", "trace_file_name"]
