"""``KANAWA_RATE_LIMIT`` and ``KANAWA_MAX_RUNS`` held across server processes, in Redis.

With ``--workers N`` every process has its own memory, so a limit counted there is a limit per
process: N times what is configured. With ``KANAWA_REDIS_URL`` set the counts live in Redis instead,
each changed by one Lua script (Redis runs a script atomically, and takes the time from its own clock,
so the processes' clocks do not matter):

- the rate limit is a token bucket per key hash (a hash of ``tokens`` and ``stamp``, expiring once
  it would be full again), the same bucket :class:`~kanawa.server.http.auth.RateLimiter` keeps in memory;
- the runs a tenant has going are a sorted set of run ids scored by a lease's end. A run takes a
  place when it starts (refused beyond the limit), gives it back when it ends, and while it runs the
  process executing it renews the lease every :data:`LEASE_S` / 3 seconds — so a process that dies
  leaves places that free themselves within :data:`LEASE_S`, and none is ever lost for good.

Embedded single-process mode keeps both in memory (per process, which is all there is).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from kanawa._logging import get_logger

if TYPE_CHECKING:
    from redis.asyncio import Redis

_log = get_logger("kanawa.server")
LEASE_S: Final = 30.0
"""How long a run's place is held without renewal (a dead process's runs free theirs after this)."""

_BUCKET: Final = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local kept = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens = tonumber(kept[1]) or burst
local stamp = tonumber(kept[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate)
local wait = 0
if tokens < 1 then
  wait = (1 - tokens) / rate
else
  tokens = tokens - 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'stamp', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst / rate) * 1000) + 1000)
return tostring(wait)
"""

_ACQUIRE: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if ARGV[4] ~= '1' and not redis.call('ZSCORE', KEYS[1], ARGV[1]) and held >= tonumber(ARGV[2]) then
  return -held
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""

_RENEW: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
for index = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[index])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""


class SharedRateLimiter:
    """:class:`~kanawa.server.http.auth.RateLimiter`'s bucket per key hash, in Redis."""

    def __init__(self, redis: Redis, *, prefix: str, per_minute: int) -> None:
        self._redis = redis
        self._prefix = prefix
        self._rate = per_minute / 60.0
        self._burst = float(per_minute)

    async def wait(self, who: str) -> float:
        """0 when the request may go ahead, else the seconds to wait (``Retry-After``)."""
        if self._rate <= 0:
            return 0.0
        key = f"{self._prefix}rate:{who}"
        answer: Any = await self._redis.eval(_BUCKET, 1, key, repr(self._rate), repr(self._burst))
        return float(answer)


Command = Callable[..., Awaitable[Any]]
"""Sends one Redis command given as its parts (``bytes``) and returns the reply: the run store's group
commit (:meth:`~kanawa.server.store.redis.RedisRunStore.command`), one round trip for many."""


class SharedRunSlots:
    """The places of each tenant's running runs, in Redis (module docstring)."""

    def __init__(self, redis: Redis, *, prefix: str, command: Command | None = None) -> None:
        self._redis = redis
        self._prefix = prefix
        self._command: Command = command if command is not None else self._direct
        self._lease_ms = str(int(LEASE_S * 1000))
        self._held: dict[str, str] = {}
        """Run id → tenant of the runs this process executes (whose leases it renews)."""
        self._renewer: asyncio.Task[None] | None = None

    def _key(self, tenant: str) -> str:
        return f"{self._prefix}running:{tenant}"

    async def acquire(self, tenant: str, run_id: str, limit: int, *, force: bool = False) -> int:
        """Take a place for ``run_id``: 0 when taken, else how many runs the tenant has going."""
        answer = await self._command(
            b"EVAL",
            _ACQUIRE.encode(),
            b"1",
            self._key(tenant).encode(),
            run_id.encode(),
            str(limit).encode(),
            self._lease_ms.encode(),
            b"1" if force else b"0",
        )
        return 0 if int(answer) == 1 else -int(answer)

    async def _direct(self, *parts: bytes) -> Any:
        return await self._redis.execute_command(*parts)  # type: ignore[no-untyped-call]

    def hold(self, tenant: str, run_id: str) -> None:
        """This process executes ``run_id`` from now on: renew its lease until :meth:`release`."""
        self._held[run_id] = tenant
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew(), name="kanawa-run-leases")

    async def release(self, tenant: str, run_id: str) -> None:
        self._held.pop(run_id, None)
        await self._command(b"ZREM", self._key(tenant).encode(), run_id.encode())

    async def _renew(self) -> None:
        while self._held:
            await asyncio.sleep(LEASE_S / 3)
            by_tenant: dict[str, list[str]] = {}
            for run_id, tenant in list(self._held.items()):
                by_tenant.setdefault(tenant, []).append(run_id)
            try:
                await self.renew(by_tenant)
            except Exception as exc:  # Redis away for a moment: the next round tries again
                _log.warning("renewing run leases failed: %s", type(exc).__name__)

    async def renew(self, runs: Mapping[str, list[str]]) -> None:
        for tenant, run_ids in runs.items():
            await self._redis.eval(_RENEW, 1, self._key(tenant), self._lease_ms, *run_ids)

    async def aclose(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer


__all__ = ["LEASE_S", "SharedRateLimiter", "SharedRunSlots"]
