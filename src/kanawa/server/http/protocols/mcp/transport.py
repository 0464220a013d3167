"""The MCP SDK's side of ``/mcp``: its streamable-HTTP session manager over the agents' tools.

The routes and the start are :mod:`.routes`'s; this module (and the ``mcp`` SDK with it) is imported
when the first ``/mcp`` request comes. The official ``mcp`` SDK speaks the protocol — its
:class:`StreamableHTTPSessionManager`, with a low-level server whose ``tools/list`` and ``tools/call``
are :class:`~.tools.ServedToolset`'s. kanawa decides who may speak it, before the SDK sees a
byte: the route takes the same :func:`~kanawa.server.http.dependencies.caller` dependency as every
``/v1`` route (401 without a valid key, 403 for a remote client in development mode, 429 past the
key's rate limit), and the app's body-size limit applies. The caller's tenant then travels with the
request (:data:`TENANT_KEY` in the ASGI scope, which the SDK hands the tool handler as
``ctx.request``) and is the session's owner (the SDK's ``scope["user"]``): a session id used with
another tenant's key is answered exactly as a session id that does not exist (404
``Session not found``).

A stream cut mid-call resumes: the SDK numbers the messages of a session's streams and a client
that comes back with ``Last-Event-ID`` gets the ones it missed (:mod:`.events`).

Sessions live in the process that opened them (the SDK keeps them in memory); the runs they start
are the run manager's, durable in Redis with ``KANAWA_REDIS_URL``. Several web processes behind one
address need sticky sessions — or clients on protocol 2026-07-28, whose requests need no session.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from fastapi import FastAPI, Request, Response
from mcp import types
from mcp.server import ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, AuthorizationContext
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.types import Receive, Scope, Send

from kanawa import __version__
from kanawa._logging import get_logger
from kanawa.mcp_server.server import INSTRUCTIONS, SERVER_NAME, progress_of
from kanawa.mcp_server.toolset import UnknownAgentToolError
from kanawa.server.http.auth import KeyRing
from kanawa.server.http.dependencies import Caller
from kanawa.server.http.protocols.mcp.events import McpEventLog
from kanawa.server.http.protocols.mcp.sending import BoundedSend
from kanawa.server.http.protocols.mcp.tools import ServedToolset
from kanawa.server.settings import ServerSettings

_log = get_logger("kanawa.server")

TENANT_KEY: Final = "kanawa.tenant"
"""Where the route leaves the caller's tenant in the ASGI scope for the tool handler."""

_LOOPBACK: Final = ("127.0.0.1", "localhost", "[::1]")
LOOPBACK_ONLY: Final = TransportSecuritySettings(
    allowed_hosts=[f"{host}{port}" for host in _LOOPBACK for port in ("", ":*")],
    allowed_origins=[f"http://{host}{port}" for host in _LOOPBACK for port in ("", ":*")],
)
"""Development mode (no keys configured) answers loopback clients only: there the SDK's DNS-rebinding
checks refuse a ``Host`` or ``Origin`` that is not this machine (a web page that a rebinding attack
loaded). With keys configured they are off — a page has no key, and a deployed server's host names
are its proxy's to decide."""


def _tenant_of(ctx: ServerRequestContext[Any]) -> str:
    request = ctx.request
    tenant = request.scope.get(TENANT_KEY) if request is not None else None
    if not isinstance(tenant, str):  # only the route below reaches the SDK, and it always sets it
        raise MCPError(code=types.INVALID_REQUEST, message="no authenticated tenant")
    return tenant


