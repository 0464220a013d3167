"""Request size limits as a pure ASGI middleware: a body larger than the limit is refused with 413,
whether it declares its length or streams it chunked (counted as it arrives; past the limit the app
sees the client disconnect and the 413 has already been sent)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def _length_headers(headers: Any) -> tuple[int | None, bool]:
    """The declared ``Content-Length`` (``ValueError`` when it is not a number) and whether the body
    comes chunked."""
    declared: int | None = None
    chunked = False
    for name, value in headers:
        if name == b"content-length":
            declared = int(value)
        elif name == b"transfer-encoding":
            chunked = True
    return declared, chunked


class BodySizeLimit:
    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            declared, chunked = _length_headers(scope.get("headers", ()))
        except ValueError:
            await self._refuse(send, 400, "bad Content-Length")
            return
        if declared is not None and declared > self.limit:
            await self._refuse(send, 413, f"request body larger than {self.limit} bytes")
            return
        if declared is not None and not chunked:
            # the HTTP server delivers no more than the declared length: nothing to count, and the
            # response's sends (every SSE event of a stream) go straight through
            await self.app(scope, receive, send)
            return
        seen = 0
        started = False
        refused = False

        async def counting_receive() -> Message:
            nonlocal seen, refused, started
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    refused = True
                    if not started:
                        started = True
                        await self._refuse(send, 413, f"request body larger than {self.limit} bytes")
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 has been sent; whatever the app answers after the cut is dropped
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not refused:
                raise

    @staticmethod
    async def _refuse(send: Send, status: int, detail: str) -> None:
        body = json.dumps({"detail": detail}).encode()
        headers: list[Any] = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


__all__ = ["BodySizeLimit"]
