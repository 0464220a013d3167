"""The FastAPI application: routes, authentication, limits and the SSE responses.

``create_app(agents, settings)`` builds it; the store and the run manager are made in the lifespan
(so a Redis connection belongs to the server's event loop). Every ``/v1`` route resolves the caller's
tenant from its API key first; run routes then look the run up by ``(tenant, id)``, so another
tenant's run is a 404 exactly like a missing one.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from kanawa import __version__
from kanawa.server.auth import FailureThrottle, KeyRing, RateLimiter, is_loopback, key_hash
from kanawa.server.budgets import apply_tenant_budget
from kanawa.server.event_stream import ConnectionHandle, OpenStreams, RunEventStream, TooManyStreams
from kanawa.server.extensions import Extension, merged_agents
from kanawa.server.http_headers import PageSecurityHeaders, mask_access_log
from kanawa.server.limits import BodySizeLimit
from kanawa.server.page import PAGE_HTML
from kanawa.server.resume import resume_point
from kanawa.server.runs import InvalidDecisions, NotAwaitingApproval, RunLimitReached, RunManager
from kanawa.server.servable import ServableAgent
from kanawa.server.settings import ServerSettings
from kanawa.server.store import MemoryRunStore, RunRecord, RunStore
from kanawa.server.validation import Text, validation_failed

if TYPE_CHECKING:
    from kanawa.server.shared_limits import SharedRateLimiter

RUN_ID = r"^[0-9a-f]{32}$"
SSE_MEDIA = "text/event-stream"
_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events: `id:` is the chunk's seq, `data:` the chunk JSON "
        "`{time, agent, type, data, seq}`; the last chunk has type `done`.",
        "content": {SSE_MEDIA: {"schema": {"type": "string"}}},
    }
}


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


class RunRequest(BaseModel):
    """``POST /v1/runs``: which agent, what to ask, an optional session id."""

    agent: Text = Field(min_length=1, max_length=200)
    input: Text = Field(min_length=1, max_length=200_000)
    session_id: Text | None = Field(default=None, max_length=200)


class ApprovalRequest(BaseModel):
    """``POST /v1/runs/{id}/approvals``: the tool calls a human approved or rejected (with a reason)."""

    approved: list[Annotated[Text, Field(max_length=200)]] = Field(default_factory=list, max_length=1000)
    rejected: dict[Annotated[Text, Field(max_length=200)], Annotated[Text, Field(max_length=2000)]] = Field(
        default_factory=dict
    )


class AgentInfo(BaseModel):
    name: str
    tools: list[str]
    model: str


class AgentList(BaseModel):
    agents: list[AgentInfo]


class WhoAmI(BaseModel):
    """The tenant an API key belongs to: the pages show it, so a user sees whose runs they start."""

    tenant: str


class RunInfo(BaseModel):
    id: str
    agent: str
    status: str
    created: float
    updated: float
    last_seq: int
    termination_reason: str | None
    session_id: str | None


class RunList(BaseModel):
    runs: list[RunInfo]


def _info(record: RunRecord) -> RunInfo:
    return RunInfo(
        id=record.run_id,
        agent=record.agent,
        status=record.status,
        created=record.created,
        updated=record.updated,
        last_seq=record.last_seq,
        termination_reason=record.termination_reason,
        session_id=record.session_id,
    )


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


CallerArg = Annotated[Caller, Depends(caller)]
RunIdArg = Annotated[str, Path(pattern=RUN_ID, description="A run id (32 hex digits).")]


def create_app(
    *,
    agents: Mapping[str, ServableAgent] | None = None,
    settings: ServerSettings | None = None,
    store: RunStore | None = None,
    extensions: Sequence[Extension] = (),
) -> FastAPI:
    """The service for ``agents`` (default: the demo agents). Keys come from ``settings``; with none
    configured, a development key (``settings.dev_key`` or generated) is accepted from loopback only.
    ``extensions`` add routers (pages), agents and process-wide resources
    (:mod:`kanawa.server.extensions`)."""
    from kanawa.server.registry import demo_agents

    config = settings if settings is not None else ServerSettings.from_env()
    if config.celery_broker and not config.redis_url:
        raise ValueError("KANAWA_CELERY_BROKER needs KANAWA_REDIS_URL: runs stream through Redis")
    mounted = tuple(extensions)
    registry = merged_agents(agents if agents is not None else demo_agents(), mounted)
    tenant_guard = apply_tenant_budget(registry.values(), config)
    if config.keys_configured:
        ring = KeyRing.parse(config.api_keys, file=config.api_keys_file)
        dev_key = None
    else:
        ring, dev_key = KeyRing.development(config.dev_key)
    limiter = RateLimiter(config.rate_limit)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as resources:
            for extension in mounted:  # up before the first run, down after the last one drained
                if extension.lifespan is not None:
                    await resources.enter_async_context(extension.lifespan())
            async with _serving(app):
                yield

    @asynccontextmanager
    async def _serving(app: FastAPI) -> AsyncIterator[None]:
        if store is not None:
            run_store: RunStore = store
        elif config.redis_url:
            from kanawa.server.redis_store import RedisRunStore

            run_store = RedisRunStore(
                config.redis_url,
                ttl=config.run_ttl,
                cap=config.run_buffer,
                prefix=config.redis_prefix,
                tenant_bytes=config.tenant_run_bytes,
                total_bytes=config.run_bytes,
            )
        else:
            run_store = MemoryRunStore(
                ttl=config.run_ttl,
                cap=config.run_buffer,
                tenant_bytes=config.tenant_run_bytes,
                total_bytes=config.run_bytes,
            )
        dispatcher = None
        if config.celery_broker:
            from kanawa.server.workers import Dispatcher

            dispatcher = Dispatcher(config.celery_broker, queue=config.celery_queue)
        slots = None
        if config.redis_url and store is None:  # the limits hold across processes (shared_limits)
            from kanawa.server.redis_store import RedisRunStore
            from kanawa.server.shared_limits import SharedRateLimiter, SharedRunSlots

            assert isinstance(run_store, RedisRunStore)
            slots = SharedRunSlots(run_store.redis, prefix=config.redis_prefix, command=run_store.command)
            if config.rate_limit:
                app.state.limiter = SharedRateLimiter(
                    run_store.redis, prefix=config.redis_prefix, per_minute=config.rate_limit
                )
        manager = RunManager(registry, run_store, max_runs=config.max_runs, dispatch=dispatcher, slots=slots)
        app.state.manager = manager
        streams = app.state.streams = OpenStreams(
            per_tenant=config.max_streams, per_run=config.max_run_streams
        )
        ends_streams = asyncio.create_task(streams.end_at_shutdown(), name="kanawa-streams-at-shutdown")
        thresholds = gc.get_threshold()
        if config.gc_threshold:  # settings.ServerSettings.gc_threshold says why
            gc.set_threshold(config.gc_threshold, *thresholds[1:])
        if config.gc_freeze:  # settings.ServerSettings.gc_freeze says why
            gc.collect()
            gc.freeze()
        try:
            yield
        finally:
            if config.gc_freeze:
                gc.unfreeze()
            gc.set_threshold(*thresholds)
            ends_streams.cancel()
            streams.close_all()
            await manager.aclose()
            if dispatcher is not None:
                dispatcher.close()
            if store is None:
                await run_store.aclose()
            if tenant_guard is not None:
                await tenant_guard.aclose()

    app = FastAPI(
        title="kanawa",
        version=__version__,
        summary="Agents as a service: SSE chunks with seq numbers and lossless resume (seed 002 §5).",
        lifespan=lifespan,
    )
    app.add_middleware(BodySizeLimit, limit=config.max_request_bytes)
    app.add_middleware(PageSecurityHeaders)
    app.add_exception_handler(RequestValidationError, validation_failed)
    mask_access_log()
    app.add_middleware(ConnectionHandle)  # added last: the outermost of ours, it sees the server's receive
    app.state.dev_key = dev_key
    app.state.settings = config
    app.state.ring = ring
    app.state.limiter = limiter
    app.state.auth_failures = FailureThrottle(config.auth_failures)

    def manager_of(request: Request) -> RunManager:
        manager: RunManager = request.app.state.manager
        return manager

    def admit_stream(request: Request, tenant: str, run_id: str | None) -> tuple[str, str | None]:
        """Count a stream about to open against the stream caps (429 beyond them)."""
        streams: OpenStreams = request.app.state.streams
        try:
            streams.admit(tenant, run_id)
        except TooManyStreams as exc:
            raise HTTPException(429, str(exc), headers={"Retry-After": "1"}) from None
        return tenant, run_id

    def event_stream(
        request: Request, run_id: str, after: int, admitted: tuple[str, str | None]
    ) -> RunEventStream:
        streams: OpenStreams = request.app.state.streams
        return RunEventStream(
            manager_of(request).store,
            run_id,
            after,
            ping=config.sse_ping,
            streams=streams,
            write_timeout=config.sse_write_timeout,
            admitted=admitted,
        )

    async def owned(request: Request, who: Caller, run_id: str) -> RunRecord:
        record = await manager_of(request).store.get(who.tenant, run_id)
        if record is None:
            raise HTTPException(404, "no such run")
        return record

    @app.get("/v1/whoami", response_model=WhoAmI, responses=API_ERRORS, tags=["service"])
    async def whoami(who: CallerArg) -> WhoAmI:
        """The tenant of the API key sent: what a page shows as the active tenant, so a key slipped
        into its address (``#key=``) cannot run the user's work in another tenant unseen."""
        return WhoAmI(tenant=who.tenant)

    @app.get("/v1/agents", response_model=AgentList, responses=API_ERRORS, tags=["agents"])
    async def list_agents(who: CallerArg) -> AgentList:
        """The agents this server runs."""
        return AgentList(
            agents=[
                AgentInfo(name=name, tools=[t.name for t in agent.tools], model=agent.model.model)
                for name, agent in registry.items()
            ]
        )

    @app.post(
        "/v1/runs",
        responses={
            **_SSE_DOC,
            **BODY_ERRORS,
            404: {"description": "Unknown agent"},
            **API_ERRORS,
            429: {"description": "Rate limit of the API key, or the tenant's runs going (`Retry-After`)"},
        },
        response_class=Response,
        tags=["runs"],
    )
    async def start_run(body: RunRequest, request: Request, who: CallerArg) -> Response:
        """Start a run and stream its chunks. The run id is in the ``X-Run-Id`` header; the run goes on
        if the client disconnects (resume with ``GET /v1/runs/{id}/events``)."""
        if body.agent not in registry:
            raise HTTPException(404, f"no agent named {body.agent!r}")
        manager = manager_of(request)
        admitted = admit_stream(request, who.tenant, None)
        try:
            record = await manager.start(who.tenant, body.agent, body.input, session_id=body.session_id)
        except BaseException as exc:
            request.app.state.streams.release(*admitted)
            if isinstance(exc, RunLimitReached):
                raise HTTPException(429, str(exc), headers={"Retry-After": "1"}) from None
            raise
        return event_stream(request, record.run_id, 0, admitted)

    @app.get("/v1/runs", response_model=RunList, responses=API_ERRORS, tags=["runs"])
    async def list_runs(request: Request, who: CallerArg) -> RunList:
        """This tenant's runs, newest first."""
        records = await manager_of(request).store.list(who.tenant, limit=100)
        return RunList(runs=[_info(r) for r in records])

    @app.get(
        "/v1/runs/{run_id}",
        response_model=RunInfo,
        responses={404: {"description": "No such run"}, **API_ERRORS},
        tags=["runs"],
    )
    async def get_run(run_id: RunIdArg, request: Request, who: CallerArg) -> RunInfo:
        """A run's status and its last ``seq``."""
        return _info(await owned(request, who, run_id))

    @app.get(
        "/v1/runs/{run_id}/events",
        responses={
            **_SSE_DOC,
            204: {"description": "The run has ended and the resume point is its last chunk"},
            400: {"description": "A resume point that is not a seq of the run"},
            404: {"description": "No such run"},
            **API_ERRORS,
        },
        response_class=Response,
        tags=["runs"],
    )
    async def run_events(
        run_id: RunIdArg,
        request: Request,
        who: CallerArg,
        last_event_id: Annotated[str | None, Header(max_length=20)] = None,
        after: Annotated[int | None, Query(ge=0)] = None,
    ) -> Response:
        """The run's chunks after ``Last-Event-ID`` (or ``?after=``; from the start without either):
        no gap, no duplicate."""
        record = await owned(request, who, run_id)
        start = after or 0
        if last_event_id is not None and last_event_id.strip():
            try:
                start = int(last_event_id.strip())
            except ValueError:
                raise HTTPException(400, "Last-Event-ID must be a chunk seq (an integer)") from None
            if start < 0:
                raise HTTPException(400, "Last-Event-ID must not be negative")
        match await resume_point(manager_of(request).store, record, start):
            case "stream":
                return event_stream(
                    request, record.run_id, start, admit_stream(request, who.tenant, record.run_id)
                )
            case "ended":
                return Response(status_code=204, headers={"X-Run-Id": record.run_id})
            case "past_end":
                raise HTTPException(
                    400, f"resume point {start} is past the run's last chunk (seq {record.last_seq})"
                )

    @app.post(
        "/v1/runs/{run_id}/cancel",
        response_model=RunInfo,
        status_code=202,
        responses={404: {"description": "No such run"}, **API_ERRORS},
        tags=["runs"],
    )
    async def cancel_run(run_id: RunIdArg, request: Request, who: CallerArg) -> RunInfo:
        """Ask a run to stop; its stream ends with a ``done`` chunk of status ``cancelled``."""
        record = await owned(request, who, run_id)
        if record.status in ("running", "awaiting_approval"):
            await manager_of(request).cancel(record)
            record = await owned(request, who, run_id)
        return _info(record)

    @app.post(
        "/v1/runs/{run_id}/approvals",
        response_model=RunInfo,
        status_code=202,
        responses={
            404: {"description": "No such run"},
            409: {"description": "Not awaiting approval"},
            422: {"description": "Decisions that do not fit the calls waiting"},
            **BODY_ERRORS,
            **API_ERRORS,
        },
        tags=["runs"],
    )
    async def approve_run(
        run_id: RunIdArg, body: ApprovalRequest, request: Request, who: CallerArg
    ) -> RunInfo:
        """Answer a run waiting for human approval; the run continues in the same stream (resume
        after the ``done`` chunk of status ``awaiting_approval``)."""
        record = await owned(request, who, run_id)
        try:
            await manager_of(request).approve(record, approved=body.approved, rejected=body.rejected)
        except NotAwaitingApproval as exc:
            raise HTTPException(409, str(exc)) from None
        except InvalidDecisions as exc:
            raise HTTPException(422, str(exc)) from None
        refreshed = await owned(request, who, run_id)
        return _info(refreshed)

    @app.get("/healthz", tags=["service"])
    async def healthz() -> JSONResponse:
        """Liveness (no authentication)."""
        return JSONResponse({"status": "ok"})

    @app.get("/runs", response_class=HTMLResponse, include_in_schema=False)
    async def runs_page() -> HTMLResponse:
        return HTMLResponse(PAGE_HTML)

    @app.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
    async def run_page(run_id: RunIdArg) -> HTMLResponse:
        return HTMLResponse(PAGE_HTML)

    for extension in mounted:
        if extension.router is not None:
            app.include_router(extension.router)

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        """The runs page: what a person opening the server's address wants (an extension's router,
        included first, may answer ``/`` instead). A browser keeps the ``#key=…`` fragment across it."""
        return RedirectResponse("/runs")

    return app


__all__ = ["ApprovalRequest", "RunRequest", "create_app"]
