"""Session totals in Redis, shared by every process that names the same server (``KANAWA_REDIS_URL``).

One hash per session (``<prefix><session>``) with integer fields ``requests``, ``input``,
``output``, ``nano_usd`` and ``unpriced``. Both operations are Lua scripts, which Redis runs
atomically — no other command runs between a script's read and its write:

- *reserve* reads the totals, applies the rule of :func:`kanawa.agents.budget.store.verdict_for`
  and, only when nothing is spent, ``HINCRBY requests 1`` — so N processes racing for the last
  request of a budget admit exactly one;
- *add* ``HINCRBY``-s the response's tokens, nano-dollars and unpriced flag and returns the totals.

Both refresh the key's TTL (``PEXPIRE``; a sliding window). Money is an integer (nano-dollars,
:mod:`kanawa.agents.budget.limits`), never ``HINCRBYFLOAT``, so totals do not depend on the order of
additions. Scripts are sent by SHA (``EVALSHA``) and loaded on first use.

redis-py's default retries stay on (a connection dropped while idle is reconnected instead of
stopping runs); the price is that a script whose reply was lost in a timeout may be applied twice —
a request or charge counted twice, never lost, so totals can only err towards stopping early.

Failures (server down, wrong password, timeout) raise :class:`BudgetStoreError` whose message shows
the URL with its password replaced by ``***``; the guard turns it into a block (fail closed).

A connection pool belongs to one event loop: the store opens one per loop it is used in (so a guard
serves sync ``Agent.run`` calls, each in its own loop), and each pool is closed when its loop shuts
down (``asyncio.run``'s end) or by ``await guard.aclose()``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from kanawa.agents.budget.limits import BudgetLimits, BudgetTotals, Charge, Reservation, Verdict
from kanawa.agents.budget.store import BudgetStoreError
from kanawa.secrets import mask

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

REDIS_URL_ENVIRONMENT_VARIABLE = "KANAWA_REDIS_URL"
DEFAULT_KEY_PREFIX = "kanawa:budget:"

_FIELDS = ("requests", "input", "output", "nano_usd", "unpriced")

_RESERVE = """
local key = KEYS[1]
local max_tokens = tonumber(ARGV[1])
local max_nano = tonumber(ARGV[2])
local max_requests = tonumber(ARGV[3])
local ttl_ms = tonumber(ARGV[4])
local unpriced_blocks = tonumber(ARGV[5]) or 1
local v = redis.call('HMGET', key, 'requests', 'input', 'output', 'nano_usd', 'unpriced')
local requests = tonumber(v[1]) or 0
local tokens = (tonumber(v[2]) or 0) + (tonumber(v[3]) or 0)
local nano = tonumber(v[4]) or 0
local unpriced = tonumber(v[5]) or 0
local verdict = 'ok'
if max_tokens >= 0 and tokens >= max_tokens then
  verdict = 'tokens'
elseif max_nano >= 0 and (nano >= max_nano or (unpriced_blocks > 0 and unpriced > 0)) then
  verdict = 'money'
elseif max_requests >= 0 and requests + 1 > max_requests then
  verdict = 'requests'
end
local counted = v[1] or '0'
if verdict == 'ok' then
  counted = tostring(redis.call('HINCRBY', key, 'requests', 1))
  if ttl_ms > 0 then
    redis.call('PEXPIRE', key, ttl_ms)
  end
end
return {verdict, counted, v[2] or '0', v[3] or '0', v[4] or '0', v[5] or '0'}
"""

_ADD = """
local key = KEYS[1]
redis.call('HINCRBY', key, 'input', ARGV[1])
redis.call('HINCRBY', key, 'output', ARGV[2])
redis.call('HINCRBY', key, 'nano_usd', ARGV[3])
redis.call('HINCRBY', key, 'unpriced', ARGV[4])
local ttl_ms = tonumber(ARGV[5])
if ttl_ms > 0 then
  redis.call('PEXPIRE', key, ttl_ms)
