"""Ready-made redactors for :class:`~kanawa.trace.events.Tracer` (``redact=``).

A redactor takes a :class:`TraceEvent` and returns a rewritten one, or ``None`` to drop it. It runs
before any sink sees the event, so what it removes never reaches a file, a collector or a log
(DESIGN principle 5).

* :func:`redact_secrets` (``KANAWA_TRACE_REDACT=secrets``, the default) masks credentials in every
  field that can carry text — ``result``, ``error`` and ``data`` — with the one rule of
  :mod:`kanawa.secrets`: the configured keys themselves, key-shaped text of every provider, and values
  under credential-named keys (JSON text such as tool arguments is parsed and masked structurally).
* :func:`drop_payloads` (``payloads``) keeps only what cannot carry user or tool content: an
  **allow-list** of fields (timing, token counts, ids, names) and of ``data`` keys
  (:data:`SAFE_DATA_KEYS`, scalar values only). ``result`` is dropped, ``error`` becomes
  :data:`~kanawa.secrets.MASK` (the failure's kind stays in ``data``: ``error_type`` /
  ``error_kind``), and a ``tool`` or ``call_id`` that is not identifier-shaped (model output can
  put anything there) is masked. A field added to events later is dropped until it is listed here.
* :func:`chain` composes redactors left to right.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final, cast

from kanawa.secrets import MASK, mask, mask_value
from kanawa.trace.events import Redactor, TraceEvent
from kanawa.types import JsonValue

SAFE_DATA_KEYS: Final = frozenset(
    {
        "provider",
        "tools",
        "stream",
        "response_schema",
        "stop_reason",
        "tool_calls",
        "reasoning_tokens",
        "cached_tokens",
        "cache_write_tokens",
        "response_id",
        "error_type",
        "error_kind",
        "status_code",
        "retryable",
        "retry_after",
        "termination_reason",
        "steps",
        "requests",
        "parent_step",
        "depth",
    }
)
"""The ``data`` keys :func:`drop_payloads` keeps (counts, flags, enumerations, ids — never content)."""
SAFE_DATA_IDS: Final = frozenset({"parent_run_id", "parent_call_id", "target"})
"""``data`` keys naming a run, a tool call or an agent: kept when identifier-shaped, else masked (a
call id comes from model output), so a nested run can still be placed under its parent."""

_IDENTIFIER: Final = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")


def redact_secrets(event: TraceEvent) -> TraceEvent:
    """Mask API keys, bearer tokens and credential-named fields in ``result``, ``error`` and ``data``."""
    result = cast(JsonValue, mask_value(event.result))  # JSON in, JSON out
    error = mask(event.error) if event.error is not None else None
    data = mask_value(event.data)
    if result == event.result and error == event.error and data == event.data:
        return event
    assert isinstance(data, dict)
    return dataclasses.replace(event, result=result, error=error, data=data)


def drop_payloads(event: TraceEvent) -> TraceEvent:
    """Keep only the allow-listed, content-free parts of ``event`` (module docstring)."""
    data: dict[str, JsonValue] = {
        key: value
        for key, value in event.data.items()
        if key in SAFE_DATA_KEYS and (value is None or isinstance(value, bool | int | float | str))
    }
    for key in SAFE_DATA_IDS.intersection(event.data):
        value = event.data[key]
        if isinstance(value, str):
            data[key] = _identifier(value)
    # built field by field rather than with dataclasses.replace, which looks the fields up anew on
    # every call: a served run's every trace event passes here (its timeline's trace chunks)
    return TraceEvent(
        event.event,
        event.session,
        event.agent,
        time=event.time,
        run_id=event.run_id,
        step=event.step,
        tool=_identifier(event.tool),
        call_id=_identifier(event.call_id),
        model=event.model,
        tok_prompt=event.tok_prompt,
        tok_completion=event.tok_completion,
        duration_ms=event.duration_ms,
        result=None,
        error=None if event.error is None else MASK,
        data=data,
    )


def _identifier(value: str | None) -> str | None:
    return value if value is None or _IDENTIFIER.fullmatch(value) else MASK


def chain(*redactors: Redactor) -> Redactor:
    """Apply ``redactors`` in order; the first that returns ``None`` drops the event."""

    def chained(event: TraceEvent) -> TraceEvent | None:
        current: TraceEvent | None = event
        for redactor in redactors:
            if current is None:
                return None
            current = redactor(current)
        return current

    return chained


__all__ = ["SAFE_DATA_KEYS", "chain", "drop_payloads", "redact_secrets"]
