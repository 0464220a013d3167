"""Credential and parameter normalisation for OpenAI (seed 001 §3.3, §3.5, §3.8).

Pure functions with no SDK import, shared by :class:`~kanawa.llm.openai.responses.OpenAIResponsesAdapter`
and the Dify model plugin (``app/openai_gpt5_responses``), whose settings arrive as strings from a form.

Decisions the seed leaves open:

- :func:`coerce_bool` accepts exactly ``True``/``False``, the integers ``1``/``0`` and the strings
  ``"true"``/``"false"``/``"1"``/``"0"``. String matching ignores case (``"True"`` is what Python's
  ``str(True)`` produces when a value is stringified on its way through a form) but nothing else:
  no surrounding whitespace, no ``"yes"``/``"on"``, no ``2`` or ``1.0``. Everything else is a
  ``ValueError`` naming the field.
- :func:`clamp_timeout` / :func:`clamp_retries` accept ints, integral floats and numeric strings
  (``" 300 "``, ``"300.0"``); booleans, blanks and junk fall back to the default; the result is
  clamped into range.
- :func:`normalize_base_url` appends ``/v1`` unless the path already ends with it (so
  ``https://example.com/openai/v1`` is kept as is).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from kanawa.types import JsonObject

__all__ = [
    "MAX_RETRIES_RANGE",
    "TIMEOUT_RANGE",
    "OpenAICredentials",
    "base_url_host",
    "clamp_retries",
    "clamp_timeout",
    "coerce_bool",
    "normalize_base_url",
    "validate_json_schema",
]

TIMEOUT_RANGE = (30, 900)
"""``request_timeout_seconds`` is clamped into this range (seed 001 §3.3)."""

MAX_RETRIES_RANGE = (0, 5)
"""``max_retries`` is clamped into this range (seed 001 §3.3)."""

_TRUE_STRINGS = frozenset({"true", "1"})
_FALSE_STRINGS = frozenset({"false", "0"})


def normalize_base_url(url: str | None) -> str | None:
    """Strip blanks and trailing slashes and make the path end with ``/v1``; empty gives ``None``."""
    if url is None:
        return None
    text = url.strip().rstrip("/")
    if not text:
        return None
    return text if text.endswith("/v1") else f"{text}/v1"


def base_url_host(url: str | None) -> str | None:
    """The host (and explicit port) of ``url`` — never its scheme, user info, path or query."""
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"//{url}")
    host = parts.hostname
    if host is None:
        return None
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port is not None else host


def _to_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    number: float
    if isinstance(value, float):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(number) or number != int(number):
        return None
    return int(number)


def _clamp(value: object, default: int, bounds: tuple[int, int]) -> int:
    low, high = bounds
    number = _to_int(value)
    if number is None:
        number = default
    return max(low, min(high, number))


def clamp_timeout(value: object, default: int = 300) -> int:
    """``request_timeout_seconds`` as an int in 30..900; invalid input gives ``default`` (clamped)."""
    return _clamp(value, default, TIMEOUT_RANGE)


def clamp_retries(value: object, default: int = 1) -> int:
    """``max_retries`` as an int in 0..5; invalid input gives ``default`` (clamped)."""
    return _clamp(value, default, MAX_RETRIES_RANGE)


def coerce_bool(value: object, *, field: str) -> bool:
    """Strict bool-like conversion (seed 001 §3.8); see the module docstring for the accepted table."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return value == 1
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in _TRUE_STRINGS:
            return True
        if lowered in _FALSE_STRINGS:
            return False
    shown = repr(value) if isinstance(value, str | int | float) and len(repr(value)) <= 40 else None
    raise ValueError(
        f"{field} must be a boolean (true/false, 1/0, 'true'/'false', '1'/'0'), "
        f"got {shown or type(value).__name__}"
    )


def validate_json_schema(value: object) -> JsonObject:
    """Validate the ``json_schema`` parameter (seed 001 §3.8) and return it as a new dict.

    Accepts a dict or its JSON text. It must be a JSON object with a ``schema`` field holding an
    object; ``name`` and ``description``, if present, must be strings; ``strict``, if present, must be
    bool-like and comes back as a real bool. Error messages never quote the schema itself.
    """
    parsed: object = value
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("json_schema is required when response_format is json_schema")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"json_schema is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            ) from None
    if not isinstance(parsed, dict):
        raise ValueError(f"json_schema must be a JSON object, got {type(parsed).__name__}")
    result: JsonObject = dict(parsed)
    schema = result.get("schema")
    if "schema" not in result:
        raise ValueError("json_schema must have a 'schema' field (the JSON Schema of the answer)")
    if not isinstance(schema, dict):
        raise ValueError(f"json_schema 'schema' field must be a JSON object, got {type(schema).__name__}")
    for key in ("name", "description"):
        if key in result and not isinstance(result[key], str):
            raise ValueError(f"json_schema '{key}' field must be a string")
    if "strict" in result:
        result["strict"] = coerce_bool(result["strict"], field="json_schema.strict")
    return result


def _optional_text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


@dataclass(frozen=True, slots=True)
class OpenAICredentials:
    """OpenAI credentials as the Dify provider form gives them (seed 001 §3.3), normalised.

    The key is excluded from ``repr`` so a logged credentials object never shows it.
    """

    api_key: str = field(repr=False)
    organization: str | None = None
    base_url: str | None = None
    timeout: int = 300
    max_retries: int = 1

    @classmethod
    def from_dict(cls, credentials: Mapping[str, object]) -> OpenAICredentials:
        """Build from ``openai_api_key``, ``openai_organization``, ``openai_api_base``,
        ``request_timeout_seconds`` and ``max_retries``; a missing or blank key is a ``ValueError``."""
        api_key = _optional_text(credentials.get("openai_api_key"))
        if api_key is None:
            raise ValueError("openai_api_key is required")
        base = credentials.get("openai_api_base")
        return cls(
            api_key=api_key,
            organization=_optional_text(credentials.get("openai_organization")),
            base_url=normalize_base_url(base if isinstance(base, str) else None),
            timeout=clamp_timeout(credentials.get("request_timeout_seconds")),
            max_retries=clamp_retries(credentials.get("max_retries")),
        )

    @property
    def use_custom_base_url(self) -> bool:
        """True when a base URL other than the SDK default was configured."""
        return self.base_url is not None

    @property
    def base_url_host(self) -> str | None:
        """The configured base URL's host, for audit records."""
        return base_url_host(self.base_url)
