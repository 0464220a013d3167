""":class:`RedisRunStore`: runs in Redis, so any worker can stream, resume or cancel any run.

Layout (``prefix`` defaults to ``kanawa:``)::

    {prefix}run:{id}              hash: tenant, agent, status, created, updated, last_seq, reason,
                                  session, cancel — the RunRecord
    {prefix}run:{id}:chunks       stream: entry id ``<seq>-0``, fields d (chunk JSON), t (1 = terminal)
    {prefix}run:{id}:checkpoint   string: a durable run's last completed step
    {prefix}tenant:{t}:runs       sorted set of run ids by creation time

Each chunk is an ``XADD`` with the explicit id ``<seq>-0`` (Redis itself refuses an id that is not
above the last one, so ``seq`` is monotonic even with two writers). ``XADD`` does not refresh a key's
TTL, so the writer refreshes it deliberately — ``PEXPIRE`` on the stream and the hash, with the
record's ``last_seq``/``updated`` — once a second per run and with its last chunk, and reads the
run's ``cancel`` flag (how a cancel sent to another worker reaches it) every 0.2 s. The commands of
all runs writing at the same moment go to Redis in one pipeline (group commit).

Readers never hold a Redis connection each. A run written by this process reaches its local readers
straight from the writer, after its ``XADD`` succeeded; for runs written elsewhere (another worker, a
Celery worker) one :class:`StreamHub` per process owns one connection that ``XREAD BLOCK``\\ s on
every such stream some local client follows and fans entries out to per-client queues. A client
first registers with the hub, then reads what is already stored with a plain ``XRANGE`` on the
shared pool; the two overlap and ``seq`` removes the duplicates, so nothing falls
between them. When a new stream is followed, the hub's blocked read is cut short with
``CLIENT UNBLOCK`` so it starts following at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, cast

from redis.asyncio import BlockingConnectionPool, Redis

from kanawa._logging import get_logger
from kanawa.server.store import ChunksExpired, Entry, RunRecord, RunStatus

_log = get_logger("kanawa.server")
REFRESH_S: Final = 1.0
"""How often a running run's TTL (``XADD`` does not refresh it) and record fields are refreshed."""
CANCEL_CHECK_S: Final = 0.2
"""How often a running run's writer reads its cancel flag."""
BLOCK_MS: Final = 5_000
"""How long the hub's ``XREAD`` blocks when nothing arrives (it is woken early when needed)."""


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _seq(entry_id: Any) -> int:
    return int(_text(entry_id).partition("-")[0])


def _entry(entry_id: Any, fields: Mapping[Any, Any]) -> Entry:
    data = {_text(k): _text(v) for k, v in fields.items()}
    return Entry(_seq(entry_id), data.get("d", ""), data.get("t") == "1")


