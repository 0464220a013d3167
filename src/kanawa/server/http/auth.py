"""API keys → tenants, hashed at rest, and a rate limit per key.

A request carries ``Authorization: Bearer <key>``. The key is hashed (SHA-256) and looked up; only
hashes are kept in memory, and a keys file may hold hashes alone (``sha256:<hex>:tenant``), so no
plain key need ever be written down on the server. With no keys configured the app accepts one
generated development key, from loopback clients only.

A tenant only ever sees its own runs: every lookup of a run is by ``(tenant, run id)`` and a run of
another tenant answers exactly as a run that does not exist (404, never 403), so ids cannot be probed.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from kanawa.secrets import register_secret

HASH_PREFIX: Final = "sha256:"
LOOPBACK_HOSTS: Final = frozenset({"localhost", "testclient"})


class KeyConfigError(ValueError):
    """A keys setting or file is malformed (the message names the line, never a key)."""


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


UNSENDABLE_KEY: Final = (
    "an API key must be printable ASCII: an HTTP header carries no other text, so a client could "
    "never send this key"
)


def _sendable(key: str) -> bool:
    """Whether a client can send ``key`` as it is in an ``Authorization`` header: a header's bytes
    reach the server as Latin-1 text, while the configured key is hashed as UTF-8 — a key beyond
    ASCII would never match. Refused when configured rather than failing every request."""
    return key.isascii() and key.isprintable()


def _entry(item: str, where: str) -> tuple[str, str]:
    """``key:tenant`` or ``sha256:<hex>:tenant`` → (hash, tenant)."""
    item = item.strip()
    if item.startswith(HASH_PREFIX):
        digest, sep, tenant = item[len(HASH_PREFIX) :].partition(":")
        digest = digest.strip().lower()
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise KeyConfigError(f"{where}: expected sha256:<64 hex digits>:tenant")
    else:
        key, sep, tenant = item.rpartition(":")
        if not sep or not key.strip():
            raise KeyConfigError(f"{where}: expected key:tenant")
        if not _sendable(key.strip()):
            raise KeyConfigError(f"{where}: {UNSENDABLE_KEY}")
        register_secret(key.strip())
        digest = key_hash(key.strip())
    tenant = tenant.strip()
    if not tenant:
        raise KeyConfigError(f"{where}: the tenant name is empty")
    return digest, tenant


@dataclass(frozen=True, slots=True)
class KeyRing:
    """Hash of an API key → tenant. ``dev`` marks the generated development ring."""

    tenants: Mapping[str, str]
    dev: bool = False

    def tenant_for(self, key: str) -> str | None:
        return self.tenants.get(key_hash(key)) if key else None

    @classmethod
    def parse(cls, spec: str = "", *, file: Path | None = None) -> KeyRing:
        """Keys from ``KANAWA_API_KEYS`` text and/or a keys file (``#`` comments, blank lines ok)."""
        tenants: dict[str, str] = {}
        for index, item in enumerate(part for part in spec.split(",") if part.strip()):
            digest, tenant = _entry(item, f"KANAWA_API_KEYS entry {index + 1}")
            tenants[digest] = tenant
        if file is not None:
            try:
                text = file.read_text(encoding="utf-8")
            except OSError as exc:
                raise KeyConfigError(f"cannot read the keys file {file}: {exc.strerror}") from None
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip() and not line.lstrip().startswith("#"):
                    digest, tenant = _entry(line, f"{file} line {number}")
                    tenants[digest] = tenant
        if not tenants:
            raise KeyConfigError("no API keys configured")
        return cls(tenants)

    @classmethod
    def development(cls, key: str | None = None) -> tuple[KeyRing, str]:
        """A ring holding one generated key (tenant ``dev``), and that key, to print once."""
        key = key or "kw-dev-" + secrets.token_urlsafe(24)
        if not _sendable(key):
            raise KeyConfigError(f"KANAWA_DEV_KEY: {UNSENDABLE_KEY}")
        register_secret(key)
        return cls({key_hash(key): "dev"}, dev=True), key


def is_loopback(host: str | None) -> bool:
    """Whether a client address is this machine (dev mode serves nobody else)."""
    if not host:
        return False
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bearer(header: str | None) -> str:
    """The key of an ``Authorization: Bearer <key>`` header ("" when absent or another scheme)."""
    if not header:
        return ""
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


class RateLimiter:
    """A token bucket per key hash: ``per_minute`` requests a minute, bursts up to the same number.

    ``check`` returns 0 when the request may go ahead, else the seconds to wait (``Retry-After``).
    Buckets idle for longer than a full refill are dropped, so memory follows active keys only.
    """

    def __init__(self, per_minute: int) -> None:
        self._rate = per_minute / 60.0
        self._burst = float(per_minute)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._last_sweep = time.monotonic()

    def check(self, who: str) -> float:
        if self._rate <= 0:
            return 0.0
        now = time.monotonic()
        tokens, stamp = self._buckets.get(who, (self._burst, now))
        tokens = min(self._burst, tokens + (now - stamp) * self._rate)
        if tokens < 1.0:
            self._buckets[who] = (tokens, now)
            return max(0.001, (1.0 - tokens) / self._rate)
        self._buckets[who] = (tokens - 1.0, now)
        if now - self._last_sweep > 60.0:
            self._sweep(now)
        return 0.0

    async def wait(self, who: str) -> float:
        """:meth:`check` with the interface of the shared limiter
        (:class:`~kanawa.server.store.shared_limits.SharedRateLimiter`)."""
        return self.check(who)

    def _sweep(self, now: float) -> None:
        self._last_sweep = now
        full = self._burst / self._rate if self._rate else math.inf
        for who, (_, stamp) in list(self._buckets.items()):
            if now - stamp > full:
                del self._buckets[who]


class FailureThrottle:
    """Failed authentications per client address: ``per_minute`` of them a minute, in bursts up to
    the same number. An address that used them up is refused (``wait`` > 0) for every request until
    one refills — with a valid key too, or the throttle would still let it guess at full speed — and
    only that address: a client cannot lock a tenant's other clients out. ``0`` turns it off.

    Addresses are kept while they have failures to refill (at most ``max_addresses``; the fullest
    buckets, the least suspect, go first when a flood of addresses exceeds it)."""

    def __init__(self, per_minute: int, *, max_addresses: int = 100_000) -> None:
        self._rate = per_minute / 60.0
        self._burst = float(per_minute)
        self._max = max_addresses
        self._buckets: dict[str, tuple[float, float]] = {}
        self._last_sweep = time.monotonic()

    def _tokens(self, address: str, now: float) -> float:
        tokens, stamp = self._buckets.get(address, (self._burst, now))
        return min(self._burst, tokens + (now - stamp) * self._rate)

    def wait(self, address: str) -> float:
        """0 when ``address`` may try; else the seconds until it may again (``Retry-After``)."""
        if self._rate <= 0 or address not in self._buckets:
            return 0.0
        tokens = self._tokens(address, time.monotonic())
        return 0.0 if tokens >= 1.0 else max(0.001, (1.0 - tokens) / self._rate)

    def failed(self, address: str) -> None:
        """``address`` sent a missing or wrong key."""
        if self._rate <= 0:
            return
        now = time.monotonic()
        self._buckets[address] = (max(0.0, self._tokens(address, now) - 1.0), now)
        if len(self._buckets) > self._max or now - self._last_sweep > 60.0:
            self._sweep(now)

    def _sweep(self, now: float) -> None:
        self._last_sweep = now
        levels = {address: self._tokens(address, now) for address in self._buckets}
        for address, tokens in levels.items():
            if tokens >= self._burst:  # refilled: nothing to remember
                del self._buckets[address]
        if len(self._buckets) > self._max:
            for address in sorted(self._buckets, key=levels.__getitem__)[self._max :]:
                del self._buckets[address]


__all__ = [
    "FailureThrottle",
    "KeyConfigError",
    "KeyRing",
    "RateLimiter",
    "bearer",
    "is_loopback",
    "key_hash",
]
