"""Group commit: the writes of all runs at one moment go to Redis as one buffer on one connection,
answered in order; and a running run's writer-side upkeep."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from typing import Any, TypeAlias

from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ResponseError

from kanawa._logging import get_logger
from kanawa.server.store.redis.scripts import REPLY_TIMEOUT_S, _pack

_log = get_logger("kanawa.server")


_Done: TypeAlias = Callable[[list[Any] | Exception], None]
"""What a group commit calls with a write's replies, or with the error that lost them."""


def _answer(done: _Done, replies: list[Any] | Exception) -> None:
    """Hand a write its replies; a callback that fails is logged, never allowed to stop the batch's
    other writes from getting theirs."""
    try:
        done(replies)
    except Exception:
        _log.exception("a Redis write's reply handler failed")


class _GroupCommit:
    """Group commit: the writes waiting when the previous round trip ends go to Redis as one buffer
    on one connection of their own, and their replies are read back in order — many concurrent runs
    cost one round trip per batch, not one per chunk. Each caller hands over its commands already
    packed (:func:`_pack`) and either awaits its replies (:meth:`run`) or leaves a callback for them
    (:meth:`post`, what a chunk does: the run goes on while its ``XADD`` is under way); one
    connection, in order, so a run's writes are applied in the order they were made and a write's
    reply comes after every earlier write's.

    Replies are Redis's: bytes, integers, ``None``, or the :class:`~redis.exceptions.ResponseError` a
    command was refused with. A connection failure fails every write of the batch."""

    def __init__(self, url: str) -> None:
        self._client = Redis.from_url(url, max_connections=1)
        self._conn: AbstractConnection | None = None
        self._pending: list[tuple[bytes, int, _Done]] = []
        self._flushing: asyncio.Task[None] | None = None
        self.backlog = 0
        """Writes handed over and not answered yet."""

    def post(self, packed: bytes, count: int, done: _Done) -> None:
        """Send ``count`` packed commands with the next batch; ``done`` gets their ``count`` replies
        (or the error that lost them) when they are in."""
        self._pending.append((packed, count, done))
        self.backlog += 1
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush(), name="kanawa-redis-group-commit")

    async def run(self, packed: bytes, count: int) -> list[Any]:
        """Send ``count`` packed commands with the next batch and wait for their ``count`` replies
        (after the replies of every write handed over before)."""
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()

        def done(replies: list[Any] | Exception) -> None:
            if future.done():
                return
            if isinstance(replies, Exception):
                future.set_exception(replies)
            else:
                future.set_result(replies)

        self.post(packed, count, done)
        return await future

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                replies = await self._round_trip(batch)
            except BaseException as exc:
                self.backlog -= len(batch)
                lost = exc if isinstance(exc, Exception) else ConnectionError("Redis write cancelled")
                for _, _, done in batch:
                    _answer(done, lost)
                if not isinstance(exc, Exception):
                    raise
                continue
            self.backlog -= len(batch)
            at = 0
            for _, count, done in batch:
                _answer(done, replies[at : at + count])
                at += count

    async def _round_trip(self, batch: list[tuple[bytes, int, _Done]]) -> list[Any]:
        if self._conn is None:
            self._conn = await self._client.connection_pool.get_connection()  # type: ignore[no-untyped-call]
        conn = self._conn
        try:
            async with asyncio.timeout(REPLY_TIMEOUT_S):  # one deadline for the batch, not a timer a reply
                await conn.send_packed_command(b"".join(packed for packed, _, _ in batch), check_health=False)
                replies: list[Any] = []
                for _ in range(sum(count for _, count, _ in batch)):
                    try:
                        replies.append(await conn.read_response(timeout=math.inf))
                    except ResponseError as refused:
                        replies.append(refused)
            return replies
        except BaseException:
            # what was sent or left unread is unknown: start the next batch on a fresh connection
            with contextlib.suppress(Exception):
                await conn.disconnect(nowait=True)
            raise

    async def aclose(self) -> None:
        if self._flushing is not None and not self._flushing.done():
            with contextlib.suppress(Exception):
                await self._flushing
        if self._conn is not None:
            await self._client.connection_pool.release(self._conn)
            self._conn = None
        await self._client.aclose()


class _Upkeep:
    """A running run's writer-side state: its keys, its cancel read packed once (the same for every
    chunk), when its upkeep (:data:`_REFRESH_SCRIPT`) is due and its cancel flag read next, the
    chunk bytes written since the last upkeep, and the flag's last value."""

    __slots__ = (
        "added_bytes",
        "added_chunks",
        "cancelled",
        "check_at",
        "failure",
        "read_cancel",
        "refresh_at",
        "run_id",
        "stream_key",
        "stream_name",
    )

    def __init__(self, run_id: str, stream_name: str, record_key: bytes) -> None:
        self.run_id = run_id.encode()
        self.stream_name = stream_name
        self.stream_key = stream_name.encode()
        self.read_cancel = _pack(b"HGET", record_key, b"cancel")
        self.refresh_at = 0.0
        self.check_at = 0.0
        self.cancelled = False
        self.added_bytes = 0
        """Bytes of chunks written since the last upkeep (text plus :data:`ENTRY_BYTES` each)."""
        self.added_chunks = 0
        self.failure: Exception | None = None
        """Why a chunk sent without waiting was not stored: raised by the run's next append."""

    def refresh_args(self, seq: int, terminal: bool) -> tuple[bytes, ...]:
        """The arguments of the run's upkeep (:data:`_REFRESH_SCRIPT`): the chunk bytes added since
        the last one are handed over (:class:`_Stored` gives them back if Redis did not run it)."""
        added, chunks = self.added_bytes, self.added_chunks
        self.added_bytes = self.added_chunks = 0
        return (
            self.run_id,
            b"%d" % seq,
            repr(time.time()).encode(),
            b"%d" % added,
            b"%d" % chunks,
            b"1" if terminal else b"0",
        )


__all__: list[str] = []
