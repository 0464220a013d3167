"""A run's chunks as a server-sent-event response, and the streams a server has open.

:class:`RunEventStream` is sse-starlette's ``EventSourceResponse`` (its headers, its answer to
``HEAD`` and to anything that is not plain HTTP), but it streams a run its own way. sse-starlette
runs every response as a task group of four tasks — the body, a ping loop, a shutdown listener and a
disconnect listener — and cancels the three left when one ends. For a run's stream that is most of
what a short stream costs the server: four task spawns, a cancel scope per send, and three
cancelled tasks whose exceptions and tracebacks are reference cycles left to the garbage collector.
Measured in one process with no sockets, 1,000 streams of one chunk: ~0.45 ms of CPU each, against
~0.1 ms for the same bytes through Starlette's plain ``StreamingResponse``. A run's stream needs
less: its chunks come from the store or straight from the run's writer
(:mod:`kanawa.server.http.direct`), so here

- the body is sent from the response's own task;
- keep-alive comments come from one timer per stream (:meth:`DirectSender.keep_alive
  <kanawa.server.http.direct.DirectSender.keep_alive>`), sent while the stream is idle;
- one task waits for the client's disconnect; it ends by itself when the response is complete (the
  server answers ``receive`` with ``http.disconnect`` then), so nothing is cancelled;
- server shutdown is one watcher per process (:class:`OpenStreams`), which reads the flag
  sse-starlette sets when uvicorn is told to exit and then ends every open stream, so uvicorn's
  graceful shutdown is not held up by streams that would never end by themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Final

from sse_starlette import EventSourceResponse
from sse_starlette.sse import AppStatus
from starlette.types import ASGIApp, Receive, Scope, Send

from kanawa.server.http.direct import DirectSender, Encode
from kanawa.server.store.base import ChunksExpired, RunStore

PING: Final = b": ping\r\n\r\n"
"""The keep-alive comment (an SSE comment line: clients ignore it)."""
SHUTDOWN_POLL_S: Final = 0.5
"""How often the shutdown watcher looks at the exit flag (sse-starlette's own watcher's pace)."""


class TooManyStreams(Exception):  # noqa: N818 - reads as the condition
    """A tenant, or a run, already has its allowed number of streams open in this process."""


class OpenStreams:
    """The run streams a server has open, so that shutting down can end them, and the tasks that
    wait for their clients to disconnect (held here: the event loop keeps only weak references).

    It also counts them per tenant and per run: :meth:`admit` refuses a stream beyond
    ``per_tenant`` or ``per_run`` (``0``: no limit) — every open stream holds a connection, a task
    and up to one send's bytes of this process, so the caps are per process, as that memory is."""

    def __init__(self, *, per_tenant: int = 0, per_run: int = 0) -> None:
        self._senders: set[DirectSender] = set()
        self._watchers: set[asyncio.Task[None]] = set()
        self.closing = False
        """The server is shutting down: a stream opened from now on ends after what is stored."""
        self.per_tenant = per_tenant
        self.per_run = per_run
        self._tenants: dict[str, int] = {}
        self._runs: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._senders)

    def held(self, tenant: str | None = None) -> int:
        """Stream places admitted and not yet released: ``tenant``'s, or every tenant's. What a
        tenant's cap counts; zero again once each of its requests has ended, whichever way."""
        if tenant is not None:
            return self._tenants.get(tenant, 0)
        return sum(self._tenants.values())

    def admit(self, tenant: str, run_id: str | None) -> None:
        """Count a stream about to open (``run_id`` ``None``: a run about to start, whose stream is
        its first); :class:`TooManyStreams` when a cap is reached. Each admitted stream is
        released (:meth:`release`) once, when it ends."""
        if self.per_tenant and self._tenants.get(tenant, 0) >= self.per_tenant:
            raise TooManyStreams(f"this tenant has {self.per_tenant} streams open (the limit)")
        if run_id is not None and self.per_run and self._runs.get(run_id, 0) >= self.per_run:
            raise TooManyStreams(f"this run has {self.per_run} streams open (the limit)")
        self._tenants[tenant] = self._tenants.get(tenant, 0) + 1
        if run_id is not None:
            self._runs[run_id] = self._runs.get(run_id, 0) + 1

    def release(self, tenant: str, run_id: str | None) -> None:
        for counts, key in ((self._tenants, tenant), (self._runs, run_id)):
            if key is None:
                continue
            left = counts.get(key, 0) - 1
            if left > 0:
                counts[key] = left
            else:
                counts.pop(key, None)

    def opened(self, sender: DirectSender, receive: Receive) -> None:
        if self.closing:
            sender.close()
        self._senders.add(sender)
        watcher = asyncio.get_running_loop().create_task(_until_disconnect(receive, sender))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)

    def closed(self, sender: DirectSender) -> None:
        self._senders.discard(sender)

    def close_all(self) -> None:
        for sender in list(self._senders):
            sender.close()

    async def end_at_shutdown(self) -> None:
        """Until the server is told to exit (sse-starlette's ``AppStatus.should_exit``, set from
        uvicorn's exit handler), then end every open stream; run for as long as the app serves."""
        while not AppStatus.should_exit:  # noqa: ASYNC110 - a flag a signal handler sets: nothing to await
            await asyncio.sleep(SHUTDOWN_POLL_S)
        self.closing = True
        self.close_all()