def build_http_server(app: FastAPI, toolset: ServedToolset) -> Server[Any]:
    """The low-level MCP server of ``app``: its agents as tools, each call a run of its manager."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        _tenant_of(ctx)
        return types.ListToolsResult(tools=toolset.list_tools())

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tenant = _tenant_of(ctx)
        try:
            return await toolset.call(
                app.state.manager,
                app.state.streams,
                tenant,
                params.name,
                params.arguments,
                report=progress_of(ctx),
            )
        except UnknownAgentToolError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class TenantSessions(StreamableHTTPSessionManager):
    """The SDK's session manager, with each session's events its own (:class:`~.events.SessionEvents`
    of one :class:`~.events.McpEventLog`, freed when the session ends) and at most ``per_tenant``
    sessions a tenant (``0``: no cap): :meth:`make_room` is asked before a request that opens one."""

    def __init__(self, app: Server[Any], *, events: McpEventLog, per_tenant: int = 0, **options: Any) -> None:
        super().__init__(app, **options)
        self.events = events
        self.per_tenant = per_tenant
        self._owned: dict[str, dict[str, StreamableHTTPServerTransport]] = {}
        """Each tenant's sessions: session id → its transport."""
        self._owner: dict[str, str] = {}

    def sessions_of(self, tenant: str) -> int:
        """How many sessions ``tenant`` has open."""
        return len(self._owned.get(tenant, ()))

    async def make_room(self, tenant: str) -> bool:
        """Room for one more session of ``tenant``: at its cap, its session idle longest is ended
        (its client gets 404 and opens another, as after an idle timeout). ``False`` when every one
        of them has a request in flight (an open ``GET`` stream included): the new one is refused."""
        owned = self._owned.get(tenant, {})
        while self.per_tenant and len(owned) >= self.per_tenant:
            idle = [
                (transport.idle_scope.deadline, session_id, transport)
                for session_id, transport in owned.items()
                if transport.idle_scope is not None and math.isfinite(transport.idle_scope.deadline)
            ]
            if not idle:
                return False
            _, session_id, transport = min(idle, key=lambda entry: entry[0])
            _log.info("MCP session %s… ended: its tenant opened a new one at the cap", session_id[:8])
            await self._discard_session(session_id, transport)
        return True

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        tenant = requestor["client_id"] if requestor is not None else ""
        if self.per_tenant and self.sessions_of(tenant) >= self.per_tenant:
            return None  # two openings raced past make_room: the SDK answers this one 503
        transport = super()._admit_session(requestor)
        session_id = None if transport is None else transport.mcp_session_id
        if transport is not None and session_id is not None:
            # the SDK hands every session the manager's one store: this session gets its own view
            transport._event_store = self.events.session(session_id)
            self._owned.setdefault(tenant, {})[session_id] = transport
            self._owner[session_id] = tenant
        return transport

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        self.events.forget(session_id)
        tenant = self._owner.pop(session_id, None)
        owned = self._owned.get(tenant or "", {})
        owned.pop(session_id, None)
        if not owned and tenant is not None:
            self._owned.pop(tenant, None)
        await super()._discard_session(session_id, transport)


def session_manager(app: FastAPI) -> TenantSessions:
    """The SDK's session manager for ``app``'s agents (run by :mod:`.routes` while the app serves)."""
    settings: ServerSettings = app.state.settings
    ring: KeyRing = app.state.ring
    server = build_http_server(app, ServedToolset(app.state.agents))
    return TenantSessions(
        server,
        events=McpEventLog(max_bytes=settings.mcp_event_bytes),  # resumes with Last-Event-ID (.events)
        per_tenant=settings.mcp_sessions,
        session_idle_timeout=settings.mcp_session_idle,
        max_request_body_size=settings.max_request_bytes,
        security_settings=LOOPBACK_ONLY if ring.dev else None,
    )


class _ToSessions(Response):
    """The route's answer: the request handed on to the SDK's session manager, which sends the
    response itself (JSON, or an SSE stream of progress and the result) through a
    :class:`~.sending.BoundedSend`; ``release`` gives back the stream slot a ``GET`` was admitted
    with, when its stream ends."""

    def __init__(
        self,
        sessions: StreamableHTTPSessionManager,
        write_timeout: float | None,
        release: Callable[[], None] | None,
    ) -> None:
        super().__init__()
        self.sessions = sessions
        self.write_timeout = write_timeout
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.sessions.handle_request(scope, receive, BoundedSend(send, scope, self.write_timeout))
        finally:
            if self.release is not None:
                self.release()
                self.release = None


def handed_over(
    request: Request,
    who: Caller,
    sessions: StreamableHTTPSessionManager,
    *,
    write_timeout: float | None = None,
    release: Callable[[], None] | None = None,
) -> Response:
    """``request`` as the SDK takes it, for the caller's tenant (module docstring)."""
    scope = request.scope
    scope[TENANT_KEY] = who.tenant
    owner = AccessToken(token=who.key_id, client_id=who.tenant, scopes=[], subject=who.tenant)
    scope["user"] = AuthenticatedUser(owner)
    return _ToSessions(sessions, write_timeout, release)


__all__ = [
    "LOOPBACK_ONLY",
    "TENANT_KEY",
    "TenantSessions",
    "build_http_server",
    "handed_over",
    "session_manager",
]
