"""What the service holds while it runs: made when the server starts, closed when it stops.

The store (in memory, or Redis with ``KANAWA_REDIS_URL``), the Celery dispatcher, the limits shared
across processes, the tenants' budget guard (given to every run, never put on an agent) and the run
manager are made in the lifespan — so a Redis connection belongs to the server's event loop — and put
on ``app.state`` for the routes; then the MCP session manager (:mod:`.protocols.mcp.routes`), whose
calls end before the runs are closed. Extensions' resources are entered first and left last: a run never
sees them closed under it.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI

from kanawa.server.http.event_stream import OpenStreams
from kanawa.server.http.protocols.mcp.routes import mcp_sessions
from kanawa.server.runs.budgets import tenant_guard
from kanawa.server.runs.chunks import ChunkTranslation
from kanawa.server.runs.extensions import Extension
from kanawa.server.runs.manager import RunManager
from kanawa.server.runs.servable import ServableAgent
from kanawa.server.settings import ServerSettings
from kanawa.server.store.base import RunStore
from kanawa.server.store.memory import MemoryRunStore


@dataclass(frozen=True, slots=True)
class ServicePlan:
    """What :func:`~.app.create_app` decided, for the lifespan to make real (``app.state.plan``)."""

    settings: ServerSettings
    agents: dict[str, ServableAgent]
    extensions: tuple[Extension, ...]
    translation: ChunkTranslation
    store: RunStore | None = None
    """A store the caller made (and closes); ``None``: made from the settings."""


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    plan: ServicePlan = app.state.plan
    async with AsyncExitStack() as resources:
        for extension in plan.extensions:  # up before the first run, down after the last one drained
            if extension.lifespan is not None:
                await resources.enter_async_context(extension.lifespan())
        async with _serving(app, plan), mcp_sessions(app):
            yield


def _make_store(plan: ServicePlan) -> RunStore:
    config = plan.settings
    if plan.store is not None:
        return plan.store
    if config.redis_url:
        from kanawa.server.store.redis.store import RedisRunStore

        return RedisRunStore(
            config.redis_url,
            ttl=config.run_ttl,
            cap=config.run_buffer,
            prefix=config.redis_prefix,
            tenant_bytes=config.tenant_run_bytes,
            total_bytes=config.run_bytes,
        )
    return MemoryRunStore(
        ttl=config.run_ttl,
        cap=config.run_buffer,
        tenant_bytes=config.tenant_run_bytes,
        total_bytes=config.run_bytes,
    )


@asynccontextmanager
async def _serving(app: FastAPI, plan: ServicePlan) -> AsyncIterator[None]:
    config = plan.settings
    run_store = _make_store(plan)
    guard = tenant_guard(config)
    dispatcher = None
    if config.celery_broker:
        from kanawa.server.runs.workers import Dispatcher

        dispatcher = Dispatcher(config.celery_broker, queue=config.celery_queue)
    slots = None
    if config.redis_url and plan.store is None:  # the limits hold across processes (shared_limits)
        from kanawa.server.store.redis.store import RedisRunStore
        from kanawa.server.store.shared_limits import SharedRateLimiter, SharedRunSlots

        assert isinstance(run_store, RedisRunStore)
        slots = SharedRunSlots(run_store.redis, prefix=config.redis_prefix, command=run_store.command)
        if config.rate_limit:
            app.state.limiter = SharedRateLimiter(
                run_store.redis, prefix=config.redis_prefix, per_minute=config.rate_limit
            )
    manager = app.state.manager = RunManager(
        plan.agents,
        run_store,
        max_runs=config.max_runs,
        dispatch=dispatcher,
        slots=slots,
        translation=plan.translation,
        guardrails=(guard,) if guard is not None else (),
    )
    streams = app.state.streams = OpenStreams(per_tenant=config.max_streams, per_run=config.max_run_streams)
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
        if plan.store is None:
            await run_store.aclose()
        if guard is not None:
            await guard.aclose()


__all__ = ["ServicePlan", "lifespan"]
