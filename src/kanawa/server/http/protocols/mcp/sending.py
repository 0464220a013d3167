"""The ``send`` the SDK's MCP responses go through: the same bounds as every other event stream.

A run's stream (:mod:`kanawa.server.http.event_stream`) sends at most
:data:`~kanawa.server.store.base.SEND_BYTES` at a time and cuts a client whose socket takes nothing
for ``KANAWA_SSE_WRITE_TIMEOUT`` seconds. The SDK sends each MCP message as one piece — a call's
8 MB answer is one 8 MB write, all of it in the socket's buffer at once, and a client that never
reads holds it there (with the task that waits on it) for as long as the connection stays open.
:class:`BoundedSend` wraps the ASGI ``send`` the SDK is handed: a large body goes out in pieces of
``SEND_BYTES``, each piece may wait ``write_timeout`` seconds, and past that the connection is cut
(the client resumes with ``Last-Event-ID``) and whatever the SDK still sends on it is dropped, so
the response ends at once and frees what it held.
"""

from __future__ import annotations

import asyncio
from typing import Final

from starlette.types import Message, Scope, Send

from kanawa.server.http.event_stream import TRANSPORT_KEY
from kanawa.server.store.base import SEND_BYTES

PIECE: Final = SEND_BYTES
"""The most one write hands the socket."""


class BoundedSend:
    """``send`` for one MCP request (module docstring)."""

    __slots__ = ("_scope", "_send", "cut", "write_timeout")

    def __init__(self, send: Send, scope: Scope, write_timeout: float | None) -> None:
        self._send = send
        self._scope = scope
        self.write_timeout = write_timeout
        self.cut = False
        """The client took nothing for ``write_timeout``: its connection was cut."""

    async def __call__(self, message: Message) -> None:
        if self.cut:
            return  # the connection is gone: the SDK's writer ends as for a client that left
        body = message.get("body", b"") if message["type"] == "http.response.body" else b""
        if len(body) <= PIECE:
            await self._timed(message)
            return
        more = bool(message.get("more_body", False))
        view = memoryview(body)
        for start in range(0, len(body), PIECE):
            last = start + PIECE >= len(body)
            piece = {"type": "http.response.body", "body": bytes(view[start : start + PIECE])}
            if not await self._timed({**piece, "more_body": more if last else True}):
                return

    async def _timed(self, message: Message) -> bool:
        """Send ``message`` within ``write_timeout``; ``False`` when the client was cut instead."""
        try:
            async with asyncio.timeout(self.write_timeout):
                await self._send(message)
            return True
        except TimeoutError:
            self.cut = True
            abort = getattr(self._scope.get(TRANSPORT_KEY), "abort", None)
            if callable(abort):  # a server without the handle closes an unfinished response itself
                abort()
            return False


__all__ = ["PIECE", "BoundedSend"]
