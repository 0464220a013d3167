"""Limits on request heads, enforced where uvicorn parses them (before any ASGI code runs).

uvicorn's httptools protocol buffers a request's URL and header lines for as long as the client
sends them, and it times nothing out before the first request on a connection: a client that sends
one header line that never ends, or a head one byte a second, holds the connection and grows the
server's memory without bound. :class:`LimitedHttpToolsProtocol` is that protocol with three limits
(:class:`HeadLimits`, from :class:`~kanawa.server.settings.ServerSettings`):

- **size** — a head (request line and header lines) larger than ``max_bytes`` is answered
  ``431 Request Header Fields Too Large`` and the connection is closed. The bytes are counted as
  they arrive, so an unfinished head is refused as soon as it passes the limit; what the server
  holds per connection stays below the limit plus one socket read (at most 256 KiB);
- **count** — more than ``max_headers`` header lines: the same 431;
- **time** — a head that is not complete ``timeout`` seconds after its connection opened (or after
  its first byte, for the next request on a kept-alive connection) is answered
  ``408 Request Timeout`` and the connection is closed. Between requests uvicorn's own keep-alive
  timeout applies.

:func:`uvicorn_options` gives ``uvicorn.run``/``uvicorn.Config`` these settings, so ``kanawa serve``
(one process or ``--workers N``: every worker process builds its protocol from the same config) and
the tests serve with the same limits.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from kanawa.server.settings import ServerSettings


@dataclass(frozen=True, slots=True)
class HeadLimits:
    """What one request head may be: its size in bytes, its number of header lines, and how long it
    may take to arrive (seconds)."""

    max_bytes: int = 32_768
    max_headers: int = 100
    timeout: float = 10.0


def _refusal(status: int, reason: str, detail: str) -> bytes:
    body = json.dumps({"detail": detail}).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the head limits of :class:`HeadLimits` (module docstring).

    The limits come from ``config.kanawa_head_limits`` when it is set (:func:`serve_config` does),
    else from the ``KANAWA_*`` environment (:func:`limits_from_env`) — what ``kanawa serve`` and
    each of its worker processes (which get a copy of the config, not the settings) go by."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        limits = getattr(config, "kanawa_head_limits", None)
        self._limits: HeadLimits = limits if isinstance(limits, HeadLimits) else limits_from_env()
        self._head_open = True
        """A head is being read (from the connection's start, or from a request's first byte)."""
        self._head_bytes = 0
        self._header_count = 0
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_open and self.parser is not None and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > self._limits.max_bytes:
                self._refuse(431, "Request Header Fields Too Large", self._too_large())

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_open = True
        self._head_bytes = 0
        self._header_count = 0
        if self._head_timer is None:
            self._arm_head_timer()

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.transport.is_closing():
            return
        self._header_count += 1
        if self._header_count > self._limits.max_headers:
            self._refuse(
                431,
                "Request Header Fields Too Large",
                f"a request may carry at most {self._limits.max_headers} header lines",
            )
            return
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self.transport.is_closing():
            return  # refused while the head was parsed: no request is started
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > self._limits.max_bytes:
            self._refuse(431, "Request Header Fields Too Large", self._too_large())
            return
        self._head_open = False
        self._disarm_head_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        if self.cycle is None or self.transport.is_closing():
            return
        super().on_message_complete()

    def on_body(self, body: bytes) -> None:
        if self.cycle is None or self.transport.is_closing():
            return
        super().on_body(body)

    def _too_large(self) -> str:
        return f"the request head is larger than {self._limits.max_bytes} bytes"

    def _arm_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self._limits.timeout, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._head_open and not self.transport.is_closing():
            self._refuse(
                408, "Request Timeout", f"no complete request head within {self._limits.timeout:g} s"
            )

    def _refuse(self, status: int, reason: str, detail: str) -> None:
        """Answer ``status`` and close — unless a response of this connection is under way (a
        pipelined request), which a refusal written now would corrupt: then only close."""
        self._disarm_head_timer()
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:
            self.transport.write(_refusal(status, reason, detail))
        self.transport.close()


_FROM_ENV: list[HeadLimits] = []


def limits_from_env() -> HeadLimits:
    """The head limits of ``ServerSettings.from_env()``, read once per process."""
    if not _FROM_ENV:
        _FROM_ENV.append(head_limits(ServerSettings.from_env()))
    return _FROM_ENV[0]


def head_limits(settings: ServerSettings) -> HeadLimits:
    return HeadLimits(settings.max_head_bytes, settings.max_headers, settings.head_timeout)


def uvicorn_options() -> dict[str, Any]:
    """What ``uvicorn.run`` needs to serve with the head limits (read from the environment in
    every worker process): the protocol class."""
    return {"http": LimitedHttpToolsProtocol}


def serve_config(app: Any, settings: ServerSettings, **options: Any) -> Config:
    """A ``uvicorn.Config`` for ``app`` that enforces ``settings``' head limits (for an app served
    from code, not from the environment: the tests, an embedding program)."""
    config = Config(app, **uvicorn_options(), **options)
    config.kanawa_head_limits = head_limits(settings)  # type: ignore[attr-defined]
    return config


__all__ = [
    "HeadLimits",
    "LimitedHttpToolsProtocol",
    "head_limits",
    "limits_from_env",
    "serve_config",
    "uvicorn_options",
]
