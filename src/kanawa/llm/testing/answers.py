"""How :class:`~kanawa.llm.testing.models.TestLLM` words its final answer from the tool results it saw.

Two helpers, kept out of ``testing.py`` so that module stays about the adapters:

* :func:`tool_results_summary` — one line naming each tool result, oldest first:
  ``calculator → 403.0; current_time → 2026-01-01T09:00:00+09:00; read_file ✗ tool invoke error: …``
  (``→`` a result, ``✗`` an error; whitespace collapsed, each text cut to 60 characters).
* :func:`with_text_in_first_string_field` — puts that line into a schema-valid structured answer, so a
  structured final output says what the run found instead of a generated word.

Neither knows about any particular tool or output type: the choice of field is made from the schema.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kanawa.llm.testing.schema_values import resolve_ref
from kanawa.types import JsonObject, JsonValue, ToolMessage

RESULT_CHARS = 60
"""How much of each tool result the summary quotes."""

_STRING_CONSTRAINTS = ("enum", "const", "pattern", "format")
_COMBINATORS = ("allOf", "anyOf", "oneOf", "not", "if")
"""A top level using these is not a plain object schema: its answer is left as generated."""


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…" if limit > 0 else ""


def tool_results_summary(results: Sequence[ToolMessage]) -> str:
    """``name → text`` (or ``name ✗ text`` for an error) per result, joined with ``"; "``; ``""`` when
    there are none."""
    parts = []
    for message in results:
        name = message.name or message.tool_call_id
        text = _clip(" ".join(message.text.split()), RESULT_CHARS)
        parts.append(f"{name} {'✗' if message.is_error else '→'} {text}")
    return "; ".join(parts)


def _resolved(root: JsonObject, node: JsonValue) -> JsonObject | None:
    """``node`` as a schema object, following a chain of ``$ref`` (``None`` if it is not one)."""
    for _ in range(32):
        if not isinstance(node, dict):
            return None
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        try:
            node = resolve_ref(root, ref)
        except ValueError:
            return None
    return None


def _is_free_text(schema: JsonObject) -> bool:
    """A plain string field: typed ``string`` and not restricted to particular values or shapes."""
    kind = schema.get("type")
    is_string = kind == "string" or (isinstance(kind, list) and "string" in kind)
    return is_string and not any(key in schema for key in _STRING_CONSTRAINTS)


def _bound(schema: JsonObject, key: str) -> int | None:
    value = schema.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def with_text_in_first_string_field(schema: JsonObject, value: JsonValue, text: str) -> JsonValue:
    """``value`` with ``text`` in the first top-level property that is free text (see
    :func:`_is_free_text`) and whose length bounds admit it.

    ``schema`` is the response schema ``value`` was generated for; a top-level ``$ref`` is followed.
    ``text`` is cut to the property's ``maxLength`` (ending in ``…``); a property whose ``minLength`` it
    cannot reach is skipped, and so is one a ``patternProperties`` entry also governs; a property absent
    from ``value`` is added only when ``maxProperties``, ``dependentRequired`` and ``propertyNames`` cannot
    object. When no property fits, ``value`` is not an object or the top level combines schemas
    (``allOf``, ``anyOf``, …), ``value`` is returned unchanged — so the result is still valid against
    ``schema`` whenever ``value`` was.
    """
    top = _resolved(schema, schema)
    if top is None or not isinstance(value, dict) or any(key in top for key in _COMBINATORS):
        return value
    properties = top.get("properties")
    patterns = top.get("patternProperties")
    dependent = top.get("dependentRequired")
    room = _bound(top, "maxProperties")
    for name, raw in (properties if isinstance(properties, dict) else {}).items():
        field = _resolved(schema, raw)
        if field is None or not _is_free_text(field):
            continue
        if isinstance(patterns, dict) and any(_search(pattern, name) for pattern in patterns):
            continue  # a patternProperties schema applies too: not a field we fully understand
        high, low = _bound(field, "maxLength"), _bound(field, "minLength") or 0
        fitted = text if high is None else _clip(text, high)
        if not fitted or len(fitted) < low:
            continue
        if name not in value:
            no_room = room is not None and len(value) >= room
            if no_room or (isinstance(dependent, dict) and name in dependent) or "propertyNames" in top:
                continue
        return {**value, name: fitted}
    return value


def _search(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return True  # unreadable pattern: assume it applies, so the field is left alone


__all__ = ["tool_results_summary", "with_text_in_first_string_field"]
