"""Seed 003 ``decodeFinalOutput``: decoding final-answer text into the output type."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from kanawa.loop.decoding import DecodeError, OutputDecoder, decoder_for


class Answer(BaseModel):
    value: int
    explanation: str


@dataclasses.dataclass
class Point:
    x: int
    y: int


def test_str_output_is_plain_text_without_schema() -> None:
    decoder = decoder_for(str)
    assert decoder.is_text
    assert decoder.schema is None
    assert decoder.decode("  anything { not json  ") == "  anything { not json  "


def test_pydantic_model_decodes_json_and_has_an_object_schema() -> None:
    decoder = decoder_for(Answer)
    assert decoder.schema is not None
    assert decoder.schema.name == "Answer"
    assert decoder.schema.schema["type"] == "object"
    assert decoder.decode('{"value": 5, "explanation": "2+3"}') == Answer(value=5, explanation="2+3")


def test_markdown_json_fence_is_stripped() -> None:
    text = 'Here you go:\n```json\n{"value": 1, "explanation": "x"}\n```\nanything else'
    assert decoder_for(Answer).decode(text) == Answer(value=1, explanation="x")


def test_leading_and_trailing_prose_around_one_json_value_is_tolerated() -> None:
    text = 'The answer is {"value": 2, "explanation": "y"} — hope that helps.'
    assert decoder_for(Answer).decode(text) == Answer(value=2, explanation="y")


def test_validation_error_summary_names_fields_but_not_input_values() -> None:
    with pytest.raises(DecodeError) as info:
        decoder_for(Answer).decode('{"value": "SECRET-NOT-A-NUMBER"}')
    assert "value" in info.value.errors
    assert "explanation" in info.value.errors
    assert "SECRET" not in info.value.errors


def test_invalid_json_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="JSON"):
        decoder_for(Answer).decode("no json here at all")


def test_non_object_types_are_wrapped_in_a_response_object_and_unwrapped() -> None:
    decoder = decoder_for(list[int])
    assert decoder.schema is not None
    schema = decoder.schema.schema
    assert schema["type"] == "object"
    assert schema["required"] == ["response"]
    assert decoder.decode('{"response": [1, 2, 3]}') == [1, 2, 3]
    assert decoder.decode("[4, 5]") == [4, 5]  # the bare value is accepted too


def test_wrapped_schema_keeps_definitions_at_the_root() -> None:
    decoder = decoder_for(list[Answer])
    assert decoder.schema is not None
    schema = decoder.schema.schema
    assert "$defs" in schema
    assert "Answer" in schema["$defs"]  # type: ignore[operator]
    value = decoder.decode('{"response": [{"value": 1, "explanation": "a"}]}')
    assert value == [Answer(value=1, explanation="a")]


def test_dataclass_output_type() -> None:
    assert decoder_for(Point).decode('{"x": 1, "y": 2}') == Point(1, 2)


def test_decoders_are_cached_per_type() -> None:
    assert decoder_for(Answer) is decoder_for(Answer)
    assert isinstance(decoder_for(int), OutputDecoder)
