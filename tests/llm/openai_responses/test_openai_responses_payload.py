"""Message conversion (seed 001 §3.7) and the request mapping table (seed 001 §3.6), as pure functions."""

from __future__ import annotations

import pytest

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.openai.responses_payload import (
    ResponsesPayloadError,
    build_responses_payload,
    messages_to_responses_input,
)
from kanawa.llm.settings import ModelSettings
from kanawa.types import (
    AssistantMessage,
    FilePart,
    ImagePart,
    OutputSchema,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)

ADD = ToolSpec(
    "add", "Add two integers.", {"type": "object", "properties": {"a": {"type": "integer"}}}, strict=True
)
REASONING_ITEM = {
    "id": "rs_abc",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Plan: add."}],
    "encrypted_content": "gAAAAA-opaque",
    "status": "completed",
}


def test_leading_system_messages_become_instructions_later_ones_developer_items() -> None:
    instructions, items = messages_to_responses_input(
        [
            SystemMessage("Be terse."),
            SystemMessage("Use tools."),
            UserMessage("hi"),
            SystemMessage("Now answer."),
        ]
    )
    assert instructions == "Be terse.\n\nUse tools."
    assert items == [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"role": "developer", "content": [{"type": "input_text", "text": "Now answer."}]},
    ]


def test_user_parts_become_input_text_image_and_file() -> None:
    _, items = messages_to_responses_input(
        [
            UserMessage(
                [
                    TextPart("look"),
                    ImagePart(url="https://example.com/cat.png"),
                    ImagePart(data=b"\x89PNG", media_type="image/png"),
                    FilePart(b"%PDF-1", media_type="application/pdf", filename="a.pdf"),
                ]
            )
        ]
    )
    assert items[0]["content"] == [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw==", "detail": "auto"},
        {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
    ]


def test_assistant_replays_openai_reasoning_verbatim_first_then_text_then_function_calls() -> None:
    message = AssistantMessage(
        text="Let me add.",
        tool_calls=(ToolCall("call_1", "add", '{"a": 1}'), ToolCall("call_2", "add", '{"a": 2}')),
        reasoning=(
            ReasoningPart(text="Plan: add.", provider="openai", payload=REASONING_ITEM),
            ReasoningPart(text="thinking", provider="anthropic", payload={"signature": "sig"}),
            ReasoningPart(text="no payload", provider="openai"),
        ),
    )
    _, items = messages_to_responses_input([UserMessage("q"), message])
    assert items[1:] == [
        REASONING_ITEM,
        {"role": "assistant", "content": "Let me add."},
        {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": '{"a": 1}'},
        {"type": "function_call", "call_id": "call_2", "name": "add", "arguments": '{"a": 2}'},
    ]
    assert items[1] is not REASONING_ITEM


def test_tool_results_become_function_call_output_and_empty_content_is_kept() -> None:
    _, items = messages_to_responses_input(
        [ToolMessage("call_1", "3"), ToolMessage("call_2", ""), ToolMessage("call_3", "boom", is_error=True)]
    )
    assert items == [
        {"type": "function_call_output", "call_id": "call_1", "output": "3"},
        {"type": "function_call_output", "call_id": "call_2", "output": ""},
        {"type": "function_call_output", "call_id": "call_3", "output": "boom"},
    ]


def test_tool_result_with_an_image_becomes_a_content_list() -> None:
    _, items = messages_to_responses_input(
        [ToolMessage("c", [TextPart("see"), ImagePart(url="https://x/y.png")])]
    )
    assert items[0]["output"] == [
        {"type": "input_text", "text": "see"},
        {"type": "input_image", "image_url": "https://x/y.png", "detail": "auto"},
    ]


def test_empty_assistant_text_is_not_sent() -> None:
    _, items = messages_to_responses_input([AssistantMessage(tool_calls=(ToolCall("c", "add", "{}"),))])
    assert items == [{"type": "function_call", "call_id": "c", "name": "add", "arguments": "{}"}]


def test_full_mapping_table() -> None:
    settings = ModelSettings(
        max_output_tokens=8192,
        reasoning_effort="medium",
        reasoning_summary="auto",
        verbosity="low",
        tool_choice="required",
        parallel_tool_calls=False,
        stream=True,
    )
    payload = build_responses_payload(
        "gpt-5", [UserMessage("hi")], tools=[ADD], settings=settings, stream=True
    )
    assert payload == {
        "model": "gpt-5",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "tools": [
            {
                "type": "function",
                "name": "add",
                "description": "Add two integers.",
                "parameters": ADD.parameters,
                "strict": True,
            }
        ],
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "max_output_tokens": 8192,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "text": {"verbosity": "low"},
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": True,
    }


@pytest.mark.parametrize(
    ("setting", "flag", "expected"),
    [
        (None, True, True),
        (None, False, False),
        (True, True, True),
        (True, False, False),
        (False, True, False),
    ],
)
def test_stream_is_enable_stream_and_call_flag(setting: bool | None, flag: bool, expected: bool) -> None:
    payload = build_responses_payload(
        "gpt-5", [UserMessage("x")], settings=ModelSettings(stream=setting), stream=flag
    )
    assert payload["stream"] is expected


def test_stop_is_never_sent_but_truncation_disabled_is() -> None:
    payload = build_responses_payload("gpt-5", [UserMessage("x")], settings=ModelSettings(stop=("END",)))
    assert payload["truncation"] == "disabled"
    assert "stop" not in payload
    assert "truncation" not in build_responses_payload("gpt-5", [UserMessage("x")])


def test_named_tool_choice_becomes_function_object() -> None:
    payload = build_responses_payload(
        "gpt-5", [UserMessage("x")], tools=[ADD], settings=ModelSettings(tool_choice="add")
    )
    assert payload["tool_choice"] == {"type": "function", "name": "add"}


def test_tool_choice_for_an_unknown_tool_is_refused() -> None:
    with pytest.raises(ResponsesPayloadError, match="tool_choice names 'mul'"):
        build_responses_payload(
            "gpt-5", [UserMessage("x")], tools=[ADD], settings=ModelSettings(tool_choice="mul")
        )


def test_tool_choice_and_parallel_calls_not_sent_without_tools() -> None:
    settings = ModelSettings(tool_choice="auto", parallel_tool_calls=True)
    payload = build_responses_payload("gpt-5", [UserMessage("x")], settings=settings)
    assert "tool_choice" not in payload
    assert "parallel_tool_calls" not in payload
    assert "tools" not in payload


@pytest.mark.parametrize("name", ["", "   "])
def test_tool_without_name_is_value_error(name: str) -> None:
    with pytest.raises(ValueError, match="tool name is missing"):
        build_responses_payload("gpt-5", [UserMessage("x")], tools=[ToolSpec(name, "d", {"type": "object"})])
    with pytest.raises(LLMBadRequestError):
        build_responses_payload("gpt-5", [UserMessage("x")], tools=[ToolSpec(name, "d", {"type": "object"})])


def test_response_schema_becomes_text_format_json_schema() -> None:
    schema = OutputSchema(
        "Answer", {"type": "object", "properties": {"v": {"type": "integer"}}}, description="d"
    )
    payload = build_responses_payload(
        "gpt-5", [UserMessage("x")], settings=ModelSettings(verbosity="high"), response_schema=schema
    )
    assert payload["text"] == {
        "verbosity": "high",
        "format": {
            "type": "json_schema",
            "name": "Answer",
            "schema": schema.schema,
            "strict": True,
            "description": "d",
        },
    }


def test_response_format_json_schema_setting_is_validated_and_mapped() -> None:
    settings = ModelSettings(
        response_format="json_schema",
        json_schema={"name": "Out", "schema": {"type": "object"}, "strict": "true"},
    )
    payload = build_responses_payload("gpt-5", [UserMessage("x")], settings=settings)
    assert payload["text"] == {
        "format": {"type": "json_schema", "name": "Out", "schema": {"type": "object"}, "strict": True}
    }
    unnamed = ModelSettings(response_format="json_schema", json_schema={"schema": {"type": "object"}})
    assert (
        build_responses_payload("gpt-5", [UserMessage("x")], settings=unnamed)["text"]["format"]["name"]
        == "response"
    )


@pytest.mark.parametrize("json_schema", [None, {"name": "x"}, {"schema": []}])
def test_response_format_json_schema_without_valid_schema_is_refused(
    json_schema: dict[str, object] | None,
) -> None:
    settings = ModelSettings(response_format="json_schema", json_schema=json_schema)  # type: ignore[arg-type]
    with pytest.raises(ResponsesPayloadError, match="json_schema"):
        build_responses_payload("gpt-5", [UserMessage("x")], settings=settings)


def test_non_reasoning_models_do_not_ask_for_encrypted_reasoning() -> None:
    payload = build_responses_payload(
        "gpt-4.1", [UserMessage("x")], settings=ModelSettings(temperature=0.2, top_p=0.5)
    )
    assert "include" not in payload
    assert payload["store"] is False
    assert (payload["temperature"], payload["top_p"]) == (0.2, 0.5)


def test_seed_is_not_sent_and_extra_is_merged_last() -> None:
    settings = ModelSettings(seed=7, extra={"store": True, "metadata": {"run": "r1"}})
    payload = build_responses_payload("gpt-5", [UserMessage("x")], settings=settings)
    assert "seed" not in payload
    assert payload["store"] is True
    assert payload["metadata"] == {"run": "r1"}
