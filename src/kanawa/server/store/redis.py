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
import hashlib
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, TypeAlias, cast

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import NoScriptError, ResponseError

from kanawa._logging import get_logger
from kanawa.server.store.base import (
    EVICTABLE,
    RECORD_BYTES,
    SEND_BYTES,
    ChunksExpired,
    Entry,
    RunExists,
    RunRecord,
    RunStatus,
    Subscriber,
)

_log = get_logger("kanawa.server")
REFRESH_S: Final = 1.0
"""How often a running run's TTL (``XADD`` does not refresh it) and record fields are refreshed."""
CANCEL_CHECK_S: Final = 0.2
"""How often a running run's writer reads its cancel flag."""
BLOCK_MS: Final = 5_000
"""How long the hub's ``XREAD`` blocks when nothing arrives (it is woken early when needed)."""
REPLY_TIMEOUT_S: Final = 10.0
"""How long a group commit waits for Redis's replies before it gives the connection up."""
BACKLOG_MAX: Final = 20_000
"""Chunks handed to the group commit and not answered yet beyond which a writer waits (a Redis that
falls behind slows the runs down rather than letting their chunks pile up in memory)."""
RANGE_COUNT: Final = 256
"""Most chunks read from a stream at once for a client resuming from its stored part."""
_RANGE_SCRIPT: Final = """
local found = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])
local budget = tonumber(ARGV[3])
local out = {}
for index, entry in ipairs(found) do
  local fields = entry[2]
  for at = 1, #fields, 2 do budget = budget - #fields[at + 1] end
  out[index] = entry
  if budget <= 0 then break end
end
return out
"""
"""A resume's batch: up to ``RANGE_COUNT`` chunks but only about ``SEND_BYTES`` of them (at least
one), so a client that never reads pins one batch of the run in this process, never the whole run
however large its chunks are."""


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _seq(entry_id: Any) -> int:
    return int(_text(entry_id).partition("-")[0])


def _entry(entry_id: Any, fields: Mapping[Any, Any]) -> Entry:
    data = {_text(k): _text(v) for k, v in fields.items()}
    return Entry(_seq(entry_id), data.get("d", ""), data.get("t") == "1")


def _pack(*parts: bytes) -> bytes:
    """One command in the Redis protocol (RESP): what the group commit sends, built in one go."""
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%b\r\n" % (len(part), part) for part in parts)


_XADD: Final = (
    b"*10\r\n$4\r\nXADD\r\n$%d\r\n%b\r\n$6\r\nMAXLEN\r\n$1\r\n=\r\n$%d\r\n%b\r\n"
    b"$%d\r\n%b\r\n$1\r\nd\r\n$%d\r\n%b\r\n$1\r\nt\r\n$1\r\n%b\r\n"
)


def _pack_xadd(key: bytes, cap: bytes, seq: int, text: bytes, terminal: bool) -> bytes:
    """``XADD key MAXLEN = cap <seq>-0 d text t 0|1`` packed in one formatting step (the command sent
    for every chunk; :func:`_pack` builds the same bytes, only slower)."""
    entry_id = b"%d-0" % seq
    return _XADD % (
        len(key),
        key,
        len(cap),
        cap,
        len(entry_id),
        entry_id,
        len(text),
        text,
        b"1" if terminal else b"0",
    )


_CLAIM_SCRIPT: Final = b"""
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'updated', ARGV[3], 'reason', '')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""
"""``claim_status``: set a run's status only if it still is the expected one."""


