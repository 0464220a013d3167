"""Sending a run's chunks to a streaming client from the run's own task, while the client keeps up.

The plain way to stream a run is two tasks per chunk: the run's task stores the chunk and wakes the
client's response task, which reads it back and sends it. For a client that is waiting at the head of
the stream that second task switch is pure overhead (at a thousand streams it is a large share of a
worker's CPU), so the response task hands the store a :class:`DirectSender` as its
:class:`~kanawa.server.store.base.Subscriber` instead: the store's writer offers each step's new
chunks to it, the sender frames them for its wire protocol (``encode``: one ``bytes`` for the batch,
so the trace records, the answer and the usage a step ends with go out in one send), and they are
sent at once, from the writer's task — started eagerly (:func:`kanawa._eager.start_eagerly`: an
eager task on Python 3.12, its first step driven by hand on 3.11), which runs the ASGI ``send`` to
completion right there when the socket takes the bytes, as it does unless the client has fallen
behind.

The sender steps aside (it is *detached* and its response task woken) whenever it cannot go on
sending in order: the offered chunks do not follow the last one this client got, a send has to wait for the
socket (the response task resumes once it finished and reads the rest itself), the run's terminal
chunk was sent, or the send failed. A detached sender is never offered anything again until its
response task attaches it anew, so at any moment either the writer or the response task sends to a
client, never both: frames stay in ``seq`` order with no gap and no duplicate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from types import CoroutineType
from typing import Any, TypeAlias

from starlette.types import Send

from kanawa._eager import start_eagerly
from kanawa.server.store.base import Entry

Encode: TypeAlias = Callable[[Sequence[Entry]], bytes]
"""A wire protocol's framing of a batch of chunks (one ``bytes``, one send; empty: nothing to send).
It is called with every batch of the stream exactly once, in ``seq`` order, whichever task sends it —
so it may keep the stream's state (an OpenAI stream's sequence numbers and open items)."""


class WriterFed:
    """The reader's half of the :class:`~kanawa.server.store.base.Subscriber` handshake, shared by the
    subscribers the HTTP layer hands a store: :meth:`attach` and :meth:`wait` in the reader's task,
    :meth:`detach` from either side. A subclass adds :meth:`offer` (what it does with the writer's
    entries) and ``finished``."""

    __slots__ = ("_loop", "_waiter", "attached", "cursor")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[None] | None = None
        self.attached = False
        self.cursor = 0

    def attach(self, cursor: int) -> None:
        """The reader has delivered everything up to ``cursor`` and waits (:meth:`wait`); the writer
        may offer from here on."""
        self.cursor = cursor
        self.attached = True
        self._waiter = self._loop.create_future()

    async def wait(self) -> None:
        """Until the subscriber is detached; detaches it if the reader's task is cancelled."""
        waiter = self._waiter
        if waiter is None:
            return
        try:
            await waiter
        finally:
            self.attached = False
            self._waiter = None

    def detach(self) -> None:
        """Stop taking entries and wake the reader (it reads on from :attr:`cursor` itself)."""
        self.attached = False
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class DirectSender(WriterFed):
    """One streaming client's direct line (see the module docstring); a
    :class:`~kanawa.server.store.base.Subscriber`. ``cursor`` is the last seq sent."""

    __slots__ = (
        "_encode",
        "_ping",
        "_send",
        "_stall",
        "ended",
        "failed",
        "stalled",
        "write_timeout",
    )

    def __init__(self, send: Send, *, encode: Encode, write_timeout: float | None = None) -> None:
        super().__init__()
        self._send = send
        self._encode = encode
        self.write_timeout = write_timeout
        """Seconds a send may wait for the client's socket before the stream is given up
        (``stalled``): the writer never waits for a client, and a client that stops reading keeps at
        most the one send it stopped in (``None``: no limit)."""
        self.stalled = False
        """A send waited longer than ``write_timeout``: the stream ends and its connection is cut."""
        self._stall: asyncio.TimerHandle | None = None
        self.ended = False
        """The run's terminal chunk has been sent."""
        self.failed = False
        """A send raised, the client disconnected or the server is shutting down: the stream ends."""
        self._ping: asyncio.TimerHandle | None = None

    @property
    def finished(self) -> bool:
        """The run's terminal chunk was sent, or the stream ended (:attr:`failed`)."""
        return self.ended or self.failed

    def attach(self, cursor: int) -> None:
        """As :meth:`WriterFed.attach`; a closed sender stays detached (its :meth:`wait` returns at
        once)."""
        if self.failed:
            self.cursor = cursor
            return
        super().attach(cursor)

    def offer(self, entries: Sequence[Entry]) -> bool:
        """The writer's new chunks (those one step of a run made together: one send). ``True``: sent,
        or being sent (the caller keeps them nowhere for this client); ``False``: not sent (the
        sender is detached and the response task reads them itself)."""
        if not self.attached:
            return False
        if entries[0].seq != self.cursor + 1:
            self.detach()
            return False
        try:
            body = self._encode(entries)
        except Exception:  # the writer is not hurt by a protocol's framing: the reader takes over
            self.detach()
            return False
        last = entries[-1]
        self.cursor = last.seq
        terminal = last.terminal
        if terminal:
            self.ended = True
        if body:  # a protocol may have nothing to say for some chunks (an OpenAI stream for usage)
            self._push(body)
        if terminal and self.attached:
            self.detach()
        return True

    def _push(self, body: bytes) -> None:
        """Send ``body`` now, from the calling task; if the socket cannot take it at once, step aside
        once it is out (the response task goes on after it, so nothing overtakes it)."""
        message: dict[str, Any] = {"type": "http.response.body", "body": body, "more_body": True}
        call = self._send(message)
        # a native coroutine (every ASGI server's and middleware's ``send`` in practice) checked by its
        # concrete type: the abstract Coroutine's isinstance goes through the ABC machinery each time
        coro = call if type(call) is CoroutineType else _awaited(call)
        sending = start_eagerly(coro, self._loop)
        if not sending.done():  # the socket is full: the response task goes on once this is out
            self.attached = False
            sending.add_done_callback(self._sent)
            if self.write_timeout is not None:
                self._stall = self._loop.call_later(self.write_timeout, self._stalled, sending)
            return
        self._sent(sending)

    def keep_alive(self, interval: float, frame: bytes) -> None:
        """Send ``frame`` (an SSE comment) every ``interval`` seconds while the writer holds the line —
        that is while the stream is idle or the client keeps up; a response task that holds it is
        sending anyway. One timer per stream, no task; :meth:`close` stops it. (A method, not a
        closure that re-arms itself: that closure would be a reference cycle holding the sender and
        the server's ``send`` until the garbage collector found it.)"""
        self._ping = self._loop.call_later(interval, self._tick, interval, frame)

    def _tick(self, interval: float, frame: bytes) -> None:
        if self.failed:
            self._ping = None
            return
        if self.attached:
            self._push(frame)
        self._ping = self._loop.call_later(interval, self._tick, interval, frame)

    def close(self) -> None:
        """End the stream: the client disconnected, the server is shutting down, or the response is
        done. Pings stop, the writer sends no more, and a waiting response task wakes and ends."""
        self.failed = True
        if self._ping is not None:
            self._ping.cancel()
            self._ping = None
        self.detach()

    def _stalled(self, sending: asyncio.Future[None]) -> None:
        """The client took nothing for ``write_timeout`` seconds: give the send and the stream up."""
        self._stall = None
        if not sending.done():
            self.stalled = True
            sending.cancel()
            self.close()

    def _sent(self, sending: asyncio.Future[None]) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        if sending.cancelled() or sending.exception() is not None:
            self.failed = True
            self.detach()
        elif not self.attached:  # a send that had to wait has finished
            self.detach()


async def _awaited(awaitable: Awaitable[None]) -> None:
    await awaitable


__all__ = ["DirectSender", "WriterFed"]
