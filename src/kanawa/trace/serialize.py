"""Turning :class:`TraceEvent` objects into JSONL lines shaped like seed 002 App. C.

A line looks like::

    {"event":"tool_end","time":"2025-05-23T04:14:33.892Z","session":"f3a…","agent":"DraftAgent",
     "tool":"generate_draft","tok_prompt":812,"tok_completion":74,"duration_ms":940,"result":{…}}

plus ``run_id``, ``step``, ``call_id``, ``model`` and ``data`` when they are set. Fields that are
``None`` (and an empty ``run_id``/``data``) are left out, so lines stay short and a reader can tell
"not applicable" from a real value.

Serialising must never fail: a trace is a side channel and a run may not crash because a tool returned
something exotic. Values JSON cannot hold become a truncated ``repr``; non-finite floats become strings.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Final

from kanawa.trace.events import TraceEvent
from kanawa.types import JsonValue

REPR_LIMIT: Final = 200
"""Longest ``repr`` kept for a value that JSON cannot represent."""

FIELD_ORDER: Final = (
    "event",
    "time",
    "session",
    "agent",
    "run_id",
    "step",
    "tool",
    "call_id",
    "model",
    "tok_prompt",
    "tok_completion",
    "duration_ms",
    "result",
    "error",
    "data",
)
"""Key order of a JSONL line: App. C's keys first, in App. C's order, then ours."""


_last_second: tuple[int, str] = (0, "1970-01-01T00:00:00")
"""The last whole second :func:`iso_time` formatted: every chunk of a stream stamps the time, and
consecutive stamps share their second, so only the milliseconds are formatted anew (one tuple,
replaced whole: safe across threads)."""


def iso_time(timestamp: float) -> str:
    """Epoch seconds → ISO-8601 UTC with milliseconds and ``Z`` (``2025-05-23T04:14:33.892Z``):
    exactly ``datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")`` — the
    timestamp rounded to microseconds half to even, then cut to milliseconds — only faster."""
    global _last_second
    fraction, whole = math.modf(timestamp)
    micros = round(fraction * 1_000_000)
    second = int(whole)
    if micros >= 1_000_000:
        second, micros = second + 1, micros - 1_000_000
    elif micros < 0:
        second, micros = second - 1, micros + 1_000_000
    cached_second, prefix = _last_second
    if cached_second != second:
        prefix = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        if len(prefix) != 19:  # a year before 1000 or after 9999: the library's own form
            moment = datetime.fromtimestamp(timestamp, UTC)
            return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        _last_second = (second, prefix)
    return f"{prefix}.{micros // 1000:03d}Z"


def parse_iso_time(text: str) -> float:
    """The inverse of :func:`iso_time`; accepts any ISO-8601 form, naive times are taken as UTC.

    Raises :class:`ValueError` for text that is not a timestamp.
    """
    moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def safe_repr(value: object, *, limit: int = REPR_LIMIT) -> str:
    """``repr(value)`` cut to ``limit`` characters; never raises (a broken ``__repr__`` included)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<unrepresentable {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_json_value(value: object, *, _depth: int = 0) -> JsonValue:
    """Coerce ``value`` into plain JSON data: containers are copied, everything else that JSON cannot
    hold becomes :func:`safe_repr`. Used only when the fast path in :func:`dumps_record` fails."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if _depth > 32:
        return safe_repr(value)
    if isinstance(value, dict):
        return {str(k): to_json_value(v, _depth=_depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(v, _depth=_depth + 1) for v in value]
    return safe_repr(value)


def event_to_record(event: TraceEvent) -> dict[str, JsonValue]:
    """The JSON object for one event, keys in :data:`FIELD_ORDER`, ``None``/empty fields omitted.

    ``duration_ms`` is rounded to microseconds. Nothing is copied: ``result`` and ``data`` are the
    event's own objects, serialised later by :func:`dumps_record`.
    """
    record: dict[str, JsonValue] = {
        "event": event.event,
        "time": iso_time(event.time),
        "session": event.session,
        "agent": event.agent,
    }
    if event.run_id:
        record["run_id"] = event.run_id
    if event.step is not None:
        record["step"] = event.step
    if event.tool is not None:
        record["tool"] = event.tool
    if event.call_id is not None:
        record["call_id"] = event.call_id
    if event.model is not None:
        record["model"] = event.model
    if event.tok_prompt is not None:
        record["tok_prompt"] = event.tok_prompt
    if event.tok_completion is not None:
        record["tok_completion"] = event.tok_completion
    if event.duration_ms is not None:
        record["duration_ms"] = round(event.duration_ms, 3)
    if event.result is not None:
        record["result"] = event.result
    if event.error is not None:
        record["error"] = event.error
    if event.data:
        record["data"] = event.data
    return record


def dumps_record(record: dict[str, JsonValue]) -> str:
    """One compact JSON line (no trailing newline, non-ASCII kept as is). Never raises.

    The fast path is a plain ``json.dumps``; if the record holds something JSON cannot encode (an
    object, a cycle, ``NaN``, a tuple key), it is coerced with :func:`to_json_value` and retried.
    """
    try:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        coerced = {key: to_json_value(value) for key, value in record.items()}
        return json.dumps(coerced, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def event_to_line(event: TraceEvent) -> str:
    """:func:`event_to_record` then :func:`dumps_record`: the exact line a JSONL sink writes."""
    return dumps_record(event_to_record(event))


__all__ = [
    "FIELD_ORDER",
    "dumps_record",
    "event_to_line",
    "event_to_record",
    "iso_time",
    "parse_iso_time",
    "safe_repr",
    "to_json_value",
]