class StreamHub:
    """One reader per process: ``XREAD`` over all followed streams, fanned out to local queues."""

    def __init__(self, url: str, redis: Redis) -> None:
        self._url = url
        self._redis = redis
        self._conn: Redis | None = None
        self._generation = 0
        self._seen = 0
        self._client_id: int | None = None
        self._cursors: dict[str, str] = {}
        self._queues: dict[str, set[asyncio.Queue[Entry]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._starting = asyncio.Lock()
        self.local: set[str] = set()
        """Streams this process is writing: their entries reach local readers straight from the writer
        (:meth:`deliver`), and the pump leaves them out of its ``XREAD``."""

    async def _ensure(self) -> None:
        async with self._starting:
            if self._task is None:
                self._conn = Redis.from_url(self._url, max_connections=1)
                self._client_id = int(await self._conn.client_id())
                self._task = asyncio.create_task(self._pump(), name="kanawa-stream-hub")

    async def follow(self, key: str, after: int) -> asyncio.Queue[Entry]:
        queue: asyncio.Queue[Entry] = asyncio.Queue()
        listeners = self._queues.setdefault(key, set())
        listeners.add(queue)
        if key in self.local:
            return queue
        await self._ensure()
        if key not in self._cursors:
            self._cursors[key] = f"{after}-0"
            self._generation += 1
            await self._restart_read(self._generation)
        return queue

    async def _restart_read(self, generation: int) -> None:
        """Make the pump's next ``XREAD`` include the new stream: wake it while it waits for work and
        cut its blocked read short with ``CLIENT UNBLOCK`` until it has picked up ``generation``."""
        self._wake.set()
        for _ in range(200):
            if self._seen >= generation or self._client_id is None:
                return
            with contextlib.suppress(Exception):
                await self._redis.client_unblock(self._client_id)
            await asyncio.sleep(0.001)

    def deliver(self, key: str, entry: Entry) -> None:
        """An entry this process has just added: hand it to the local readers of its stream."""
        for queue in self._queues.get(key, ()):
            queue.put_nowait(entry)

    def end_local(self, key: str) -> None:
        """This process stopped writing ``key``; readers still following it go back to ``XREAD``."""
        self.local.discard(key)
        if key in self._cursors:
            self._wake.set()

    def unfollow(self, key: str, queue: asyncio.Queue[Entry]) -> None:
        listeners = self._queues.get(key)
        if listeners is None:
            return
        listeners.discard(queue)
        if not listeners:
            del self._queues[key]
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
                for entry_id, fields in items:
                    entry = _entry(entry_id, fields)
                    if key in self._cursors:
                        self._cursors[key] = _text(entry_id)
                    for queue in self._queues.get(key, ()):
                        queue.put_nowait(entry)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._conn is not None:
            await self._conn.aclose()
            self._conn = None


class _GroupCommit:
    """Group commit: the commands of every append waiting when the previous round trip ends go to
    Redis in one pipeline, so many concurrent runs cost one round trip per batch, not one per chunk.
    Each run awaits its own append, so a run's chunks still go in ``seq`` order."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._pending: list[
            tuple[list[tuple[str, tuple[Any, ...], dict[str, Any]]], asyncio.Future[list[Any]]]
        ] = []
        self._flushing: asyncio.Task[None] | None = None

    async def run(self, commands: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> list[Any]:
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._pending.append((commands, future))
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for commands, _ in batch:
                        for name, args, kwargs in commands:
                            getattr(pipe, name)(*args, **kwargs)
                    results = await pipe.execute(raise_on_error=False)
            except Exception as exc:
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            at = 0
            for commands, future in batch:
                if not future.done():
                    future.set_result(list(results[at : at + len(commands)]))
                at += len(commands)


class RedisRunStore:
    """The :class:`~kanawa.server.store.RunStore` contract over Redis (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        ttl: float = 3600.0,
        cap: int = 10_000,
        prefix: str = "kanawa:",
        max_connections: int = 32,
    ) -> None:
        # a blocking pool: a burst of readers waits for a connection instead of failing
        pool = BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=None)
        self._redis: Redis = Redis.from_pool(pool)
        self._ttl_ms = int(ttl * 1000)
        self._cap = cap
        self._prefix = prefix
        self.hub = StreamHub(url, self._redis)
        self._batcher = _GroupCommit(self._redis)
        self._upkeep: dict[str, list[Any]] = {}
        """Per running run: [next TTL refresh, next cancel check, last cancel flag]."""

    @property
    def redis(self) -> Redis:
        return self._redis

    def _run(self, run_id: str) -> str:
        return f"{self._prefix}run:{run_id}"

    def _chunks(self, run_id: str) -> str:
        return f"{self._prefix}run:{run_id}:chunks"

    async def create(self, record: RunRecord) -> None:
        key = self._run(record.run_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=_to_hash(record))
            pipe.pexpire(key, self._ttl_ms)
            index = f"{self._prefix}tenant:{record.tenant}:runs"
            pipe.zadd(index, {record.run_id: record.created})
            pipe.pexpire(index, self._ttl_ms)
            await pipe.execute()

    async def _record(self, run_id: str) -> RunRecord | None:
        """The record, with ``last_seq`` read from the stream itself (the hash's copy is refreshed
        only now and then)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self._run(run_id))
            pipe.xrevrange(self._chunks(run_id), count=1)
            raw, top = await pipe.execute()
        if not raw:
            return None
        record = _from_hash(run_id, raw)
        if top:
            record = replace(record, last_seq=max(record.last_seq, _seq(top[0][0])))
        return record

    async def get_any(self, run_id: str) -> RunRecord | None:
        return await self._record(run_id)

    async def get(self, tenant: str, run_id: str) -> RunRecord | None:
        record = await self._record(run_id)
        return record if record is not None and record.tenant == tenant else None

    async def list(self, tenant: str, *, limit: int) -> list[RunRecord]:
        ids = await self._redis.zrevrange(f"{self._prefix}tenant:{tenant}:runs", 0, limit - 1)
        out = []
        for run_id in ids:
            record = await self.get(tenant, _text(run_id))
            if record is not None:
                out.append(record)
        return out

    async def set_status(self, run_id: str, status: RunStatus, *, reason: str | None = None) -> None:
        key = self._run(run_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping={"status": status, "updated": repr(time.time()), "reason": reason or ""})
            pipe.pexpire(key, self._ttl_ms)
            await pipe.execute()

    async def append(self, run_id: str, entry: Entry) -> bool:
        """Queue the ``XADD`` for the next group commit and wait for it. The keys' TTL and the run's
        ``updated``/``last_seq`` fields are refreshed at most every :data:`REFRESH_S` seconds per run
        (and with its terminal chunk), the cancel flag read at most every :data:`CANCEL_CHECK_S`."""
        now = time.monotonic()
        state = self._upkeep.get(run_id)
        if state is None:
            state = self._upkeep[run_id] = [0.0, 0.0, False]
        commands: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
            (
                "xadd",
                (self._chunks(run_id), {"d": entry.text, "t": "1" if entry.terminal else "0"}),
                {"id": f"{entry.seq}-0", "maxlen": self._cap, "approximate": False},
            )
        ]
        if entry.terminal or now >= state[0]:
            state[0] = now + REFRESH_S
            key = self._run(run_id)
            commands.append(("pexpire", (self._chunks(run_id), self._ttl_ms), {}))
            commands.append(
                ("hset", (key,), {"mapping": {"last_seq": entry.seq, "updated": repr(time.time())}})
            )
            commands.append(("pexpire", (key, self._ttl_ms), {}))
        check = now >= state[1]
        if check:
            state[1] = now + CANCEL_CHECK_S
            commands.append(("hget", (self._run(run_id), "cancel"), {}))
        stream = self._chunks(run_id)
        self.hub.local.add(stream)
        if entry.terminal:
            self._upkeep.pop(run_id, None)
        try:
            results = await self._batcher.run(commands)
            if isinstance(results[0], Exception):
                raise ValueError(f"seq {entry.seq} was refused by Redis: {results[0]}")
            self.hub.deliver(stream, entry)
        finally:
            if entry.terminal:
                self.hub.end_local(stream)
        if check:
            state[2] = bool(results[-1]) and not isinstance(results[-1], Exception)
        return bool(state[2])

    async def request_cancel(self, run_id: str) -> None:
        await self._redis.hset(self._run(run_id), "cancel", "1")

    async def cancel_requested(self, run_id: str) -> bool:
        return bool(await self._redis.hget(self._run(run_id), "cancel"))

    async def _range(self, stream: str, after: int) -> Sequence[Entry]:
        stored = await self._redis.xrange(stream, min=f"({after}-0" if after else "-", max="+")
        return [_entry(entry_id, fields or {}) for entry_id, fields in stored or []]

    async def read(self, run_id: str, *, after: int) -> AsyncIterator[Entry]:
        """What is stored first (a finished run never touches the hub), then — following the stream
        through the hub — what was added meanwhile, then live entries; ``seq`` drops the overlap."""
        stream = self._chunks(run_id)
        cursor = after
        stored = await self._range(stream, after)
        if stored and stored[0].seq > after + 1:
            raise ChunksExpired(stored[0].seq)
        if not stored and after > 0:
            record = await self._record(run_id)
            if record is not None and record.last_seq > after:
                raise ChunksExpired(record.last_seq)
        for entry in stored:
            cursor = entry.seq
            yield entry
            if entry.terminal:
                return
        queue = await self.hub.follow(stream, cursor)
        try:
            for entry in await self._range(stream, cursor):
                cursor = entry.seq
                yield entry
                if entry.terminal:
                    return
            while True:
                try:
                    entry = await asyncio.wait_for(queue.get(), timeout=self._ttl_ms / 1000)
                except TimeoutError:
                    return
                if entry.seq > cursor:
                    cursor = entry.seq
                    yield entry
                    if entry.terminal:
                        return
        finally:
            self.hub.unfollow(stream, queue)

    async def save_checkpoint(self, run_id: str, data: str) -> None:
        await self._redis.set(f"{self._run(run_id)}:checkpoint", data, px=self._ttl_ms)

    async def load_checkpoint(self, run_id: str) -> str | None:
        raw = await self._redis.get(f"{self._run(run_id)}:checkpoint")
        return _text(raw) if raw is not None else None

    async def aclose(self) -> None:
        await self.hub.aclose()
        await self._redis.aclose()


def _to_hash(record: RunRecord) -> dict[bytes | bytearray | memoryview[int] | str | int | float, str | int]:
    return {
        "tenant": record.tenant,
        "agent": record.agent,
        "status": record.status,
        "created": repr(record.created),
        "updated": repr(record.updated),
        "last_seq": record.last_seq,
        "reason": record.termination_reason or "",
        "session": record.session_id or "",
    }


def _from_hash(run_id: str, raw: Mapping[Any, Any]) -> RunRecord:
    data = {_text(k): _text(v) for k, v in raw.items()}
    return RunRecord(
        run_id=run_id,
        tenant=data.get("tenant", ""),
        agent=data.get("agent", ""),
        status=cast(RunStatus, data.get("status", "running")),
        created=float(data.get("created", "0")),
        updated=float(data.get("updated", "0")),
        last_seq=int(data.get("last_seq", "0")),
        termination_reason=data.get("reason") or None,
        session_id=data.get("session") or None,
    )


__all__ = ["RedisRunStore", "StreamHub"]
