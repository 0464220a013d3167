"""The agents as an MCP server over streamable HTTP: ``/mcp`` (``GET``, ``POST``, ``DELETE``).

The route checks the caller like every ``/v1`` route (the Bearer key, development mode, the rate
limit, the body limit) and hands the request to the official ``mcp`` SDK's session manager
(:mod:`.transport`, where the rest is told). That manager is started by the first ``/mcp``
request, not with the app: the SDK adds about 25 MiB to a server process and a quarter of a second
to its start, which a server whose clients never speak MCP should not pay. Once started it runs in
a task of the app's lifespan (:func:`mcp_sessions`) until the app stops, which cancels the calls
still going, and so their runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Final

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response

from kanawa._logging import get_logger
from kanawa.server.http.dependencies import CallerArg
from kanawa.server.http.event_stream import OpenStreams, TooManyStreams
from kanawa.server.http.protocols.jsonrpc_checks import CheckedJsonRpc
from kanawa.server.settings import ServerSettings

if TYPE_CHECKING:
    from kanawa.server.http.protocols.mcp.transport import TenantSessions

_log = get_logger("kanawa.server")

PATH: Final = "/mcp"
SESSION_HEADER: Final = "mcp-session-id"


class McpSessions:
    """The SDK's session manager of one app, started on first use (module docstring):
    ``app.state.mcp``. :meth:`get` starts it and waits until it runs; it runs in :meth:`keep`, a
    task of the lifespan, so that the task that enters the SDK's task group also leaves it."""

    def __init__(self, app: FastAPI) -> None:
        self._app = app
        self._wanted = asyncio.Event()
        """Set by the first request, or by the end of the lifespan (``_closing``)."""
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._closing = False
        self._manager: TenantSessions | None = None

    @property
    def running(self) -> TenantSessions | None:
        """The session manager if it runs now (never starts it)."""
        return self._manager

    async def get(self) -> TenantSessions | None:
        """The running session manager (started now if need be); ``None`` when it is not running:
        it failed to start, or the app is stopping."""
        if self._manager is None and not self._closing:
            self._wanted.set()
            await self._ready.wait()
        return self._manager

    async def keep(self) -> None:
        """Until the app stops: start the manager when it is first wanted and run it."""
        await self._wanted.wait()
        if self._closing:
            return
        try:
            from kanawa.server.http.protocols.mcp import transport as mcp_transport

            manager = mcp_transport.session_manager(self._app)
            async with manager.run():
                self._manager = manager
                self._ready.set()
                await self._stop.wait()
        except Exception:
            _log.exception("the MCP session manager stopped with an error; /mcp answers 503")
        finally:
            self._manager = None
            self._ready.set()

    def close(self) -> None:
        self._closing = True
        self._stop.set()
        self._wanted.set()


@asynccontextmanager
async def mcp_sessions(app: FastAPI) -> AsyncIterator[None]:
    """``app``'s MCP sessions while the app serves (its lifespan): ``app.state.mcp``, started on
    first use. Leaving it stops the manager, which cancels the calls still going, and so their runs."""
    sessions = app.state.mcp = McpSessions(app)
    keeper = asyncio.get_running_loop().create_task(sessions.keep())
    try:
        yield
    finally:
        sessions.close()
        await keeper


router = APIRouter(tags=["mcp"])


@router.api_route(PATH, methods=["GET", "POST", "DELETE"], include_in_schema=False)
async def mcp_endpoint(request: Request, who: CallerArg) -> Response:
    """MCP's streamable HTTP transport, for the caller's tenant (:mod:`.transport`).

    A ``GET`` (a session's stream for the server's own messages, or a resume with
    ``Last-Event-ID``) is an event stream like any other: it counts against the tenant's
    ``KANAWA_MAX_STREAMS`` while it is open. A ``POST`` without a session id opens a session, which
    counts against ``KANAWA_MCP_SESSIONS`` (the tenant's longest-idle session makes room). Beyond
    either cap: 429 with ``Retry-After``, before the SDK sees the request."""
    sessions: McpSessions = request.app.state.mcp
    manager = await sessions.get()
    if manager is None:
        raise HTTPException(503, "MCP is not available on this server now", headers={"Retry-After": "1"})
    from kanawa.server.http.protocols.mcp import transport as mcp_transport

    settings: ServerSettings = request.app.state.settings
    release = None
    if request.method == "GET":
        streams: OpenStreams = request.app.state.streams
        try:
            streams.admit(who.tenant, None)
        except TooManyStreams as exc:
            raise HTTPException(429, str(exc), headers={"Retry-After": "1"}) from None
        release = partial(streams.release, who.tenant, None)
    elif (
        request.method == "POST"
        and SESSION_HEADER not in request.headers
        and not await manager.make_room(who.tenant)
    ):
        detail = f"this tenant has {manager.per_tenant} MCP sessions open and busy (the limit)"
        raise HTTPException(429, detail, headers={"Retry-After": "1"})
    handed = mcp_transport.handed_over(
        request, who, manager, write_timeout=settings.sse_write_timeout, release=release
    )
    return CheckedJsonRpc(handed)  # ids and numbers first


__all__ = ["PATH", "McpSessions", "mcp_sessions", "router"]
