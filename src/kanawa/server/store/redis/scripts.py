"""The Redis side of the run store: settings, the Lua scripts and the wire packing of a write."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from redis.exceptions import NoScriptError

from kanawa.server.store.base import (
    EVICTABLE,
    RECORD_BYTES,
    Entry,
)

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


__all__ = ["RANGE_COUNT"]
