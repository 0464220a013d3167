"""Schema cleaning (seed 002 §3-2: the JSON schema offered to the model is built once, clean)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kanawa.tools.schema import _SECTION_MARKS, clean_schema, make_strict, parse_docstring
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


# A docstring without section marks is read without docstring_parser; the reading must be the one
# docstring_parser gives (the oracle), and no text docstring_parser finds a section in may skip it.
_DOC_PIECES = st.sampled_from(
    ["a", "b.", " ", "  ", "\t", "\n", "\n\n", "\r", ":", "-", "-------", "==", "@param", "Args", "Returns",
     "Raises", "Parameters", "x : int", "int"]
)  # fmt: skip


def _parser_reading(text: str) -> tuple[str, dict[str, str], int]:
    import docstring_parser

    try:
        doc = docstring_parser.parse(inspect.cleandoc(text))
    except (docstring_parser.ParseError, IndexError):
        return text.strip(), {}, -1
    description = "\n\n".join(p.strip() for p in (doc.short_description, doc.long_description) if p)
    params = {p.arg_name: p.description.strip() for p in doc.params if p.description}
    return description, params, len(doc.meta)


def _documented(text: str) -> Any:
    def f() -> None:
        return None

    f.__doc__ = text
    return f


@settings(max_examples=400, deadline=None)
@given(st.lists(_DOC_PIECES, max_size=24).map("".join))
def test_prose_docstrings_read_as_docstring_parser_reads_them(text: str) -> None:
    if not inspect.getdoc(_documented(text)):
        return
    description, params, sections = _parser_reading(inspect.getdoc(_documented(text)) or "")
    if sections != 0:  # docstring_parser found a section (or failed): the fast path must not apply
        assert _SECTION_MARKS.search(inspect.getdoc(_documented(text)) or "") is not None
    if _SECTION_MARKS.search(inspect.getdoc(_documented(text)) or "") is None:
        assert parse_docstring(_documented(text)) == (description, params)


@pytest.mark.parametrize(
    "text",
    [
        "Add two integers.",
        "Add two\nintegers.\n\nSecond paragraph.",
        "Summary.\n\n    indented detail\n\n",
        "Args:\n    a: the first",
        "Sum.\n\nParameters\n----------\na : int\n    first",
        "Sum.\n\n@param a: first",
        "Sum.\n\n:param a: first",
        "Sum.\n\nReturns\n-------\nint\n    the sum",
    ],
)
def test_real_docstrings_read_the_same_with_and_without_the_fast_path(text: str) -> None:
    description, params, _ = _parser_reading(inspect.getdoc(_documented(text)) or "")
    assert parse_docstring(_documented(text)) == (description, params)


def test_a_docstring_the_parser_trips_on_still_builds_a_tool() -> None:
    # docstring_parser's reST reader raises IndexError on a ": :" line; the tool keeps the raw text
    assert parse_docstring(_documented("Sum.\n\n: :")) == ("Sum.\n\n: :", {})


def test_arguments_models_are_built_when_defined_though_their_base_waits() -> None:
    from kanawa.tools.schema import ToolArguments

    class Mine(ToolArguments):
        a: int

    assert Mine.__pydantic_complete__
    assert Mine.model_validate({"a": "3"}).a == 3
    with pytest.raises(ValidationError):
        Mine.model_validate({"a": 1, "b": 2})  # extra="forbid" is inherited


def test_an_arguments_model_pydantic_cannot_build_still_fails_where_it_is_defined() -> None:
    from pydantic import PydanticSchemaGenerationError

    from kanawa.tools.schema import ToolArguments

    class Opaque:
        pass

    with pytest.raises(PydanticSchemaGenerationError):

        class Broken(ToolArguments):
            a: Opaque
