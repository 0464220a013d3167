"""A scriptable HTTP/1.1 server for wire-level provider tests.

It speaks real HTTP over a loopback socket, so the official SDKs (openai, anthropic, google-genai)
talk to it exactly as they talk to the provider: status codes, headers, chunked SSE bodies, delays
between chunks and connections cut mid-stream. Each incoming request takes the next queued
:class:`Reply` (or calls a handler that builds one) and is recorded for assertions on what was sent.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Delay:
    """Sleep this many seconds before sending the next body piece."""

    seconds: float


@dataclass(frozen=True)
class Disconnect:
    """Close the socket abruptly (no terminating chunk): a mid-stream connection drop."""


@dataclass(frozen=True)
class Lazy:
    """A body piece computed at the moment it is sent (e.g. to embed a send timestamp)."""

    make: Callable[[], bytes]


BodyPiece = bytes | Delay | Disconnect | Lazy


@dataclass
class Reply:
    """What the server answers: status, headers and body pieces (sent with chunked encoding)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: list[BodyPiece] = field(default_factory=list)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Handler = Callable[[RecordedRequest], Reply]


def json_reply(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    hdrs = {"content-type": "application/json", **(headers or {})}
    return Reply(status, hdrs, [json.dumps(obj).encode()])


def sse_reply(
    events: Iterable[tuple[str | None, Any] | BodyPiece],
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    done: bool = False,
) -> Reply:
    """An SSE reply: each ``(event_name, data)`` becomes ``event:``/``data:`` lines (``data`` is JSON-
    encoded unless already a string); raw bytes, delays and disconnects pass through in order."""
    body: list[BodyPiece] = []
    for item in events:
        if isinstance(item, bytes | Delay | Disconnect | Lazy):
            body.append(item)
            continue
        name, data = item
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {name}\n" if name else ""
        body.append(f"{head}data: {text}\n\n".encode())
    if done:
        body.append(b"data: [DONE]\n\n")
    hdrs = {"content-type": "text/event-stream", "cache-control": "no-cache", **(headers or {})}
    return Reply(status, hdrs, body)


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}


class WireServer:
    """Run with ``with WireServer() as server: server.base_url``; queue replies with :meth:`enqueue`."""

    def __init__(self) -> None:
        self._queue: deque[Reply | Handler] = deque()
        self.default: Reply | Handler | None = None
        self.requests: list[RecordedRequest] = []
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.port = 0

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> WireServer:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        fut.result(5)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        pending = [t for t in asyncio.all_tasks(self._loop) if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *replies: Reply | Handler) -> None:
        self._queue.extend(replies)

    # ------------------------------------------------------------------ protocol
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                source = self._queue.popleft() if self._queue else self.default
                if source is None:
                    reply = json_reply({"error": {"message": "no reply queued"}}, 599)
                else:
                    reply = source(request) if callable(source) else source
                if not await self._write_reply(writer, reply):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
        if not head:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        body = b""
        if "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await reader.readline()).strip(), 16)
                chunk = await reader.readexactly(size + 2)
                if size == 0:
                    break
                body += chunk[:-2]
        return RecordedRequest(method, path, headers, body)

    async def _write_reply(self, writer: asyncio.StreamWriter, reply: Reply) -> bool:
        """Send the reply; return False when the connection must close (a scripted disconnect)."""
        reason = _REASONS.get(reply.status, "Status")
        head = [f"HTTP/1.1 {reply.status} {reason}", "transfer-encoding: chunked"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        for piece in reply.body:
            if isinstance(piece, Delay):
                await asyncio.sleep(piece.seconds)
            elif isinstance(piece, Disconnect):
                writer.transport.abort()
                return False
            else:
                data = piece.make() if isinstance(piece, Lazy) else piece
                if data:
                    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
