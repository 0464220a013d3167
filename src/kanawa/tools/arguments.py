"""``parse_tool_arguments``: the fail-closed argument parser (seed 000 §6.1, seed 001 §4.7).

Contract, word for word from the seeds:

* ``""`` → ``{}``;
* a JSON object string → that object as a ``dict``;
* a non-string, invalid JSON, or JSON that is not an object → :class:`ToolArgumentsError`.

Decisions where the seeds are silent:

* A whitespace-only string is treated like ``""`` (JSON itself calls surrounding whitespace
  insignificant, and some providers stream a lone newline for a call without arguments).
* ``NaN``/``Infinity`` literals are refused: they are not JSON, and a value that does not survive a
  ``json.dumps``/``json.loads`` round trip must never reach a tool.
* Error messages say what was wrong (type, JSON syntax position) but never echo the arguments.
"""

from __future__ import annotations

import json
from typing import NoReturn, cast

from pydantic import BaseModel, ValidationError

from kanawa.tools.base import Tool
from kanawa.tools.errors import ToolArgumentsError, ToolValidationError
from kanawa.tools.messages import validation_message
from kanawa.types import JsonValue

__all__ = ["parse_tool_arguments", "validate_arguments"]

_JSON_KIND = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


class _NonJsonConstantError(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``, which Python's decoder accepts and JSON does not."""


def _refuse_constant(name: str) -> NoReturn:
    raise _NonJsonConstantError(f"{name} is not a JSON value")


_decoder = json.JSONDecoder(parse_constant=_refuse_constant)


def parse_tool_arguments(raw: object) -> dict[str, JsonValue]:
    """Parse a model's raw tool-call arguments into a JSON object.

    Raises :class:`ToolArgumentsError` (and nothing else) for anything that is not a JSON object string.
    """
    if not isinstance(raw, str):
        raise ToolArgumentsError(f"tool arguments must be a JSON object string, not {type(raw).__name__}")
    if not raw or raw.isspace():
        return {}
    try:
        value = _decoder.decode(raw)
    except json.JSONDecodeError as exc:
        raise ToolArgumentsError(
            f"tool arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except _NonJsonConstantError as exc:
        raise ToolArgumentsError(f"tool arguments are not valid JSON ({exc})") from None
    except ValueError:  # an integer beyond Python's int/str digit limit
        raise ToolArgumentsError("tool arguments are not valid JSON (a number has too many digits)") from None
    except RecursionError:
        raise ToolArgumentsError("tool arguments are not valid JSON (nested too deeply)") from None
    if type(value) is not dict:
        kind = "null" if value is None else _JSON_KIND.get(type(value), "value")
        raise ToolArgumentsError(f"tool arguments must be a JSON object, not a JSON {kind}")
    return cast("dict[str, JsonValue]", value)


def validate_arguments(tool: Tool, raw: object) -> BaseModel:
    """Parse and validate ``raw`` arguments for ``tool`` without running it.

    For callers outside the invoker (previews, guardrails, tests). Raises :class:`ToolArgumentsError`
    when ``raw`` is not a JSON object string (a ``dict`` is accepted as already parsed) and
    :class:`ToolValidationError` — with the same model-facing message the invoker would send — when
    the arguments do not fit the tool's parameters.
    """
    args = raw if isinstance(raw, dict) else parse_tool_arguments(raw)
    try:
        return tool.args_model.model_validate(args)
    except ValidationError as exc:
        raise ToolValidationError(validation_message(exc), tool_name=tool.name) from None
