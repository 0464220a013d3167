"""Reading streams written elsewhere: one :class:`StreamHub` per process follows them with one
``XREAD BLOCK`` connection (RESP) and fans entries out to per-reader mailboxes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any, cast

from redis.asyncio import Redis

from kanawa._logging import get_logger
from kanawa.server.store.base import (
    Entry,
    Subscriber,
)
from kanawa.server.store.redis.scripts import BLOCK_MS, _entry, _text

_log = get_logger("kanawa.server")


class _Reading:
    """Where a reader of one stream is: the last ``seq`` it was given, and whether that ended the run."""

    __slots__ = ("cursor", "ended")

    def __init__(self, cursor: int) -> None:
        self.cursor = cursor
        self.ended = False


class _Mailbox:
    """One reader's entries from the hub or the local writer: a list and, while the reader waits, a
    future that says whether something came (``False``: the hub's watchdog gave up on the stream) —
    or, while a reader at the head waits, its :class:`~.base.Subscriber`, which takes each entry on
    the spot."""

    __slots__ = ("given_up", "items", "since", "subscriber", "waiter")

    def __init__(self) -> None:
        self.items: list[Entry] = []
        self.waiter: asyncio.Future[bool] | None = None
        self.subscriber: Subscriber | None = None
        self.given_up = False
        """The watchdog ended the wait: nothing came for ``patience`` seconds."""
        self.since = 0.0
        """When the reader last started waiting or was last sent something directly
        (``time.monotonic()``), for the watchdog."""

    def put(self, entries: Sequence[Entry]) -> None:
        """Entries in ``seq`` order: offered on the spot to the subscriber when there is one and
        nothing is queued before them, else queued for the reader."""
        subscriber = self.subscriber
        if subscriber is not None:
            # (a terminal entry before the last — a stream read past a wait for approval — is left
            # to the reader, which stops at it)
            if (
                not self.items
                and not any(entry.terminal for entry in entries[:-1])
                and subscriber.offer(entries)
            ):
                if subscriber.attached:
                    self.since = time.monotonic()  # the stream is alive: the watchdog leaves it be
                else:
                    self.subscriber = None
                return
            self.subscriber = None
            subscriber.detach()
        self.items.extend(entries)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    def give_up(self) -> None:
        self.given_up = True
        subscriber, self.subscriber = self.subscriber, None
        if subscriber is not None:
            subscriber.detach()
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(False)

    async def take(self) -> list[Entry]:
        """What has arrived, waiting for something if need be (``[]``: given up)."""
        if not self.items:
            loop = asyncio.get_running_loop()
            waiter = self.waiter = loop.create_future()
            self.since = time.monotonic()
            try:
                await waiter
            finally:
                self.waiter = None
        items, self.items = self.items, []
        return items


class StreamHub:
    """One reader per process: ``XREAD`` over all followed streams, fanned out to local mailboxes."""

    def __init__(self, url: str, redis: Redis, *, patience: float = 3600.0) -> None:
        self._url = url
        self._redis = redis
        self._patience = patience
        self._watchdog: asyncio.Task[None] | None = None
        self._conn: Redis | None = None
        self._generation = 0
        self._seen = 0
        self._client_id: int | None = None
        self._cursors: dict[str, str] = {}
        self._boxes: dict[str, set[_Mailbox]] = {}
        self._task: asyncio.Task[None] | None = None
        self._restarting: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._starting = asyncio.Lock()
        self.local: dict[str, int] = {}
        """Streams this process is writing, with the last seq handed to local readers: their entries
        reach local readers straight from the writer (:meth:`deliver`), and the pump leaves them out of
        its ``XREAD``."""

    async def _ensure(self) -> None:
        async with self._starting:
            if self._task is None:
                self._conn = Redis.from_url(self._url, max_connections=1)
                self._client_id = int(await self._conn.client_id())
                self._task = asyncio.create_task(self._pump(), name="kanawa-stream-hub")

    def _register(self, key: str) -> _Mailbox:
        box = _Mailbox()
        self._boxes.setdefault(key, set()).add(box)
        if self._watchdog is None:
            self._watchdog = asyncio.get_running_loop().create_task(self._watch(), name="kanawa-hub-watchdog")
        return box

    async def _watch(self) -> None:
        """Ends the wait of readers that have heard nothing for ``patience`` seconds (a stream whose
        writer vanished without its terminal chunk): one sweep now and then instead of a timer for
        every wait of every reader."""
        every = min(max(self._patience / 4, 0.05), 30.0)
        while True:
            await asyncio.sleep(every)
            limit = time.monotonic() - self._patience
            for boxes in list(self._boxes.values()):
                for box in boxes:
                    if (box.waiter is not None or box.subscriber is not None) and box.since <= limit:
                        box.give_up()

    def follow_local(self, key: str) -> _Mailbox | None:
        """A mailbox fed by this process's writer of ``key``, or ``None`` when it is written elsewhere."""
        if key not in self.local:
            return None
        return self._register(key)

    async def follow(self, key: str, after: int) -> _Mailbox:
        box = self.follow_local(key)
        if box is not None:
            return box
        box = self._register(key)
        await self._ensure()
        if key not in self._cursors:
            self._cursors[key] = f"{after}-0"
            self._generation += 1
            self._wake.set()
            if self._restarting is None or self._restarting.done():
                self._restarting = asyncio.create_task(self._restart_read())
        return box

    async def _restart_read(self) -> None:
        """Make the pump's next ``XREAD`` include the streams followed since it started: cut its
        blocked read short with ``CLIENT UNBLOCK`` until it has picked up the latest generation. One
        such task at a time serves every new follower (a burst of clients costs a few unblocks)."""
        for _ in range(200):
            if self._seen >= self._generation or self._client_id is None:
                return
            with contextlib.suppress(Exception):
                await self._redis.client_unblock(self._client_id)
            await asyncio.sleep(0.002)

    def start_local(self, key: str, seq: int) -> None:
        """This process writes ``key`` from now on; ``seq`` is its last chunk so far."""
        self.local.setdefault(key, seq)

    def deliver(self, key: str, entries: Sequence[Entry]) -> None:
        """Entries this process has just added: hand them to the local readers of their stream."""
        if key in self.local:
            self.local[key] = entries[-1].seq
        for box in self._boxes.get(key, ()):
            box.put(entries)

    def end_local(self, key: str) -> None:
        """This process stopped writing ``key``; readers still following it go back to ``XREAD``."""
        self.local.pop(key, None)
        if key in self._cursors:
            self._wake.set()

    def unfollow(self, key: str, box: _Mailbox) -> None:
        boxes = self._boxes.get(key)
        if boxes is None:
            return
        boxes.discard(box)
        if not boxes:
            del self._boxes[key]
            self._cursors.pop(key, None)

    async def _pump(self) -> None:
        assert self._conn is not None
        while True:
            streams = {key: cursor for key, cursor in self._cursors.items() if key not in self.local}
            self._seen = self._generation
            if not streams:
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                reply = await self._conn.xread(streams, block=BLOCK_MS, count=500)  # type: ignore[arg-type]
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("stream hub read failed (%s); retrying", type(exc).__name__)
                await asyncio.sleep(0.2)
                continue
            for key_raw, items in cast("list[tuple[Any, list[tuple[Any, Any]]]]", reply or []):
                key = _text(key_raw)
                entries = [_entry(entry_id, fields) for entry_id, fields in items]
                if not entries:
                    continue
                if key in self._cursors:
                    self._cursors[key] = _text(items[-1][0])
                for box in self._boxes.get(key, ()):
                    box.put(entries)

    async def aclose(self) -> None:
        for task in (self._restarting, self._task, self._watchdog):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._restarting = self._watchdog = None
        if self._conn is not None:
            await self._conn.aclose()
            self._conn = None


__all__ = ["StreamHub"]
