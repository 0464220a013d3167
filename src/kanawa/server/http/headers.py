"""Response headers that protect the pages, and an access log that does not keep credentials.

:class:`PageSecurityHeaders` adds, to every response outside the ``/v1`` API (the timeline pages,
``/docs``, the pages extensions mount — the HTML a browser renders):

- ``Content-Security-Policy: frame-ancestors 'none'; base-uri 'none'; object-src 'none';
  form-action 'self'`` — no other site may frame a page (clickjacking), nor rebase its relative
  links or embed plugins. It restricts neither scripts nor styles: the pages are self-contained
  documents with inline scripts and styles, and ``/docs`` loads Swagger UI from its CDN;
- ``X-Frame-Options: DENY`` — the same for browsers that predate ``frame-ancestors``;
- ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer`` (a run id in a page's
  URL does not travel to another site).

The ``/v1`` responses (JSON and event streams, which no browser renders as a page) are passed
through untouched: a stream sends thousands of messages and this adds nothing to them.

:func:`mask_access_log` masks the request target uvicorn's access log writes: a key put in a query
string (``?key=…``, ``?access_token=…``) or any configured key would otherwise be logged verbatim.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kanawa.secrets import mask

PAGE_HEADERS: Final[tuple[tuple[bytes, bytes], ...]] = (
    (
        b"content-security-policy",
        b"frame-ancestors 'none'; base-uri 'none'; object-src 'none'; form-action 'self'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


class PageSecurityHeaders:
    """Adds :data:`PAGE_HEADERS` to every HTTP response outside ``/v1/`` (module docstring); a header
    the response sets itself is kept."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # not a coroutine function: an API request (a stream) holds no frame of it while it lasts
        if scope["type"] != "http" or scope["path"].startswith("/v1/"):
            return self.app(scope, receive, send)
        return self._with_headers(scope, receive, send)

    async def _with_headers(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(pair for pair in PAGE_HEADERS if pair[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


class AccessLogMask(logging.Filter):
    """Masks the request target (the third argument) of uvicorn's access log records; the record
    keeps its shape, which uvicorn's access formatter unpacks."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            target = args[2]
            masked = mask(target)
            if masked != target:
                record.args = (*args[:2], masked, *args[3:])
        return True


ACCESS_LOG_MASK: Final = AccessLogMask()


def mask_access_log() -> None:
    """Put :data:`ACCESS_LOG_MASK` on uvicorn's access logger (once)."""
    logger = logging.getLogger("uvicorn.access")
    if ACCESS_LOG_MASK not in logger.filters:
        logger.addFilter(ACCESS_LOG_MASK)


__all__ = ["PAGE_HEADERS", "AccessLogMask", "PageSecurityHeaders", "mask_access_log"]
