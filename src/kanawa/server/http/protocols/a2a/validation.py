"""Values no A2A request may carry, refused before the request reaches a parser, a handler or a run.

JSON as Python reads it can hold two things that A2A's types (protobuf's JSON, UTF-8 strings) cannot
carry and that broke deep inside: a **lone surrogate** (``"\\ud800"``, in text, an id, a metadata key
or value: the protobuf parser, a UTF-8 encode or the run store failed on it with Python's exception
text) and a **non-finite number** (``NaN``, ``Infinity``, ``1e999``: a data part or metadata failed
when written back as JSON, after a run had started). Both are the client's mistake: the request is
answered ``-32602`` (invalid params) naming the field, with nothing of a Python exception in it, and
no traceback is logged. Such a value in the request's envelope is ``-32600`` (invalid request); in
its ``id``, answered with a ``null`` id, as JSON-RPC answers an id it cannot echo.
"""

from __future__ import annotations

import json
import math
from typing import Final

from a2a.utils.errors import A2AError, InvalidParamsError, InvalidRequestError

MAX_PATH: Final = 120
"""The longest field path an error names (a deep one is cut at its start)."""


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
    """Where in ``value`` (a parsed JSON document; its name ``root``) the first value A2A cannot
    carry is, and what it is: ``None`` when there is none. Walked without recursion: a document
    nested as deep as the JSON parser allows is walked as well as a flat one."""
    stack: list[tuple[object, list[object]]] = [(value, [])]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _lone_surrogate(item):
                return f"{root}{_path(where)} holds a lone surrogate (text must be valid Unicode)"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{root}{_path(where)} holds a number JSON cannot carry (NaN or Infinity)"
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


def unreadable(exc: ValueError | RecursionError) -> str:
    """What a JSON-RPC parse error says of a body ``json.loads`` refused: where the JSON is broken,
    or what the body holds that it will not read — never the parser's own words (a recursion
    error's, the integer digit limit's advice to call ``sys.set_int_max_str_digits``)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"the body is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "the body's JSON is nested deeper than it is read"
    if isinstance(exc, UnicodeDecodeError):
        return "the body is not UTF-8"
    return "the body's JSON holds a number too long to read"


def refusal(payload: object) -> tuple[A2AError, bool] | None:
    """The error a JSON-RPC request ``payload`` is refused with for a value it cannot carry, and
    whether its ``id`` can be echoed in the answer; ``None`` for a request free of them. A body
    that is not an object (a batch, a bare value) is an invalid request: A2A serves no batches."""
    if not isinstance(payload, dict):
        return InvalidRequestError(
            message="a JSON-RPC request is a JSON object (batches are not served)"
        ), False
    problem = unfit(payload.get("id"), "id")
    if problem is not None:
        return InvalidRequestError(message=problem), False
    problem = unfit(payload.get("params"), "params")
    if problem is not None:
        return InvalidParamsError(message=problem), True
    for key, value in payload.items():
        problem = None if key in {"id", "params"} else unfit({key: value}, "request")
        if problem is not None:
            return InvalidRequestError(message=problem), True
    return None


__all__ = ["refusal", "unfit", "unreadable"]