ENTRY_BYTES: Final = 32
"""What a stream entry costs Redis besides its chunk's text (its id and fields in the stream's
listpack, measured with ``MEMORY USAGE``): counted per chunk in the memory budget."""
_BUDGET_LIBRARY: Final = b"""
local P, TENANT_BUDGET, TOTAL_BUDGET, TTL = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local RECORD = %(record)d
local MEM, RUNS, EXPIRY = P .. 'mem', P .. 'mem:runs', P .. 'mem:expiry'
local clock = redis.call('TIME')
local NOW = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local EVICTABLE = {%(evictable)s}

local function counted(run)
  local held = redis.call('HGET', RUNS, run)
  if not held then return 0, nil end
  local size, tenant = string.match(held, '^(%%d+) (.*)$')
  return tonumber(size), tenant
end

local function add(tenant, delta)
  if delta ~= 0 then
    redis.call('HINCRBY', MEM, 't:' .. tenant, delta)
    redis.call('HINCRBY', MEM, 'total', delta)
  end
end

local function count(run, tenant, size)
  local old = counted(run)
  redis.call('HSET', RUNS, run, size .. ' ' .. tenant)
  add(tenant, size - old)
end

local function unlist(zone, run, tenant)
  redis.call('ZREM', P .. 'mem:' .. zone, run)
  redis.call('ZREM', P .. 'mem:' .. zone .. ':' .. tenant, run)
end

local function forget(run)
  local size, tenant = counted(run)
  if tenant then
    add(tenant, -size)
    redis.call('HDEL', RUNS, run)
    unlist('done', run, tenant)
    unlist('bare', run, tenant)
  end
  redis.call('ZREM', EXPIRY, run)
end

local function purge()
  for _, run in ipairs(redis.call('ZRANGEBYSCORE', EXPIRY, '-inf', NOW, 'LIMIT', 0, 64)) do
    forget(run)
  end
end

local function size_of(key, evicted, written, chunks, checkpoint)
  if evicted == '1' then return RECORD end
  written, chunks = tonumber(written or '0'), tonumber(chunks or '0')
  if chunks > 0 then
    local kept = redis.call('XLEN', key .. ':chunks')
    if chunks > kept then written = math.floor(written * kept / chunks) end
  end
  return RECORD + written + tonumber(checkpoint or '0')
end

local function over(tenant)
  local mine = tonumber(redis.call('HGET', MEM, 't:' .. tenant) or '0')
  local all = tonumber(redis.call('HGET', MEM, 'total') or '0')
  return TENANT_BUDGET > 0 and mine > TENANT_BUDGET, TOTAL_BUDGET > 0 and all > TOTAL_BUDGET
end

local function oldest(zone, tenant, anyone)
  local key = P .. 'mem:' .. zone
  if not anyone then key = key .. ':' .. tenant end
  return redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
end

local function enforce(tenant)
  for _ = 1, 10000 do
    local mine, all = over(tenant)
    if not (mine or all) then return end
    local victim = oldest('done', tenant, all)
    local whole = victim[1] == nil
    if whole then
      victim = oldest('bare', tenant, all)
      if victim[1] == nil then return end
    end
    local run = victim[1]
    local _, owner = counted(run)
    local key = P .. 'run:' .. run
    if owner == nil then
      redis.call('ZREM', P .. 'mem:done', run)
      redis.call('ZREM', P .. 'mem:bare', run)
      if not all then
        redis.call('ZREM', P .. 'mem:done:' .. tenant, run)
        redis.call('ZREM', P .. 'mem:bare:' .. tenant, run)
      end
    elseif whole then
      redis.call('DEL', key)
      redis.call('ZREM', P .. 'tenant:' .. owner .. ':runs', run)
      forget(run)
    else
      redis.call('DEL', key .. ':chunks', key .. ':checkpoint')
      redis.call('HSET', key, 'evicted', '1', 'kb', '0')
      count(run, owner, RECORD)
      unlist('done', run, owner)
      redis.call('ZADD', P .. 'mem:bare', victim[2], run)
      redis.call('ZADD', P .. 'mem:bare:' .. owner, victim[2], run)
    end
  end
end
""" % {
    b"record": RECORD_BYTES,
    b"evictable": b", ".join(b"['%s'] = true" % status.encode() for status in sorted(EVICTABLE)),
}
"""The memory budget in Redis (what :class:`~kanawa.server.store.MemoryRunStore` does in one
process, kept atomic across processes by running in scripts):

- ``{prefix}mem`` (hash) counts the bytes kept, per tenant (``t:<tenant>``) and in all (``total``);
- ``{prefix}mem:runs`` (hash) says what each run is counted for and whose it is (``"<bytes> <tenant>"``);
- ``{prefix}mem:expiry`` (sorted set) holds every counted run by when its keys expire, so a run that
  expired (or whose writer vanished) stops being counted — Redis's own expiry tells no one;
- ``{prefix}mem:done`` and ``{prefix}mem:done:<tenant>`` (sorted sets) hold the finished runs that
  still have their chunks by end time, the eviction order; ``mem:bare`` and ``mem:bare:<tenant>``
  those whose chunks are gone (their records go only if dropping chunks was not enough).

A run is counted as :data:`~kanawa.server.store.RECORD_BYTES` for its record, its chunks' text plus
:data:`ENTRY_BYTES` each (the part a stream capped at ``cap`` entries still holds) and its checkpoint.
Every script gets ``prefix, tenant budget, total budget, ttl (ms)`` as its first four arguments."""

_CREATE_SCRIPT: Final = (
    _BUDGET_LIBRARY
    + b"""
local run, tenant = ARGV[5], ARGV[6]
purge()
count(run, tenant, RECORD)
redis.call('ZADD', EXPIRY, NOW + TTL, run)
enforce(tenant)
return 1
"""
)
"""A new run: counted for its record, then the budgets enforced (the run itself is not evictable)."""

