"""Ready-made redactors for :class:`~kanawa.trace.events.Tracer` (``redact=``).

A redactor takes a :class:`TraceEvent` and returns a rewritten one, or ``None`` to drop it. It runs
before any sink sees the event, so what it removes never reaches a file, a collector or a log
(DESIGN principle 5: API keys, Authorization headers and tool payloads leak nowhere).

* :func:`redact_secrets` masks credentials wherever they appear: values that look like API keys or
  bearer tokens (``sk-…``, ``sk-ant-…``, ``AIza…``, ``Bearer …``, GitHub/Slack tokens) and anything
  stored under a key named like a credential (``api_key``, ``authorization``, ``password``,
  ``secret``, ``token``, ``x-api-key`` …). JSON text (tool arguments are raw JSON strings) is parsed,
  redacted and re-encoded so a key inside ``{"api_key": "…"}`` is caught by name too.
* :func:`drop_payloads` removes ``result`` and tool arguments/outputs, keeping the timing, token and
  error structure — for deployments that must not store user content at all.
* :func:`chain` composes redactors left to right.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Final

from kanawa.trace.events import Redactor, TraceEvent
from kanawa.types import JsonValue

MASK: Final = "[REDACTED]"

_SECRET_VALUE = re.compile(
    r"""
      \bsk-ant-[A-Za-z0-9_\-]{8,}            # Anthropic
    | \bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}   # OpenAI (legacy, project, service account)
    | \bAIza[0-9A-Za-z_\-]{20,}              # Google API keys
    | \bgh[pousr]_[A-Za-z0-9]{20,}           # GitHub tokens
    | \bxox[abprs]-[A-Za-z0-9\-]{10,}        # Slack tokens
    """,
    re.VERBOSE,
)
_BEARER = re.compile(r"\b(Bearer)\s+[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE)

_SECRET_KEYS: Final = frozenset(
    {
        "authorization",
        "proxy_authorization",
        "cookie",
        "set_cookie",
        "password",
        "passwd",
        "pwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "x_api_key",
        "x_goog_api_key",
        "credentials",
        "private_key",
    }
)
_SECRET_SUFFIXES: Final = ("_api_key", "_apikey", "_secret", "_password", "_token", "_private_key")

PAYLOAD_KEYS: Final = frozenset(
    {"arguments", "args", "input", "output", "content", "messages", "prompt", "response", "result", "text"}
)
"""Keys :func:`drop_payloads` removes from ``data`` (tool arguments, outputs, message bodies)."""


def is_secret_key(name: str) -> bool:
    """Whether a mapping key names a credential (``api_key``, ``X-Api-Key``, ``client_secret`` …).

    Counts such as ``max_tokens`` or ``input_tokens`` are not secrets: only an exact ``token`` or a
    ``_token`` suffix is.
    """
    key = name.strip().lower().replace("-", "_")
    return key in _SECRET_KEYS or key.endswith(_SECRET_SUFFIXES)


def mask_text(text: str) -> str:
    """Mask credential-looking substrings of ``text``; JSON object/array text is redacted structurally."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            parsed: JsonValue = json.loads(text)
        except ValueError:
            pass
        else:
            redacted = redact_value(parsed)
            if redacted != parsed:
                return json.dumps(redacted, ensure_ascii=False)
            return text
    text = _SECRET_VALUE.sub(MASK, text)
    return _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)


def redact_value(value: JsonValue, *, _depth: int = 0) -> JsonValue:
    """Return ``value`` with secrets masked (containers are copied, never mutated).

    Strings are scanned by :func:`mask_text`; values under credential-named keys are replaced by
    :data:`MASK` whatever their type (``None`` stays ``None``).
    """
    if isinstance(value, str):
        return mask_text(value)
    if _depth > 32:
        return value
    if isinstance(value, dict):
        return {
            key: (MASK if item is not None else None)
            if is_secret_key(key)
            else redact_value(item, _depth=_depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact_value(item, _depth=_depth + 1) for item in value]
    return value


def redact_secrets(event: TraceEvent) -> TraceEvent:
    """Mask API keys, bearer tokens and credential-named fields in ``result``, ``error`` and ``data``."""
    result = redact_value(event.result)
    error = mask_text(event.error) if event.error is not None else None
    data = redact_value(event.data)
    if result == event.result and error == event.error and data == event.data:
        return event
    assert isinstance(data, dict)
    return dataclasses.replace(event, result=result, error=error, data=data)


def drop_payloads(event: TraceEvent) -> TraceEvent:
    """Remove ``result`` and the :data:`PAYLOAD_KEYS` of ``data`` (tool arguments, outputs, texts)."""
    if event.result is None and not any(key in PAYLOAD_KEYS for key in event.data):
        return event
    data = {key: value for key, value in event.data.items() if key not in PAYLOAD_KEYS}
    return dataclasses.replace(event, result=None, data=data)


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


__all__ = [
    "MASK",
    "PAYLOAD_KEYS",
    "chain",
    "drop_payloads",
    "is_secret_key",
    "mask_text",
    "redact_secrets",
    "redact_value",
]
