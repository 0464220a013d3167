"""``parse_tool_arguments`` (seed 000 §6.1, seed 001 §4.7): fail-closed JSON object parsing."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanawa.tools import (
    ToolArgumentsError,
    ToolError,
    ToolValidationError,
    parse_tool_arguments,
    tool,
    validate_arguments,
)


def test_empty_string_arguments_become_empty_object() -> None:
    assert parse_tool_arguments("") == {}


def test_whitespace_only_arguments_become_empty_object() -> None:
    assert parse_tool_arguments("  \n\t") == {}


def test_json_object_string_is_parsed() -> None:
    assert parse_tool_arguments('{"a": 1, "b": [true, null], "c": {"d": "é"}}') == {
        "a": 1,
        "b": [True, None],
        "c": {"d": "é"},
    }


@pytest.mark.parametrize("raw", [None, 1, 1.5, b"{}", {"a": 1}, ["{}"]])
def test_non_string_arguments_are_a_parse_error(raw: object) -> None:
    with pytest.raises(ToolArgumentsError, match="must be a JSON object string"):
        parse_tool_arguments(raw)


@pytest.mark.parametrize("raw", ["{", "{'a': 1}", '{"a": }', "not json", '{"a": 1} trailing'])
def test_invalid_json_is_a_parse_error(raw: str) -> None:
    with pytest.raises(ToolArgumentsError, match="not valid JSON"):
        parse_tool_arguments(raw)


@pytest.mark.parametrize(
    ("raw", "kind"),
    [("[1, 2]", "array"), ('"s"', "string"), ("3", "number"), ("true", "boolean"), ("null", "null")],
)
def test_json_that_is_not_an_object_is_a_parse_error(raw: str, kind: str) -> None:
    with pytest.raises(ToolArgumentsError, match=f"must be a JSON object, not a JSON {kind}"):
        parse_tool_arguments(raw)


@pytest.mark.parametrize("raw", ['{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}'])
def test_non_json_constants_are_refused(raw: str) -> None:
    with pytest.raises(ToolArgumentsError, match="not a JSON value"):
        parse_tool_arguments(raw)


def test_huge_integer_and_deep_nesting_are_parse_errors_not_crashes() -> None:
    with pytest.raises(ToolArgumentsError):
        parse_tool_arguments('{"n": ' + "9" * 5000 + "}")
    with pytest.raises(ToolArgumentsError):
        parse_tool_arguments('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")


def test_error_message_does_not_echo_the_arguments() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        parse_tool_arguments('{"password": "hunter2"')
    assert "hunter2" not in str(info.value)
    assert isinstance(info.value, ToolError)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=8,
)


@settings(deadline=None)
@given(st.one_of(st.text(), st.binary(), st.integers(), st.none(), json_values.map(json.dumps), json_values))
def test_property_any_input_returns_a_dict_or_raises_tool_arguments_error(raw: object) -> None:
    try:
        parsed = parse_tool_arguments(raw)
    except ToolArgumentsError:
        return
    assert type(parsed) is dict
    assert json.loads(json.dumps(parsed)) == parsed


@settings(deadline=None)
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=4))
def test_property_every_json_object_string_round_trips(obj: dict[str, object]) -> None:
    assert parse_tool_arguments(json.dumps(obj)) == obj
    assert parse_tool_arguments(json.dumps(obj, ensure_ascii=False, indent=2)) == obj


def test_validate_arguments_raises_tool_validation_error_with_the_model_message() -> None:
    @tool
    def pick(level: Literal["low", "high"], count: int) -> str:
        return level

    model = validate_arguments(pick, '{"level": "low", "count": 2}')
    assert model.__dict__ == {"level": "low", "count": 2}
    assert validate_arguments(pick, {"level": "high", "count": 1}).__dict__["level"] == "high"
    with pytest.raises(ToolValidationError) as info:
        validate_arguments(pick, '{"level": "max"}')
    assert info.value.tool_name == "pick"
    assert str(info.value).startswith(
        "parameter option validation error: 'level' must be one of 'low' or 'high'"
    )
    assert "count: required argument is missing" in str(info.value)
    with pytest.raises(ToolArgumentsError):
        validate_arguments(pick, "[]")