_REFRESH_SCRIPT: Final = (
    _BUDGET_LIBRARY
    + b"""
local run, seq, updated, added, chunks, terminal = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local key = P .. 'run:' .. run
local record = redis.call('HMGET', key, 'tenant', 'status', 'evicted', 'kb')
local tenant, status, evicted, checkpoint = unpack(record)
if not tenant then return 0 end
redis.call('PEXPIRE', key .. ':chunks', TTL)
redis.call('HSET', key, 'last_seq', seq, 'updated', updated)
local written = redis.call('HINCRBY', key, 'cb', added)
local kept = redis.call('HINCRBY', key, 'cn', chunks)
redis.call('PEXPIRE', key, TTL)
count(run, tenant, size_of(key, evicted, written, kept, checkpoint))
redis.call('ZADD', EXPIRY, NOW + TTL, run)
if terminal == '1' then
  if EVICTABLE[status] and evicted ~= '1' then
    -- by end time, and runs ending in the same millisecond in the order they ended (a tie would
    -- otherwise be broken by the run ids' letters)
    local ended = NOW * 1000 + redis.call('INCR', P .. 'mem:order') % 1000
    redis.call('ZADD', P .. 'mem:done', ended, run)
    redis.call('ZADD', P .. 'mem:done:' .. tenant, ended, run)
  end
  purge()
  enforce(tenant)
end
return 1
"""
)
"""A running run's upkeep (once a second and with its terminal chunk): its keys' TTL, its record's
``last_seq``/``updated``, the bytes its chunks added since the last upkeep counted; with the terminal
chunk of a finished run it joins the eviction order and the budgets are enforced."""

_CHECKPOINT_SCRIPT: Final = (
    _BUDGET_LIBRARY
    + b"""
local run, data = ARGV[5], ARGV[6]
local key = P .. 'run:' .. run
redis.call('SET', key .. ':checkpoint', data, 'PX', TTL)
local tenant, evicted, written, kept = unpack(redis.call('HMGET', key, 'tenant', 'evicted', 'cb', 'cn'))
if tenant then
  redis.call('HSET', key, 'kb', #data)
  count(run, tenant, size_of(key, evicted, written, kept, #data))
end
return 1
"""
)
"""A checkpoint stored and the run counted for it (the last one replaces the one before)."""


_NOTE_SCRIPT: Final = b"""
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 1
"""
"""A note set on a run's hash only while the hash exists (never a hash without its TTL)."""


class _Scripts:
    """The budget scripts as commands: ``EVALSHA`` once Redis is known to hold a script (loaded when
    the store first needs one — :meth:`RedisRunStore._script` — or run once as ``EVAL``, which makes
    Redis keep it), ``EVAL`` with its text until then or after Redis answered ``NOSCRIPT`` (a
    restart or ``SCRIPT FLUSH``). Each command's fixed part is packed once: a run's upkeep costs the
    packing of its own arguments only."""

    def __init__(self, prefix: str, tenant_bytes: int, total_bytes: int, ttl: bytes) -> None:
        common = _pack_parts(b"0", prefix.encode(), b"%d" % tenant_bytes, b"%d" % total_bytes, ttl)
        self._by_hash = {script: _pack_parts(b"EVALSHA", _sha(script)) + common for script in _ALL_SCRIPTS}
        self._by_text = {script: _pack_parts(b"EVAL", script) + common for script in _ALL_SCRIPTS}
        self._known: set[bytes] = set()
        self.loading: asyncio.Future[None] | None = None
        """Set once the scripts were first sent to Redis (``SCRIPT LOAD``), done when they are in."""

    def command(self, script: bytes, *args: bytes) -> bytes:
        head = self._by_hash[script] if script in self._known else self._by_text[script]
        return b"*%d\r\n%b%b" % (len(args) + 7, head, _pack_parts(*args))

    @staticmethod
    def load() -> list[bytes]:
        return [_pack(b"SCRIPT", b"LOAD", script) for script in _ALL_SCRIPTS]

    def loaded(self) -> None:
        self._known.update(_ALL_SCRIPTS)

    def answered(self, script: bytes, reply: Any) -> bool:
        """Note what Redis answered ``script`` with; whether it ran (``False``: ``NOSCRIPT``, send
        it again — it goes as ``EVAL`` now)."""
        if isinstance(reply, NoScriptError):
            self._known.discard(script)
            return False
        if not isinstance(reply, Exception):
            self._known.add(script)
        return True


_ALL_SCRIPTS: Final = (_CREATE_SCRIPT, _REFRESH_SCRIPT, _CHECKPOINT_SCRIPT)


def _pack_parts(*parts: bytes) -> bytes:
    """Arguments in the Redis protocol without the array header (:func:`_pack` adds it)."""
    return b"".join(b"$%d\r\n%b\r\n" % (len(part), part) for part in parts)


def _sha(script: bytes) -> bytes:
    return hashlib.sha1(script, usedforsecurity=False).hexdigest().encode()


def _upto_terminal(entries: Sequence[Entry]) -> tuple[Sequence[Entry], bool]:
    """``entries`` cut after the terminal one, and whether there was one."""
    for index, entry in enumerate(entries):
        if entry.terminal:
            return entries[: index + 1], True
    return entries, False


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


__all__ = ["RedisRunStore", "StreamHub"]
