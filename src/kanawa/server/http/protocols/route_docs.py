"""The OpenAPI ``responses`` of a protocol's streaming routes, written once for every door."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kanawa.server.http.dependencies import API_ERRORS, BODY_ERRORS

SSE: Final = "text/event-stream"


def stream_responses(
    stream: str, described: Mapping[int, str], *, body: bool = False
) -> dict[int | str, dict[str, Any]]:
    """A streaming route's ``responses``: its 200 (server-sent events, ``stream`` says what they
    are), the statuses it describes, the errors of a JSON body (``body``) and every API route's — a
    429 it describes says more than the API's own."""
    ok = {"description": stream, "content": {SSE: {"schema": {"type": "string"}}}}
    out: dict[int | str, dict[str, Any]] = {200: ok}
    out.update({code: {"description": text} for code, text in described.items() if code != 429})
    if body:
        out.update(BODY_ERRORS)
    out.update(API_ERRORS)
    if 429 in described:
        out[429] = {"description": described[429]}
    return out


__all__ = ["SSE", "stream_responses"]
