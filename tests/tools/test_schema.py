"""Schema cleaning (seed 002 §3-2: the JSON schema offered to the model is built once, clean)."""

from __future__ import annotations

from typing import Any

from kanawa.tools.schema import clean_schema, make_strict, parse_docstring
from kanawa.types import JsonObject


def test_titles_are_removed_but_a_property_named_title_is_kept() -> None:
    raw: JsonObject = {
        "title": "Args",
        "type": "object",
        "properties": {"title": {"title": "Title", "type": "string"}},
        "required": ["title"],
    }
    assert clean_schema(raw) == {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
    }


def test_refs_are_inlined_and_siblings_override() -> None:
    raw: JsonObject = {
        "$defs": {"Color": {"title": "Color", "type": "string", "enum": ["r", "g"]}},
        "type": "object",
        "properties": {"c": {"$ref": "#/$defs/Color", "description": "a colour", "default": "r"}},
    }
    cleaned = clean_schema(raw)
    assert cleaned["properties"] == {
        "c": {"type": "string", "description": "a colour", "enum": ["r", "g"], "default": "r"}
    }
    assert "$defs" not in cleaned


def test_const_becomes_single_value_enum() -> None:
    cleaned = clean_schema({"type": "object", "properties": {"k": {"const": "x", "type": "string"}}})
    assert cleaned["properties"] == {"k": {"type": "string", "enum": ["x"]}}


def test_defaults_and_enums_are_not_rewritten() -> None:
    default: JsonObject = {"title": "keep", "properties": {"a": 1}}
    cleaned = clean_schema({"type": "object", "properties": {"d": {"type": "object", "default": default}}})
    assert cleaned["properties"] == {"d": {"type": "object", "default": default}}


def test_object_without_properties_gets_empty_properties() -> None:
    assert clean_schema({"type": "object"}) == {"type": "object", "properties": {}}


def test_strict_requires_every_property_at_every_level() -> None:
    schema: JsonObject = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "default": 1},
            "properties": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
        "required": [],
    }
    strict = make_strict(schema)
    assert strict["required"] == ["a", "properties"]
    assert strict["additionalProperties"] is False
    nested: Any = strict["properties"]["properties"]  # type: ignore[index,call-overload]
    assert nested["required"] == ["x"]
    assert nested["additionalProperties"] is False
    assert schema["required"] == []  # the input is not modified


def test_docstring_numpy_multiple_names_share_a_description() -> None:
    def f(x: int, y: int) -> int:
        """Add.

        Parameters
        ----------
        x, y : int
            the operands
        """
        return x + y

    description, params = parse_docstring(f)
    assert description == "Add."
    assert params == {"x": "the operands", "y": "the operands"}
