"""Browser pages on other origins: CORS for the origins ``KANAWA_CORS_ORIGINS`` names, and no others.

A page served from another origin (a Vite dev server on ``:5173``, a site's own domain) may call the
service only when its origin is in the allow-list; with none configured (the default) no response
carries CORS headers, so browsers keep every other origin's pages out. The answers are Starlette's
:class:`~starlette.middleware.cors.CORSMiddleware`: a preflight (``OPTIONS`` with
``Access-Control-Request-Method``) of an allowed origin is answered for every route — ``GET``,
``POST`` and ``DELETE`` (MCP ends its sessions with one) and whatever request headers the client
asks for (the protocols' clients send their own: ``Last-Event-ID``, ``Mcp-Session-Id``,
``A2A-Version``, the OpenAI SDK's ``X-Stainless-*`` …); the headers clients read are exposed
(``X-Run-Id``, ``Mcp-Session-Id``, ``Retry-After``, the AI SDK's stream header).

Credentials are never allowed: the key travels in the ``Authorization`` header a page's script sets,
never in a cookie (the server reads no cookie at all), so a page of an allowed origin can use only a
key it was given, and a browser sends no ambient credential on the page's behalf.

A request without an ``Origin`` header (every client that is not a browser) passes through untouched,
without a frame of this middleware held for the length of its stream.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Final

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

EXPOSED: Final = (
    "X-Run-Id",
    "Mcp-Session-Id",
    "Retry-After",
    "WWW-Authenticate",
    "x-vercel-ai-ui-message-stream",
)
"""Response headers a page's script may read."""
PREFLIGHT_MAX_AGE: Final = 600
"""Seconds a browser may keep a preflight's answer."""


class CrossOrigin:
    """CORS for ``origins`` (``("*",)``: any origin) on a request that has an ``Origin`` header."""

    def __init__(self, app: ASGIApp, *, origins: tuple[str, ...]) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origins=origins,
            allow_methods=("GET", "POST", "DELETE"),
            allow_headers=("*",),
            allow_credentials=False,
            expose_headers=EXPOSED,
            max_age=PREFLIGHT_MAX_AGE,
        )

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # not a coroutine function: a request from a client that is not a browser holds no frame here
        if scope["type"] != "http" or not any(name == b"origin" for name, _ in scope["headers"]):
            return self.app(scope, receive, send)
        return self.cors(scope, receive, send)


__all__ = ["EXPOSED", "PREFLIGHT_MAX_AGE", "CrossOrigin"]
