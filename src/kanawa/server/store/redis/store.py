""":class:`RedisRunStore`: runs in Redis, so any worker can stream, resume or cancel any run.

Layout (``prefix`` defaults to ``kanawa:``)::

    {prefix}run:{id}              hash: tenant, agent, status, created, updated, last_seq, reason,
                                  session, cancel — the RunRecord; cb, cn, kb, evicted — what
                                  the memory budget counts; note:<name> — a protocol's notes
    {prefix}run:{id}:chunks       stream: entry id ``<seq>-0``, fields d (chunk JSON), t (1 = terminal)
    {prefix}run:{id}:checkpoint   string: a durable run's last completed step
    {prefix}tenant:{t}:runs       sorted set of run ids by creation time
    {prefix}mem…                  the memory budget's counts and eviction order (_BUDGET_LIBRARY)

Each chunk is an ``XADD`` with the explicit id ``<seq>-0`` (Redis itself refuses an id that is not
above the last one, so ``seq`` is monotonic even with two writers). ``XADD`` does not refresh a key's
TTL, so the writer refreshes it deliberately — ``PEXPIRE`` on the stream and the hash, with the
record's ``last_seq``/``updated`` and the bytes counted for the memory budget, in one script — once
a second per run and with its last chunk, and reads the
run's ``cancel`` flag (how a cancel sent to another worker reaches it) every 0.2 s. The writes of
all runs at the same moment (chunks, new records, statuses, checkpoints) go to Redis together on one
connection, packed as one buffer and answered in one read (group commit): many concurrent runs cost
one round trip per batch, not one per chunk, and a run's writes stay in order. A run does not wait
for its chunks' replies (a refused chunk fails its next append; its terminal chunk, its status and
its checkpoints are waited for, and each reply comes after those of every earlier write, so a
checkpoint is never ahead of the chunks it counts).

Readers never hold a Redis connection each. A run written by this process (``create(...,
writes_here=True)``) reaches its local readers straight from the writer, once its ``XADD``
succeeded (a reader at the head is offered the chunk there and then: :class:`~.base.Subscriber`),
and a reader that joins it at its last delivered chunk needs no Redis read at all; for runs
written elsewhere (another worker, a Celery worker) one :class:`StreamHub` per process owns one
connection that ``XREAD BLOCK``\\ s on every such stream some local client follows and fans entries
out to per-client mailboxes. A client first registers with the hub, then reads what is already stored
with a plain ``XRANGE`` on the shared pool; the two overlap and ``seq`` removes the duplicates, so
nothing falls between them. When a new stream is followed, the hub's blocked read is cut short with
``CLIENT UNBLOCK`` (once per change, however many clients arrive) so it starts following at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from redis.asyncio import BlockingConnectionPool, Redis

from kanawa.server.store.base import (
    SEND_BYTES,
    ChunksExpired,
    Entry,
    RunExists,
    RunRecord,
    RunStatus,
    Subscriber,
)
from kanawa.server.store.redis.commit import _GroupCommit, _Upkeep
from kanawa.server.store.redis.hub import StreamHub, _Mailbox, _Reading
from kanawa.server.store.redis.scripts import (
    _CHECKPOINT_SCRIPT,
    _CLAIM_SCRIPT,
    _CREATE_SCRIPT,
    _NOTE_SCRIPT,
    _RANGE_SCRIPT,
    _REFRESH_SCRIPT,
    BACKLOG_MAX,
    CANCEL_CHECK_S,
    ENTRY_BYTES,
    RANGE_COUNT,
    REFRESH_S,
    _entry,
    _pack,
    _pack_xadd,
    _Scripts,
    _seq,
    _text,
    _upto_terminal,
)


class _Stored:
    """What the replies to a step's ``XADD`` commands do: the chunks Redis accepted go to the run's local
    readers (in one hand-over) and the cancel flag read with them (if any) is kept; a refusal or a
    lost connection is kept for the run's next append to raise. An upkeep Redis did not run
    (``NOSCRIPT``) is due again with the next chunk, its bytes counted again (``refresh_lost``)."""

    __slots__ = ("added", "check", "entries", "hub", "refresh_lost", "scripts", "state")

    def __init__(
        self,
        hub: StreamHub,
        state: _Upkeep,
        entries: Sequence[Entry],
        check: bool,
        scripts: _Scripts | None,
        added: tuple[int, int],
    ) -> None:
        self.hub = hub
        self.state = state
        self.entries = entries
        self.check = check
        self.scripts = scripts
        """Set when the commands end with an upkeep (before the cancel read, if any)."""
        self.added = added
        self.refresh_lost = False

    def __call__(self, replies: list[Any] | Exception) -> None:
        state = self.state
        if isinstance(replies, Exception):
            state.failure = state.failure or replies
            return
        entries = self.entries
        accepted = len(entries)
        for index in range(len(entries)):
            if isinstance(replies[index], Exception):
                accepted = index
                state.failure = state.failure or ValueError(
                    f"seq {entries[index].seq} was refused by Redis: {replies[index]}"
                )
                break
        if accepted:
            self.hub.deliver(state.stream_name, entries[:accepted] if accepted < len(entries) else entries)
        if self.scripts is not None and not self.scripts.answered(_REFRESH_SCRIPT, replies[len(entries)]):
            self.refresh_lost = True
            state.refresh_at = 0.0
            state.added_bytes += self.added[0]
            state.added_chunks += self.added[1]
        if self.check:
            flag = replies[-1]
            state.cancelled = bool(flag) and not isinstance(flag, Exception)


def _first_error(replies: Sequence[Any]) -> None:
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply


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
        tenant_bytes: int = 0,
        total_bytes: int = 0,
    ) -> None:
        # a blocking pool: a burst of readers waits for a connection instead of failing
        pool = BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=None)
        self._redis: Redis = Redis.from_pool(pool)
        self._ttl_ms = int(ttl * 1000)
        self._ttl_b = b"%d" % self._ttl_ms
        self._cap_b = b"%d" % cap
        self._prefix = prefix
        self.hub = StreamHub(url, self._redis, patience=ttl)
        self._batcher = _GroupCommit(url)
        self._upkeep: dict[str, _Upkeep] = {}
        self._scripts = _Scripts(prefix, tenant_bytes, total_bytes, self._ttl_b)

    @property
    def redis(self) -> Redis:
        return self._redis

    def _run(self, run_id: str) -> str:
        return f"{self._prefix}run:{run_id}"

    def _chunks(self, run_id: str) -> str:
        return f"{self._prefix}run:{run_id}:chunks"

    async def _write(self, *commands: bytes) -> list[Any]:
        """Packed commands through the group commit; a refused one raises its error."""
        replies = await self._batcher.run(b"".join(commands), len(commands))
        _first_error(replies)
        return replies

    async def _script(self, script: bytes, *args: bytes, before: Sequence[bytes] = ()) -> Any:
        """``before`` (packed commands) and a budget script in one group commit; the script's reply.
        The scripts are loaded into Redis first, once (every caller meanwhile waits for the same
        load); a script Redis no longer holds is sent again with its text."""
        if self._scripts.loading is None:
            loading = self._scripts.loading = asyncio.get_running_loop().create_future()
            try:
                await self._write(*self._scripts.load())
                self._scripts.loaded()
            finally:
                loading.set_result(None)
        elif not self._scripts.loading.done():
            await asyncio.shield(self._scripts.loading)
        replies = await self._batcher.run(
            b"".join((*before, self._scripts.command(script, *args))), len(before) + 1
        )
        _first_error(replies[:-1])
        reply = replies[-1]
        if not self._scripts.answered(script, reply):
            (reply,) = await self._write(self._scripts.command(script, *args))
            self._scripts.answered(script, reply)
        elif isinstance(reply, Exception):
            raise reply
        return reply

    async def used_bytes(self, tenant: str | None = None) -> int:
        """What the kept runs of ``tenant`` (``None``: of everyone) are counted for in the memory
        budget."""
        held = await self._redis.hget(f"{self._prefix}mem", "total" if tenant is None else f"t:{tenant}")
        return int(held or 0)

    async def command(self, *parts: bytes) -> Any:
        """One command sent with the group commit — a single round trip for every command queued
        with it, rather than a pool connection each (what the shared limits send per request)."""
        (reply,) = await self._write(_pack(*parts))
        return reply

    async def create(self, record: RunRecord, *, writes_here: bool = False, exclusive: bool = False) -> None:
        """Store the record. ``writes_here``: this process will write the run's chunks, so its local
        readers are fed by the writer from the start (never by ``XREAD``). ``exclusive``: the id is
        claimed first (``SET NX``, for the run's TTL), so of two processes deriving the same id one
        gets :class:`RunExists`."""
        if exclusive and not await self._redis.set(
            f"{self._run(record.run_id)}:claim", b"1", nx=True, px=self._ttl_ms
        ):
            raise RunExists(record.run_id)
        key = self._run(record.run_id).encode()
        index = f"{self._prefix}tenant:{record.tenant}:runs".encode()
        fields = [part for name, value in _to_hash(record).items() for part in (name, str(value))]
        await self._script(
            _CREATE_SCRIPT,
            record.run_id.encode(),
            record.tenant.encode(),
            before=(
                _pack(b"HSET", key, *(part.encode() for part in fields)),
                _pack(b"PEXPIRE", key, self._ttl_b),
                _pack(b"ZADD", index, repr(record.created).encode(), record.run_id.encode()),
                _pack(b"PEXPIRE", index, self._ttl_b),
            ),
        )
        if writes_here:
            self.hub.start_local(self._chunks(record.run_id), record.last_seq)

    async def _record(self, run_id: str) -> RunRecord | None:
        """The record, with ``last_seq`` read from the stream itself (the hash's copy is refreshed
        only now and then)."""
        record, _ = await self._kept(run_id)
        return record

    async def _kept(self, run_id: str) -> tuple[RunRecord | None, bool]:
        """The record (:meth:`_record`) and whether the memory budget evicted the run's chunks."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self._run(run_id))
            pipe.xrevrange(self._chunks(run_id), count=1)
            raw, top = await pipe.execute()
        if not raw:
            return None, False
        record = _from_hash(run_id, raw)
        if top:
            record = replace(record, last_seq=max(record.last_seq, _seq(top[0][0])))
        return record, raw.get(b"evicted") == b"1"

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
        key = self._run(run_id).encode()
        await self._write(
            _pack(
                b"HSET",
                key,
                b"status",
                status.encode(),
                b"updated",
                repr(time.time()).encode(),
                b"reason",
                (reason or "").encode(),
            ),
            _pack(b"PEXPIRE", key, self._ttl_b),
        )

    async def claim_status(self, run_id: str, expected: RunStatus, status: RunStatus) -> bool:
        """One Lua script compares and sets the hash's ``status`` (Redis runs it atomically), sent
        through the group commit so it is ordered after this process's earlier writes."""
        key = self._run(run_id).encode()
        (claimed,) = await self._write(
            _pack(
                b"EVAL",
                _CLAIM_SCRIPT,
                b"1",
                key,
                expected.encode(),
                status.encode(),
                repr(time.time()).encode(),
                self._ttl_b,
            )
        )
        return bool(claimed)

    async def append(self, run_id: str, entry: Entry) -> bool:
        return await self.append_many(run_id, (entry,))

    async def append_many(self, run_id: str, entries: Sequence[Entry]) -> bool:
        """Hand the chunks' ``XADD`` commands to the next group commit. The run goes on without waiting
        for Redis's answer: its local readers get the chunks once the ``XADD`` commands succeeded, a
        refused or lost one fails the run's next append, and a terminal chunk is waited for (when
        the run's writer is done, every chunk of it is stored). The keys' TTL and the run's
        ``updated``/``last_seq`` fields are refreshed at most every :data:`REFRESH_S` seconds per run
        (and with its terminal chunk), the cancel flag read at most every :data:`CANCEL_CHECK_S`."""
        state = self._upkeep.get(run_id)
        if state is None:
            state = _Upkeep(run_id, self._chunks(run_id), self._run(run_id).encode())
            self._upkeep[run_id] = state
        elif state.failure is not None:
            failure, state.failure = state.failure, None
            raise failure
        if not entries:
            return state.cancelled
        now = time.monotonic()
        stream = state.stream_name
        last = entries[-1]
        commands = []
        added = 0
        for entry in entries:
            text = entry.text.encode()
            added += len(text)
            commands.append(_pack_xadd(state.stream_key, self._cap_b, entry.seq, text, entry.terminal))
        state.added_bytes += added + ENTRY_BYTES * len(entries)
        state.added_chunks += len(entries)
        scripts = None
        sent = (0, 0)
        if last.terminal or now >= state.refresh_at:
            state.refresh_at = now + REFRESH_S
            scripts = self._scripts
            sent = (state.added_bytes, state.added_chunks)
            commands.append(scripts.command(_REFRESH_SCRIPT, *state.refresh_args(last.seq, last.terminal)))
        check = now >= state.check_at
        if check:
            state.check_at = now + CANCEL_CHECK_S
            commands.append(state.read_cancel)
        self.hub.start_local(stream, entries[0].seq - 1)
        stored = _Stored(self.hub, state, entries, check, scripts, sent)
        if not last.terminal:
            self._batcher.post(b"".join(commands), len(commands), stored)
            if self._batcher.backlog > BACKLOG_MAX:
                await self._batcher.run(b"", 0)  # answered once everything before it is
            return state.cancelled
        self._upkeep.pop(run_id, None)
        try:
            stored(await self._batcher.run(b"".join(commands), len(commands)))
            if stored.refresh_lost:  # Redis lost the scripts: the last upkeep matters, send it again
                await self._script(_REFRESH_SCRIPT, *state.refresh_args(last.seq, True))
        finally:
            self.hub.end_local(stream)
        if state.failure is not None:
            raise state.failure
        return state.cancelled

    async def request_cancel(self, run_id: str) -> None:
        await self._redis.hset(self._run(run_id), "cancel", "1")

    async def cancel_requested(self, run_id: str) -> bool:
        return bool(await self._redis.hget(self._run(run_id), "cancel"))

    async def _range(self, stream: str, after: int) -> Sequence[Entry]:
        low = f"({after}-0" if after else "-"
        stored = await self._redis.xrange(stream, min=low, max="+")
        return [_entry(entry_id, fields or {}) for entry_id, fields in stored or []]

    async def _batch(self, stream: str, after: int) -> Sequence[Entry]:
        """The stored entries after ``after``, the first :data:`RANGE_COUNT` of them at most and only
        about :data:`SEND_BYTES` of them (``_RANGE_SCRIPT``); ``[]`` past the last one."""
        low = f"({after}-0" if after else "-"
        stored = await self._redis.eval(_RANGE_SCRIPT, 1, stream, low, RANGE_COUNT, SEND_BYTES)
        return [
            _entry(entry_id, dict(zip(fields[::2], fields[1::2], strict=True)))
            for entry_id, fields in stored or []
        ]

    async def read(self, run_id: str, *, after: int) -> AsyncIterator[Entry]:
        async for batch in self.read_batches(run_id, after=after):
            for entry in batch:
                yield entry

    async def read_batches(
        self, run_id: str, *, after: int, subscriber: Subscriber | None = None
    ) -> AsyncIterator[Sequence[Entry]]:
        """Two phases, as the embedded store reads its ring then waits: the resume range — what is
        stored after ``after`` (a finished run never touches the hub) — then the hub-follow phase:
        what was added meanwhile, then live entries; ``seq`` drops the overlap.

        A run this process is writing, joined at the last chunk its writer delivered (a client that
        has just started it, or one resuming at the head), is followed at once with no Redis read:
        every later chunk reaches the mailbox from the writer."""
        stream = self._chunks(run_id)
        read = _Reading(after)
        box = self.hub.follow_local(stream) if self.hub.local.get(stream, after + 1) <= after else None
        caught_up = box is not None
        if box is None:
            async with contextlib.aclosing(self._resume_range(run_id, stream, read)) as stored:
                async for batch in stored:
                    yield batch
            if read.ended:
                return
            box = await self.hub.follow(stream, read.cursor)
        try:
            async with contextlib.aclosing(self._follow(stream, box, read, subscriber, caught_up)) as live:
                async for batch in live:
                    yield batch
        finally:
            self.hub.unfollow(stream, box)

    async def _resume_range(
        self, run_id: str, stream: str, read: _Reading
    ) -> AsyncGenerator[Sequence[Entry], None]:
        """The first phase: the stored entries after ``read.cursor``, or :class:`ChunksExpired` when
        the ones the reader asks for are gone."""
        after = read.cursor
        stored = await self._batch(stream, after)
        if stored and stored[0].seq > after + 1:
            raise ChunksExpired(stored[0].seq)
        if not stored:
            # nothing after ``after``: evicted, dropped, or not written yet? The record says what
            # exists now; chunks it counts are in a range read after it unless they were dropped
            # (a writer may have added them between the first range and the record)
            record, evicted = await self._kept(run_id)
            if record is not None and evicted and after < record.last_seq:
                raise ChunksExpired(record.last_seq + 1)
            if record is not None and record.last_seq > after:
                stored = await self._batch(stream, after)
                if not stored or stored[0].seq > after + 1:
                    raise ChunksExpired(stored[0].seq if stored else record.last_seq)
        async with contextlib.aclosing(self._ranges(stream, read, stored)) as ranges:
            async for batch in ranges:
                yield batch

    async def _ranges(
        self, stream: str, read: _Reading, stored: Sequence[Entry]
    ) -> AsyncGenerator[Sequence[Entry], None]:
        """``stored`` and the ranges after it, up to the run's terminal entry or the stream's end."""
        while stored:
            batch, read.ended = _upto_terminal(stored)
            yield batch
            if read.ended:
                return
            read.cursor = batch[-1].seq
            stored = await self._batch(stream, read.cursor)

    async def _follow(
        self, stream: str, box: _Mailbox, read: _Reading, subscriber: Subscriber | None, caught_up: bool
    ) -> AsyncGenerator[Sequence[Entry], None]:
        """The second phase: what the stream got between the range and the hub's first delivery
        (unless the reader joined a local writer at its head), then what the hub delivers."""
        if not caught_up and self.hub.local.get(stream, read.cursor + 1) > read.cursor:
            async with contextlib.aclosing(
                self._ranges(stream, read, await self._batch(stream, read.cursor))
            ) as gap:
                async for batch in gap:
                    yield batch
            if read.ended:
                return
        while True:
            if subscriber is not None and not box.items:  # caught up: the writer offers from here
                if not await self._subscribe(box, subscriber, read.cursor):
                    return
                read.cursor = subscriber.cursor
                continue
            arrived = await box.take()
            if not arrived:
                return
            fresh = [entry for entry in arrived if entry.seq > read.cursor]
            if not fresh:
                continue
            batch, ended = _upto_terminal(fresh)
            yield batch
            if ended:
                return
            read.cursor = batch[-1].seq

    @staticmethod
    async def _subscribe(box: _Mailbox, subscriber: Subscriber, cursor: int) -> bool:
        """Offer the mailbox's entries straight to ``subscriber`` until it steps aside; whether the
        reading goes on (the subscriber not finished, the stream not given up by the watchdog)."""
        subscriber.attach(cursor)
        box.subscriber = subscriber
        box.since = time.monotonic()
        try:
            await subscriber.wait()
        finally:
            if box.subscriber is subscriber:
                box.subscriber = None
        return not (subscriber.finished or box.given_up)

    async def save_checkpoint(self, run_id: str, data: str) -> None:
        await self._script(_CHECKPOINT_SCRIPT, run_id.encode(), data.encode())

    async def load_checkpoint(self, run_id: str) -> str | None:
        raw = await self._redis.get(f"{self._run(run_id)}:checkpoint")
        return _text(raw) if raw is not None else None

    async def save_note(self, run_id: str, name: str, text: str) -> None:
        """A field of the run's hash, so it lives exactly as long as the record (its TTL refreshed
        with it); sent with the group commit, after the writes queued before it (the record's)."""
        key = self._run(run_id).encode()
        await self.command(b"EVAL", _NOTE_SCRIPT, b"1", key, b"note:" + name.encode(), text.encode())

    async def load_note(self, run_id: str, name: str) -> str | None:
        raw = await self._redis.hget(self._run(run_id), f"note:{name}")
        return _text(raw) if raw is not None else None

    async def aclose(self) -> None:
        await self.hub.aclose()
        await self._batcher.aclose()
        await self._redis.aclose()


def _to_hash(record: RunRecord) -> dict[str, str | int]:
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


__all__ = ["RedisRunStore"]