async def _until_disconnect(receive: Receive, sender: DirectSender) -> None:
    """Wait for the client to go; the server also answers ``http.disconnect`` once the response is
    complete, which ends this task with the stream."""
    while True:
        try:
            message = await receive()
        except Exception:  # the server failed us: the stream cannot go on either
            message = {"type": "http.disconnect"}
        if message["type"] == "http.disconnect":
            sender.close()
            return


class RunEventStream(EventSourceResponse):
    """A run's chunks as server-sent events after ``after`` (module docstring): from the store, and —
    while the client keeps up — straight from the run's writer. Chunks that arrived together (a
    client that fell behind, the burst of trace records that closes a step) go out in one body
    message: one send, one socket write. ``encode`` frames a batch for the wire protocol (kanawa's
    chunks, or an OpenAI stream's events: :mod:`kanawa.server.http.protocols`); ``opening`` is what
    goes out before the first chunk; ``expired`` is what a resume past the kept chunks gets instead
    (the protocol's error event)."""

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        after: int,
        *,
        encode: Encode,
        expired: Callable[[ChunksExpired], bytes],
        ping: float,
        streams: OpenStreams,
        write_timeout: float | None = None,
        admitted: tuple[str, str | None] | None = None,
        opening: bytes = b"",
    ) -> None:
        self._sender: DirectSender | None = None
        self._opening = opening
        """Sent right after the headers, before the first chunk (a protocol's opening events)."""
        self._encode = encode
        self._expired = expired
        self._streams = streams
        self._write_timeout = write_timeout
        self._admitted = admitted
        """``(tenant, run id)`` this stream was admitted as (:meth:`OpenStreams.admit`): released at
        its end."""
        super().__init__(
            self._frames(store, run_id, after),
            ping=ping,
            headers={"X-Run-Id": run_id, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._respond(scope, receive, send)
        finally:
            if self._admitted is not None:
                self._streams.release(*self._admitted)
                self._admitted = None

    async def _respond(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"].upper() == "HEAD":
            await super().__call__(scope, receive, send)  # headers only, or sse-starlette's refusal
            return
        timeout = self._write_timeout
        sender = self._sender = DirectSender(send, encode=self._encode, write_timeout=timeout)
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        self._streams.opened(sender, receive)
        if self._ping_interval > 0:
            sender.keep_alive(self._ping_interval, PING)
        body = self.body_iterator
        try:
            if self._opening:
                async with asyncio.timeout(timeout):
                    await send({"type": "http.response.body", "body": self._opening, "more_body": True})
            async for frames in body:
                async with asyncio.timeout(timeout):
                    await send({"type": "http.response.body", "body": frames, "more_body": True})
                if sender.failed:
                    break
        except TimeoutError:  # the client took nothing for write_timeout seconds
            sender.stalled = True
        except OSError:  # a server that raises on a gone client (ASGI spec 2.4) instead of ignoring
            return
        finally:
            sender.close()
            self._streams.closed(sender)
            with contextlib.suppress(Exception):
                await body.aclose()  # type: ignore[attr-defined]
        if sender.stalled:
            _cut(scope)  # ending the response would wait for that client again
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _frames(self, store: RunStore, run_id: str, after: int) -> AsyncIterator[bytes]:
        encode = self._encode
        try:
            async for batch in store.read_batches(run_id, after=after, subscriber=self._sender):
                frames = encode(batch)
                del batch  # a client that stopped reading holds the frames it was sent, not the chunks
                if frames:
                    yield frames
        except ChunksExpired as exc:
            yield self._expired(exc)


def _cut(scope: Scope) -> None:
    """Drop a stalled client's connection at once, with what the server still holds for it (the
    client resumes with ``Last-Event-ID``). The transport is the one :class:`ConnectionHandle` found;
    under a server that has none the response is left incomplete, which such a server closes."""
    transport = scope.get(TRANSPORT_KEY)
    abort = getattr(transport, "abort", None)
    if callable(abort):
        abort()


TRANSPORT_KEY: Final = "kanawa.transport"


class ConnectionHandle:
    """Outermost ASGI layer: puts the connection's transport (what uvicorn's ``receive`` is bound to)
    in the scope, so a stream whose client stopped reading can be cut (:func:`_cut`) instead of
    waiting for that client to take the end of the response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            transport = getattr(getattr(receive, "__self__", None), "transport", None)
            if transport is not None:
                scope[TRANSPORT_KEY] = transport
        await self.app(scope, receive, send)


__all__ = ["PING", "TRANSPORT_KEY", "ConnectionHandle", "OpenStreams", "RunEventStream", "TooManyStreams"]
