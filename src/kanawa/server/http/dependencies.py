"""What the routes share: the caller's tenant from its API key, the run manager, a run looked up for
its owner, admission of a stream — each read from ``request.app.state`` (set by :func:`.app.create_app`
and its lifespan), so a route module holds no state of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, HTTPException, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from kanawa.server.http.auth import FailureThrottle, KeyRing, RateLimiter, is_loopback, key_hash
from kanawa.server.http.event_stream import OpenStreams, TooManyStreams
from kanawa.server.runs.manager import RunManager
from kanawa.server.store.base import RunRecord

if TYPE_CHECKING:
    from kanawa.server.store.shared_limits import SharedRateLimiter

RUN_ID = r"^[0-9a-f]{32}$"

API_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "No valid API key (`WWW-Authenticate: Bearer`)"},
    403: {"description": "Development mode (no keys configured): a client that is not loopback"},
    429: {"description": "Rate limit of the API key exceeded (`Retry-After` says when to retry)"},
}
"""What every ``/v1`` route may answer before it runs (authentication, rate limit)."""
BODY_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "A malformed `Content-Length`"},
    413: {"description": "A body larger than `KANAWA_MAX_REQUEST_BYTES`"},
}
"""What a route with a request body may answer besides (validation is FastAPI's 422)."""


@dataclass(frozen=True, slots=True)
class Caller:
    tenant: str
    key_id: str


_BEARER = HTTPBearer(auto_error=False, description="An API key (KANAWA_API_KEYS).")


async def caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
) -> Caller:
    """The caller's tenant from its API key, after the dev-mode loopback check and the rate limit.

    A coroutine although it never awaits: FastAPI runs a plain function dependency in its thread
    pool, a thread hop for every request for a hash and two dict lookups."""
    ring: KeyRing = request.app.state.ring
    limiter: RateLimiter | SharedRateLimiter = request.app.state.limiter  # shared: with Redis
    address = request.client.host if request.client else ""
    if ring.dev and not is_loopback(address or None):
        raise HTTPException(403, "no API keys are configured: this server answers loopback clients only")
    failures: FailureThrottle = request.app.state.auth_failures
    blocked = failures.wait(address)
    if blocked:
        raise HTTPException(
            429,
            "too many failed authentications from this address",
            headers={"Retry-After": str(int(blocked) + 1)},
        )
    key = credentials.credentials if credentials is not None else ""
    tenant = ring.tenant_for(key)
    if tenant is None:
        failures.failed(address)
        raise HTTPException(401, "a valid API key is required", headers={"WWW-Authenticate": "Bearer"})
    key_id = key_hash(key)
    wait = await limiter.wait(key_id)
    if wait:
        raise HTTPException(
            429, "rate limit exceeded for this API key", headers={"Retry-After": str(int(wait) + 1)}
        )
    return Caller(tenant, key_id)


async def optional_caller(request: Request, *, required: bool) -> Caller | None:
    """The caller when the request carries a Bearer key, checked as :func:`caller` checks it (a wrong
    key is 401, never taken for no key); ``None`` without one, unless ``required`` (then 401). For a
    route whose answer without a key is the same for everyone."""
    credentials = await _BEARER(request)
    if credentials is None and not required:
        return None
    return await caller(request, credentials)


CallerArg = Annotated[Caller, Depends(caller)]
RunIdArg = Annotated[str, Path(pattern=RUN_ID, description="A run id (32 hex digits).")]


def manager_of(request: Request) -> RunManager:
    """The run manager the lifespan made."""
    manager: RunManager = request.app.state.manager
    return manager


async def owned(request: Request, who: Caller, run_id: str) -> RunRecord:
    """The run ``run_id`` of the caller's tenant: 404 when it is missing or another tenant's (the same
    answer, so a run id says nothing to a tenant that does not own it)."""
    record = await manager_of(request).store.get(who.tenant, run_id)
    if record is None:
        raise HTTPException(404, "no such run")
    return record


def admit_stream(request: Request, tenant: str, run_id: str | None) -> tuple[str, str | None]:
    """Count a stream about to open against the stream caps (429 beyond them)."""
    streams: OpenStreams = request.app.state.streams
    try:
        streams.admit(tenant, run_id)
    except TooManyStreams as exc:
        raise HTTPException(429, str(exc), headers={"Retry-After": "1"}) from None
    return tenant, run_id


def release_stream(request: Request, admitted: tuple[str, str | None]) -> None:
    """Give back a stream admitted by :func:`admit_stream` that will not open after all."""
    streams: OpenStreams = request.app.state.streams
    streams.release(*admitted)


__all__ = [
    "API_ERRORS",
    "BODY_ERRORS",
    "RUN_ID",
    "Caller",
    "CallerArg",
    "RunIdArg",
    "admit_stream",
    "caller",
    "manager_of",
    "optional_caller",
    "owned",
    "release_stream",
]
