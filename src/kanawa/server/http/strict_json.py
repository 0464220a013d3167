"""JSON bodies every door reads the same way: a value no protocol can carry is refused wherever it
sits in the body, before a handler sees it.

Python's ``json`` reads ``NaN``, ``Infinity``, ``1e999`` (as an infinite float) and lone surrogates
(``"\\ud800"``) without complaint. A door whose model reads a field refuses such a value there (422);
a field it does not read (an unknown key, ``metadata`` it passes over) let it through, and the run
started. One rule for every door (issue 30): :func:`unfit` finds the first such value anywhere in a
parsed body, and :class:`StrictJsonRoute` — the ``route_class`` of the JSON-reading routers — turns
it into FastAPI's own invalid-JSON error, which each door renders as its 422 in its own shape. A2A
(:mod:`~kanawa.server.http.protocols.a2a.validation`) answers the same finding as ``-32602``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Coroutine
from typing import Any, Final

from fastapi import Request, Response
from fastapi.routing import APIRoute

MAX_PATH: Final = 120
"""The longest field path an error names (a deep one is cut at its start)."""
NOT_JSON: Final = "JSON cannot carry it"


def _segment(key: object) -> str:
    if isinstance(key, int):
        return f"[{key}]"
    text = str(key).encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    return "." + (text if len(text) <= 40 else text[:37] + "...")


def _path(parts: list[object]) -> str:
    text = "".join(_segment(part) for part in parts)
    return text if len(text) <= MAX_PATH else "..." + text[-MAX_PATH:]


def _lone_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def unfit(value: object, root: str) -> str | None:
    """Where in ``value`` (a parsed JSON document; its name ``root``) the first value no protocol
    can carry is — a lone surrogate in a string or a key, a number that is not finite — and what it
    is; ``None`` when there is none. The message holds the path (keys escaped), never the value.
    Walked without recursion: a document nested as deep as the parser allows is walked as well."""
    stack: list[tuple[object, list[object]]] = [(value, [])]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _lone_surrogate(item):
                return f"{root}{_path(where)} holds a lone surrogate (text must be valid Unicode)"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{root}{_path(where)} holds a number that is not finite (NaN or Infinity): {NOT_JSON}"
        elif isinstance(item, dict):
            for key, inner in item.items():
                if _lone_surrogate(key):
                    return (
                        f"{root}{_path(where)} has a key with a lone surrogate (text must be valid Unicode)"
                    )
                stack.append((inner, [*where, key]))
        elif isinstance(item, list):
            stack.extend((inner, [*where, index]) for index, inner in enumerate(item))
    return None


class StrictJsonRequest(Request):
    """A request whose :meth:`json` refuses what :func:`unfit` finds, as invalid JSON."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            value = json.loads(await self.body())
            problem = unfit(value, "body")
            if problem is not None:  # FastAPI answers it as its own invalid-JSON error (a 422)
                raise json.JSONDecodeError(problem, "", 0)
            self._json = value
        return self._json


class StrictJsonRoute(APIRoute):
    """A route whose JSON body is read by :class:`StrictJsonRequest` (module docstring)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            request.__class__ = StrictJsonRequest  # the same request, read strictly: nothing copied
            return await handler(request)

        return strict


__all__ = ["StrictJsonRequest", "StrictJsonRoute", "unfit"]
