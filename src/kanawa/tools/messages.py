"""What the model is told when a tool call fails (seed 000 §6, seed 001 §4.7).

The strings the seeds give are kept word for word (grep for them): ``there is not a tool named``,
``parameter option validation error``, ``tool invoke error: failed to execute tool``. The others are
worded so a model can act on them: what was wrong and what to change. None of them echoes argument
values, exception text or Python internals — those stay in ``ToolResult.detail`` for the trace.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import ValidationError

from kanawa.types import JsonValue

__all__ = [
    "DUPLICATE_FAILURE_MESSAGE",
    "EXECUTION_ERROR_MESSAGE",
    "OPTION_ERROR_PREFIX",
    "PARSE_ERROR_MESSAGE",
    "UNKNOWN_TOOL_PREFIX",
    "describe_exception",
    "option_problem",
    "timeout_message",
    "unknown_tool_message",
    "validation_message",
]

UNKNOWN_TOOL_PREFIX = "there is not a tool named"
EXECUTION_ERROR_MESSAGE = "tool invoke error: failed to execute tool"
OPTION_ERROR_PREFIX = "parameter option validation error:"
PARSE_ERROR_MESSAGE = (
    "tool arguments parse error: the arguments could not be parsed and the tool was not called; "
    'they must be a JSON object string such as {"name": "value"}'
)
DUPLICATE_FAILURE_MESSAGE = (
    "duplicate tool call skipped: an identical call (same tool, same arguments) already failed in this "
    "run, so it was not run again; change the arguments or try a different approach"
)
ARGUMENT_ERROR_PREFIX = "tool argument validation error:"

_MAX_ERRORS = 8
_OPTION_ERROR_TYPES = frozenset({"literal_error", "enum"})


def unknown_tool_message(name: str) -> str:
    return f"{UNKNOWN_TOOL_PREFIX} {name}"


def timeout_message(seconds: float) -> str:
    return f"tool invoke error: the tool did not finish within {seconds:g} seconds"


def describe_exception(exc: BaseException) -> str:
    """``module.Type: message`` for ``ToolResult.detail`` (trace only, never the model)."""
    cls = type(exc)
    qualified = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    text = str(exc)
    return f"{qualified}: {text}" if text else qualified


def _expected(options: Sequence[JsonValue]) -> str:
    shown = [repr(o) for o in options]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def option_problem(parameter: str, options: Sequence[JsonValue]) -> str:
    """One option mismatch: ``'unit' must be one of 'c' or 'f'``."""
    return f"{parameter!r} must be one of {_expected(options)}"


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "arguments"


def validation_message(
    error: ValidationError | None, *, option_problems: Sequence[str] = (), checked: Collection[str] = ()
) -> str:
    """A concise, model-actionable summary of invalid tool arguments.

    ``option_problems`` are mismatches the invoker found against the schema's ``enum`` lists for the
    top-level parameters named in ``checked`` (pydantic's own reports for those are dropped). Option
    mismatches come first under :data:`OPTION_ERROR_PREFIX`; other problems follow as
    ``path: what is wrong``.
    """
    options = list(option_problems)
    others: list[str] = []
    details = error.errors(include_url=False, include_input=False) if error is not None else []
    for detail in details[:_MAX_ERRORS]:
        loc = detail["loc"]
        kind = detail["type"]
        if kind in _OPTION_ERROR_TYPES:
            if len(loc) == 1 and loc[0] in checked:
                continue
            expected = (detail.get("ctx") or {}).get("expected", "one of the allowed options")
            options.append(f"{_location(loc)!r} must be one of {expected}")
        elif kind == "missing":
            others.append(f"{_location(loc)}: required argument is missing")
        elif kind == "extra_forbidden":
            others.append(f"{_location(loc)}: unexpected argument (not a parameter of this tool)")
        else:
            others.append(f"{_location(loc)}: {detail['msg']}")
    if len(details) > _MAX_ERRORS:
        others.append(f"and {len(details) - _MAX_ERRORS} more problem(s)")
    lines = []
    if options:
        lines.append(f"{OPTION_ERROR_PREFIX} {'; '.join(options)}")
    if others:
        lines.append(f"{ARGUMENT_ERROR_PREFIX} {'; '.join(others)}")
    return "\n".join(lines)
