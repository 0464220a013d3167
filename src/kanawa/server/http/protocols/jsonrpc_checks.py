"""What a JSON-RPC door refuses before its library sees the request: an ``id`` that is not a string
or an integer, and a number JSON cannot carry.

JSON-RPC 2.0 says an ``id`` is a string or a number; MCP narrows it to a string or an integer. The
``mcp`` SDK reads a message whose ``id`` is an object as a *notification* (the id is dropped: no
answer is owed) and answers ``202 Accepted`` with an empty body — a client that sent a request hears
nothing of its mistake. The same bad value must get the same class of answer at every door
(:mod:`.errors`): here ``400`` with JSON-RPC's ``-32600`` (invalid request), as the SDK answers a
body that is not JSON-RPC at all. ``NaN``/``Infinity``/``1e999`` in params get ``-32602`` (invalid
params), as A2A answers them and as the native routes answer them ``422``.

:class:`CheckedJsonRpc` reads the body (the app's size limit has bounded it), answers a refusal
itself, and otherwise hands the request on with the body replayed, so the library reads it as sent.
"""

from __future__ import annotations

import json
from typing import Any, Final

from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from kanawa.server.http.validation import non_finite_at

INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602


def valid_id(rpc_id: object) -> bool:
    """A request id MCP and A2A accept: a string or an integer (``true`` is not one)."""
    return isinstance(rpc_id, str | int) and not isinstance(rpc_id, bool)


def refusal(payload: object) -> tuple[int, str] | None:
    """The JSON-RPC error code and message for a request (or each of a batch's) that must be refused
    before its library sees it, or ``None``."""
    for message in payload if isinstance(payload, list) else [payload]:
        if not isinstance(message, dict):
            continue
        if "id" in message and not valid_id(message["id"]):
            return INVALID_REQUEST, "Invalid request: id must be a string or an integer"
        where = non_finite_at(message.get("params"))
        if where is not None:
            return (
                INVALID_PARAMS,
                f"Invalid params: params.{where}: numbers must be finite (no NaN or Infinity)",
            )
    return None


def error_response(code: int, message: str) -> JSONResponse:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=400)


class CheckedJsonRpc(Response):
    """``inner`` (an ASGI response that reads the request itself) behind the checks of
    :func:`refusal` for a ``POST`` (module docstring)."""

    def __init__(self, inner: Response) -> None:
        super().__init__()
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await self.inner(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: nothing to answer
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            payload = None  # not JSON: the library's own parse error answers it
        refused = refusal(payload)
        if refused is not None:
            await error_response(*refused)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.inner(scope, replay, send)


__all__ = ["INVALID_PARAMS", "INVALID_REQUEST", "CheckedJsonRpc", "error_response", "refusal", "valid_id"]
