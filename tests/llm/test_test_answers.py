"""How TestLLM's structured answer gets the tool summary: only into a field the text can validate
against, and never in a way that breaks the schema the value was generated for."""

from __future__ import annotations

import pytest

from kanawa.llm.testing.answers import tool_results_summary, with_text_in_first_string_field
from kanawa.types import JsonObject, ToolMessage

TEXT = "calculator → 403.0"


def _object(**properties: JsonObject) -> JsonObject:
    return {"type": "object", "properties": dict(properties)}


def test_summary_is_empty_without_results_and_falls_back_to_the_call_id() -> None:
    assert tool_results_summary([]) == ""
    assert tool_results_summary([ToolMessage("call_9", " a\n\tb ")]) == "call_9 → a b"


def test_the_first_free_text_field_gets_the_text() -> None:
    schema = _object(
        a={"type": "string", "enum": ["x"]},
        b={"type": "string", "const": "y"},
        c={"type": "string", "format": "email"},
        d={"type": "integer"},
        e={"type": ["string", "null"]},
        f={"type": "string"},
    )
    value = {"a": "x", "b": "y", "c": "q@example.com", "d": 1, "e": None, "f": "golf"}
    assert with_text_in_first_string_field(schema, value, TEXT) == {**value, "e": TEXT}


@pytest.mark.parametrize(("limit", "expected"), [(5, "calc…"), (1, "…"), (18, TEXT)])
def test_text_is_cut_to_max_length(limit: int, expected: str) -> None:
    schema = _object(s={"type": "string", "maxLength": limit})
    assert with_text_in_first_string_field(schema, {"s": ""}, TEXT) == {"s": expected}


def test_a_field_that_cannot_hold_any_text_is_passed_over() -> None:
    schema = _object(s={"type": "string", "maxLength": 0}, t={"type": "string", "minLength": 19})
    assert with_text_in_first_string_field(schema, {"s": "", "t": "x" * 19}, TEXT) == {"s": "", "t": "x" * 19}


def test_a_ref_to_a_string_definition_counts_as_free_text() -> None:
    schema: JsonObject = {**_object(s={"$ref": "#/$defs/Text"}), "$defs": {"Text": {"type": "string"}}}
    assert with_text_in_first_string_field(schema, {"s": "old"}, TEXT) == {"s": TEXT}


@pytest.mark.parametrize(
    "extra",
    [
        {"maxProperties": 1},
        {"dependentRequired": {"s": ["n"]}},
        {"propertyNames": {"maxLength": 3}},
    ],
)
def test_an_absent_field_is_not_added_where_the_object_rules_could_object(extra: JsonObject) -> None:
    schema = {**_object(n={"type": "integer"}, s={"type": "string"}), **extra}
    assert with_text_in_first_string_field(schema, {"n": 1}, TEXT) == {"n": 1}


def test_pattern_properties_and_combinators_leave_the_value_as_generated() -> None:
    governed = {**_object(s={"type": "string"}), "patternProperties": {"^s": {"maxLength": 2}}}
    assert with_text_in_first_string_field(governed, {"s": "ab"}, TEXT) == {"s": "ab"}
    combined = {**_object(s={"type": "string"}), "allOf": [{"required": ["s"]}]}
    assert with_text_in_first_string_field(combined, {"s": "ab"}, TEXT) == {"s": "ab"}
    assert with_text_in_first_string_field(_object(s={"type": "string"}), ["not", "an object"], TEXT) == [
        "not",
        "an object",
    ]
