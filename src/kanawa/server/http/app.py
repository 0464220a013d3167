"""The FastAPI application, assembled: settings and keys, middleware, the routers.

``create_app(agents, settings)`` decides what the service is (:class:`~.lifespan.ServicePlan`) and puts
it, the key ring and the rate limiter on ``app.state``; the lifespan (:mod:`.lifespan`) makes the store
and the run manager; each route lives in a router module and reads what it needs from
``request.app.state`` (:mod:`.dependencies`):

- :mod:`.protocols.kanawa_sse` — kanawa's own SSE protocol (``POST /v1/runs``, resume);
- :mod:`.protocols.openai_responses`, :mod:`.protocols.openai_chat`, :mod:`.protocols.openai_models`
  — the OpenAI-compatible API (``/v1/responses``, ``/v1/chat/completions``, ``/v1/models``);
- :mod:`.protocols.agui` — AG-UI (``/ag-ui/{agent}``);
- :mod:`.protocols.ai_sdk` — the Vercel AI SDK's chat (``/ai-sdk/{agent}``: useChat);
- :mod:`.protocols.a2a.routes` — every agent as an A2A agent (``/a2a/{agent}``);
- :mod:`.protocols.mcp.routes` — the agents as MCP tools (``/mcp``, streamable HTTP);
- :mod:`.runs_api` — the tenant's runs (list, status, cancel, approvals);
- :mod:`.service_api` — whoami, the agents, liveness;
- :mod:`.pages` — the live timeline pages; extensions' routers; the root redirect last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fastapi import APIRouter, FastAPI
from fastapi.exceptions import RequestValidationError

from kanawa import __version__
from kanawa.server.http import pages, runs_api, service_api
from kanawa.server.http.auth import FailureThrottle, KeyRing, RateLimiter
from kanawa.server.http.cors import CrossOrigin
from kanawa.server.http.event_stream import ConnectionHandle
from kanawa.server.http.headers import PageSecurityHeaders, mask_access_log
from kanawa.server.http.lifespan import ServicePlan, lifespan
from kanawa.server.http.limits import BodySizeLimit
from kanawa.server.http.protocols import (
    agui,
    ai_sdk,
    kanawa_sse,
    openai_chat,
    openai_models,
    openai_responses,
)
from kanawa.server.http.protocols.a2a import routes as a2a
from kanawa.server.http.protocols.errors import ProtocolError, detail_response
from kanawa.server.http.protocols.mcp import routes as mcp
from kanawa.server.http.protocols.openai_errors import OpenAIErrorShape
from kanawa.server.http.validation import validation_failed
from kanawa.server.runs.extensions import Extension, merged_agents, merged_translation
from kanawa.server.runs.servable import ServableAgent
from kanawa.server.settings import ServerSettings
from kanawa.server.store.base import RunStore


def create_app(
    *,
    agents: Mapping[str, ServableAgent] | None = None,
    settings: ServerSettings | None = None,
    store: RunStore | None = None,
    extensions: Sequence[Extension] = (),
) -> FastAPI:
    """The service for ``agents`` (default: the demo agents). Keys come from ``settings``; with none
    configured, a development key (``settings.dev_key`` or generated) is accepted from loopback only.
    ``extensions`` add routers (pages), agents, their events' chunks and process-wide resources
    (:mod:`kanawa.server.runs.extensions`)."""
    from kanawa.server.runs.demo_agents import demo_agents

    config = settings if settings is not None else ServerSettings.from_env()
    if config.celery_broker and not config.redis_url:
        raise ValueError("KANAWA_CELERY_BROKER needs KANAWA_REDIS_URL: runs stream through Redis")
    mounted = tuple(extensions)
    registry = merged_agents(agents if agents is not None else demo_agents(), mounted)
    plan = ServicePlan(config, registry, mounted, merged_translation(mounted), store)
    if config.keys_configured:
        ring, dev_key = KeyRing.parse(config.api_keys, file=config.api_keys_file), None
    else:
        ring, dev_key = KeyRing.development(config.dev_key)

    app = FastAPI(
        title="kanawa",
        version=__version__,
        summary="Agents as a service: SSE chunks with seq numbers and lossless resume (seed 002 §5).",
        lifespan=lifespan,
    )
    app.add_middleware(BodySizeLimit, limit=config.max_request_bytes)
    app.add_middleware(OpenAIErrorShape)  # outside the size limit: its 413 is in OpenAI's shape too
    app.add_middleware(PageSecurityHeaders)
    if config.cors_origins:  # outside the limits and error shapes: their answers carry CORS headers too
        app.add_middleware(CrossOrigin, origins=config.cors_origins)
    app.add_exception_handler(RequestValidationError, validation_failed)
    app.add_exception_handler(ProtocolError, detail_response)
    mask_access_log()
    app.add_middleware(ConnectionHandle)  # added last: the outermost of ours, it sees the server's receive
    app.state.plan = plan
    app.state.agents = registry
    app.state.dev_key = dev_key
    app.state.settings = config
    app.state.ring = ring
    app.state.limiter = RateLimiter(config.rate_limit)
    app.state.auth_failures = FailureThrottle(config.auth_failures)
    for router in (service_api.router, kanawa_sse.router, runs_api.router, pages.router):
        _add_routes(app, router)
    for protocol in (openai_responses, openai_chat, openai_models, agui, ai_sdk, a2a):  # each wire protocol
        _add_routes(app, protocol.router)
    _add_routes(app, mcp.router)  # the agents as MCP tools (streamable HTTP)
    for extension in mounted:
        if extension.router is not None:
            app.include_router(extension.router)
    _add_routes(app, pages.root_router)
    return app


def _add_routes(app: FastAPI, router: APIRouter) -> None:
    """Puts ``router``'s routes in the app's own route list. ``include_router`` keeps a router as a
    layer that every request passes through, and a streaming response holds that layer's frames for
    as long as it lasts (about 1 KiB per open stream, ``bench/serve_load.py``). kanawa's routers have
    no prefix, dependencies or overrides of their own, so their routes are the app's as they are.
    Extensions' routers, which may have them, are included the usual way."""
    app.router.routes.extend(router.routes)


__all__ = ["create_app"]