end
return redis.call('HMGET', key, 'requests', 'input', 'output', 'nano_usd', 'unpriced')
"""

_VERDICTS: dict[str, Verdict] = {"ok": "ok", "tokens": "tokens", "requests": "requests", "money": "money"}


def safe_url(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``, for messages and ``repr``."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<unparsable Redis URL>"
    if password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def _ttl_ms(ttl: float | None) -> int:
    return 0 if ttl is None else max(1, round(ttl * 1000))


def _int(value: Any) -> int:
    if value is None:
        return 0
    return int(value.decode() if isinstance(value, bytes) else value)


_TOTAL_FIELDS = ("requests", "input_tokens", "output_tokens", "cost_nano_usd", "unpriced_responses")
"""The session hash fields the Lua scripts return, in this order."""


def _totals(values: list[Any]) -> BudgetTotals:
    return BudgetTotals(**{name: _int(v) for name, v in zip(_TOTAL_FIELDS, values, strict=False)})


async def _close_with_loop(client: Redis) -> AsyncGenerator[None, None]:
    """Started once per client: the event loop keeps its async generators and closes them when it
    shuts down (``asyncio.run``'s end, ``loop.shutdown_asyncgens()``), which closes the client there,
    in its own loop, before the loop is gone."""
    try:
        yield
    finally:
        await client.aclose()


@dataclass(frozen=True, slots=True)
class _Connection:
    reserve: AsyncScript
    add: AsyncScript
    client: Redis
    loop: asyncio.AbstractEventLoop
    keeper: AsyncGenerator[None, None]


class RedisBudgetStore:
    """Session totals in Redis (see the module docstring). ``url`` as redis-py takes it
    (``redis://[:password@]host:port/db``, ``rediss://…``, ``unix://…``)."""

    def __init__(self, url: str, *, key_prefix: str = DEFAULT_KEY_PREFIX, timeout: float = 5.0) -> None:
        if not isinstance(url, str) or not url.strip():
            raise ValueError("a Redis budget store needs a redis:// URL")
        self._url = url
        self._display = safe_url(url)
        self.key_prefix = key_prefix
        self._timeout = timeout
        self._conn: _Connection | None = None

    @property
    def url(self) -> str:
        """The URL with its password masked."""
        return self._display

    async def _connected(self) -> _Connection:
        """The client of the running event loop (made on first use in each loop)."""
        loop = asyncio.get_running_loop()
        conn = self._conn
        if conn is not None and conn.loop is loop:
            return conn
        try:
            from redis.asyncio import Redis
        except ImportError:  # pragma: no cover - the extra is part of the dev environment
            raise BudgetStoreError(
                "Redis budgets need the redis package: pip install 'kanawa[redis]'"
            ) from None
        try:
            client = Redis.from_url(
                self._url, socket_connect_timeout=self._timeout, socket_timeout=self._timeout
            )
        except ValueError as exc:
            raise BudgetStoreError(f"bad Redis URL {self._display}: {self._clean(exc)}") from None
        keeper = _close_with_loop(client)
        conn = self._conn = _Connection(
            client.register_script(_RESERVE), client.register_script(_ADD), client, loop, keeper
        )
        await keeper.__anext__()
        return conn

    def _clean(self, exc: BaseException) -> str:
        text = str(exc)
        try:
            password = urlsplit(self._url).password
        except ValueError:
            password = None
        if password:
            text = text.replace(password, "***")
        return mask(text)

    def _failed(self, exc: BaseException) -> BudgetStoreError:
        return BudgetStoreError(
            f"the budget store at {self._display} failed: {type(exc).__name__}: {self._clean(exc)}"
        )

    async def reserve(self, key: str, limits: BudgetLimits, *, ttl: float | None) -> Reservation:
        from redis.exceptions import RedisError

        reserve = (await self._connected()).reserve
        max_nano = limits.max_cost_nano
        args = (
            -1 if limits.max_tokens is None else limits.max_tokens,
            -1 if max_nano is None else max_nano,
            -1 if limits.max_requests is None else limits.max_requests,
            _ttl_ms(ttl),
            1 if limits.unpriced_blocks else 0,
        )
        try:
            reply = await reserve(keys=[self.key_prefix + key], args=args)
        except (RedisError, OSError) as exc:
            raise self._failed(exc) from None
        verdict = _VERDICTS[reply[0].decode() if isinstance(reply[0], bytes) else str(reply[0])]
        return Reservation(verdict, _totals(reply[1:]))

    async def add(self, key: str, charge: Charge, *, ttl: float | None) -> BudgetTotals:
        from redis.exceptions import RedisError

        add = (await self._connected()).add
        args = (
            charge.input_tokens,
            charge.output_tokens,
            charge.cost_nano_usd,
            1 if charge.unpriced else 0,
            _ttl_ms(ttl),
        )
        try:
            reply = await add(keys=[self.key_prefix + key], args=args)
        except (RedisError, OSError) as exc:
            raise self._failed(exc) from None
        return _totals(reply)

    async def totals(self, key: str) -> BudgetTotals:
        from redis.exceptions import RedisError

        client = (await self._connected()).client
        try:
            values = await client.hmget(self.key_prefix + key, list(_FIELDS))
        except (RedisError, OSError) as exc:
            raise self._failed(exc) from None
        return _totals(values)

    async def ttl(self, key: str) -> float | None:
        """Seconds until ``key``'s totals expire (``None`` when it has no TTL or does not exist)."""
        from redis.exceptions import RedisError

        client = (await self._connected()).client
        try:
            ms = await client.pttl(self.key_prefix + key)
        except (RedisError, OSError) as exc:
            raise self._failed(exc) from None
        return None if ms < 0 else ms / 1000

    async def reset(self, key: str) -> None:
        from redis.exceptions import RedisError

        client = (await self._connected()).client
        try:
            await client.delete(self.key_prefix + key)
        except (RedisError, OSError) as exc:
            raise self._failed(exc) from None

    async def aclose(self) -> None:
        """Close the connections of the running loop's client. (A client of a loop that has ended was
        closed when that loop shut down.)"""
        conn, self._conn = self._conn, None
        if conn is not None and conn.loop is asyncio.get_running_loop():
            await conn.keeper.aclose()

    def __repr__(self) -> str:
        return f"RedisBudgetStore({self._display!r}, key_prefix={self.key_prefix!r})"


__all__ = ["DEFAULT_KEY_PREFIX", "REDIS_URL_ENVIRONMENT_VARIABLE", "RedisBudgetStore", "safe_url"]
