"""What AnthropicAdapter SENDS (seed 002 §3-3): body and headers as recorded by a real loopback server."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kanawa.llm.anthropic.adapter import AnthropicAdapter
from kanawa.llm.errors import LLMAuthError, LLMBadRequestError
from kanawa.llm.settings import ModelSettings
from kanawa.types import (
    AssistantMessage,
    FilePart,
    ImagePart,
    JsonObject,
    Message,
    OutputSchema,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from tests.llm.anthropic.conftest import API_KEY
from tests.llm.anthropic.wire import message
from tests.wire.server import WireServer

WEATHER = ToolSpec(
    "get_weather",
    "Weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ToolSpec("get_time", "Current time.", {"type": "object", "properties": {}})

THINKING = {"type": "thinking", "thinking": "Need both tools.", "signature": "EqQBCkgIARABGAIi+sig/=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}


async def sent(
    adapter: AnthropicAdapter,
    server: WireServer,
    messages: list[Message],
    **kwargs: Any,
) -> dict[str, Any]:
    server.enqueue(message([{"type": "text", "text": "ok"}]))
    await adapter.chat(messages, **kwargs)
    body: dict[str, Any] = server.requests[-1].json()
    return body


async def test_system_messages_go_to_top_level_system(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    body = await sent(
        adapter, wire_server, [SystemMessage("Be brief."), SystemMessage("Use SI units."), UserMessage("Hi")]
    )
    assert body["system"] == "Be brief.\n\nUse SI units."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert all(m["role"] != "system" for m in body["messages"])


async def test_headers_carry_key_and_version_never_the_body(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    await sent(adapter, wire_server, [UserMessage("Hi")])
    request = wire_server.requests[-1]
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["anthropic-version"]
    assert request.headers["x-stainless-retry-count"] == "0"
    assert API_KEY not in request.body.decode()


async def test_max_tokens_defaults_and_sampling_settings(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    body = await sent(adapter, wire_server, [UserMessage("Hi")])
    assert body["max_tokens"] == 8192
    assert "temperature" not in body
    assert "stop_sequences" not in body
    assert "thinking" not in body
    settings = ModelSettings(max_output_tokens=500, temperature=0.2, top_p=0.9, stop=("END", "STOP"))
    body = await sent(adapter, wire_server, [UserMessage("Hi")], settings=settings)
    assert (body["max_tokens"], body["temperature"], body["top_p"]) == (500, 0.2, 0.9)
    assert body["stop_sequences"] == ["END", "STOP"]


async def test_tool_results_merge_into_one_user_turn_with_is_error(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    history: list[Message] = [
        UserMessage("Weather and time in Paris?"),
        AssistantMessage(
            text="Checking.",
            tool_calls=(
                ToolCall("toolu_1", "get_weather", '{"city": "Paris"}'),
                ToolCall("toolu_2", "get_time", ""),
            ),
        ),
        ToolMessage("toolu_1", "18°C, cloudy"),
        ToolMessage("toolu_2", "tool invoke error: failed to execute tool", is_error=True),
    ]
    body = await sent(adapter, wire_server, history, tools=[WEATHER, TIME])
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assistant, results = body["messages"][1]["content"], body["messages"][2]["content"]
    assert assistant == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
    ]
    assert results == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "18°C, cloudy"}],
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": [{"type": "text", "text": "tool invoke error: failed to execute tool"}],
            "is_error": True,
        },
    ]


async def test_empty_tool_result_sends_no_content(adapter: AnthropicAdapter, wire_server: WireServer) -> None:
    history: list[Message] = [
        UserMessage("Go"),
        AssistantMessage(text="", tool_calls=(ToolCall("toolu_1", "reset", "{}"),)),
        ToolMessage("toolu_1", ""),
    ]
    body = await sent(adapter, wire_server, history)
    assert body["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1"}]


async def test_user_turn_after_tool_results_is_merged_after_them(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    history: list[Message] = [
        UserMessage("Go"),
        AssistantMessage(text="", tool_calls=(ToolCall("toolu_1", "get_time", "{}"),)),
        ToolMessage("toolu_1", "12:00"),
        UserMessage("Thanks, and now?"),
    ]
    body = await sent(adapter, wire_server, history)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "text"]


async def test_thinking_replayed_verbatim_first_and_foreign_reasoning_dropped(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    turn = AssistantMessage(
        text="Let me look.",
        tool_calls=(ToolCall("toolu_1", "get_time", "{}"),),
        reasoning=(
            ReasoningPart(text="Need both tools.", provider="anthropic", payload=THINKING),
            ReasoningPart(
                text="", provider="openai", payload={"type": "reasoning", "encrypted_content": "gAAA"}
            ),
            ReasoningPart(text="", provider="anthropic", payload=REDACTED),
        ),
    )
    body = await sent(adapter, wire_server, [UserMessage("Time?"), turn, ToolMessage("toolu_1", "12:00")])
    assert body["messages"][1]["content"] == [
        THINKING,
        REDACTED,
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {}},
    ]


@pytest.mark.parametrize("stored", ['{"city": "Par', "[1, 2]", "null"])
async def test_stored_arguments_that_are_not_an_object_are_sent_as_empty_input(
    adapter: AnthropicAdapter, wire_server: WireServer, stored: str
) -> None:
    turn = AssistantMessage(text="", tool_calls=(ToolCall("toolu_1", "get_weather", stored),))
    body = await sent(
        adapter, wire_server, [UserMessage("?"), turn, ToolMessage("toolu_1", "parse error", is_error=True)]
    )
    assert body["messages"][1]["content"][0]["input"] == {}


async def test_tools_are_offered_with_input_schema(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    body = await sent(adapter, wire_server, [UserMessage("?")], tools=[WEATHER])
    assert body["tools"] == [
        {"name": "get_weather", "description": "Weather for a city.", "input_schema": WEATHER.parameters}
    ]
    assert "tool_choice" not in body


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        ("get_weather", None, {"type": "tool", "name": "get_weather"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ],
)
async def test_tool_choice_mapping(
    adapter: AnthropicAdapter,
    wire_server: WireServer,
    choice: str | None,
    parallel: bool | None,
    expected: dict[str, Any],
) -> None:
    settings = ModelSettings(tool_choice=choice, parallel_tool_calls=parallel)
    body = await sent(adapter, wire_server, [UserMessage("?")], tools=[WEATHER], settings=settings)
    assert body["tool_choice"] == expected


async def test_tool_choice_is_not_sent_without_tools(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    body = await sent(
        adapter, wire_server, [UserMessage("?")], settings=ModelSettings(tool_choice="required")
    )
    assert "tool_choice" not in body
    assert "tools" not in body


@pytest.mark.parametrize(
    ("effort", "budget"), [("minimal", 1024), ("low", 2048), ("medium", 8192), ("high", 16384)]
)
async def test_reasoning_effort_maps_to_thinking_budget(
    adapter: AnthropicAdapter, wire_server: WireServer, effort: Any, budget: int
) -> None:
    body = await sent(
        adapter, wire_server, [UserMessage("?")], settings=ModelSettings(reasoning_effort=effort)
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == 8192 + budget


async def test_thinking_budget_is_fitted_under_explicit_max_tokens(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    settings = ModelSettings(reasoning_effort="high", max_output_tokens=4000)
    body = await sent(adapter, wire_server, [UserMessage("?")], settings=settings)
    assert body["max_tokens"] == 4000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    with pytest.raises(LLMBadRequestError, match="max_output_tokens above 1024"):
        await adapter.chat(
            [UserMessage("?")], settings=ModelSettings(reasoning_effort="low", max_output_tokens=800)
        )


async def test_reasoning_effort_none_sends_no_thinking(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    body = await sent(
        adapter, wire_server, [UserMessage("?")], settings=ModelSettings(reasoning_effort="none")
    )
    assert "thinking" not in body
    assert "output_config" not in body


async def test_adaptive_thinking_mode_sends_effort(wire_server: WireServer) -> None:
    adaptive = AnthropicAdapter("claude-opus-4-6", api_key=API_KEY, base_url=wire_server.base_url)
    body = await sent(
        adaptive, wire_server, [UserMessage("?")], settings=ModelSettings(reasoning_effort="minimal")
    )
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "low"}
    assert body["max_tokens"] == 8192


async def test_response_schema_uses_native_json_output_format(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    schema: JsonObject = {
        "type": "object",
        "properties": {"value": {"type": "integer", "minimum": 0}, "why": {"type": "string"}},
        "required": ["value", "why"],
    }
    body = await sent(
        adapter, wire_server, [UserMessage("?")], response_schema=OutputSchema("Answer", schema)
    )
    sent_schema = body["output_config"]["format"]["schema"]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert sent_schema["additionalProperties"] is False
    assert sent_schema["required"] == ["value", "why"]
    assert "minimum" not in sent_schema["properties"]["value"]
    loose = OutputSchema("Answer", schema, strict=False)
    body = await sent(adapter, wire_server, [UserMessage("?")], response_schema=loose)
    assert body["output_config"]["format"]["schema"] == schema


async def test_extra_is_merged_last_over_the_body(adapter: AnthropicAdapter, wire_server: WireServer) -> None:
    settings = ModelSettings(max_output_tokens=100, extra={"max_tokens": 77, "metadata": {"user_id": "u-1"}})
    body = await sent(adapter, wire_server, [UserMessage("?")], settings=settings)
    assert body["max_tokens"] == 77
    assert body["metadata"] == {"user_id": "u-1"}


async def test_constructor_settings_merge_with_call_settings(wire_server: WireServer) -> None:
    adapter = AnthropicAdapter(
        "claude-sonnet-5",
        api_key=API_KEY,
        base_url=wire_server.base_url,
        settings=ModelSettings(temperature=0.1, max_output_tokens=256),
    )
    body = await sent(adapter, wire_server, [UserMessage("?")], settings=ModelSettings(temperature=0.7))
    assert (body["temperature"], body["max_tokens"]) == (0.7, 256)


async def test_images_and_documents_become_content_blocks(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    png, pdf = b"\x89PNG\r\n", b"%PDF-1.7"
    user = UserMessage(
        [
            TextPart("Describe these."),
            ImagePart(data=png, media_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg"),
            ImagePart(url="data:image/jpeg;base64,/9j/AA=="),
            FilePart(pdf, media_type="application/pdf", filename="report.pdf"),
        ]
    )
    body = await sent(adapter, wire_server, [user])
    blocks = body["messages"][0]["content"]
    assert blocks[0] == {"type": "text", "text": "Describe these."}
    assert blocks[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(png).decode(),
    }
    assert blocks[2]["source"] == {"type": "url", "url": "https://example.com/cat.jpg"}
    assert blocks[3]["source"] == {"type": "base64", "media_type": "image/jpeg", "data": "/9j/AA=="}
    assert blocks[4] == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(pdf).decode()},
        "title": "report.pdf",
    }


async def test_tool_result_with_an_image_is_sent_as_blocks(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    result = ToolMessage("toolu_1", [TextPart("chart:"), ImagePart(data=b"GIF89a", media_type="image/gif")])
    turn = AssistantMessage(text="", tool_calls=(ToolCall("toolu_1", "plot", "{}"),))
    body = await sent(adapter, wire_server, [UserMessage("plot"), turn, result])
    content = body["messages"][2]["content"][0]["content"]
    assert [b["type"] for b in content] == ["text", "image"]


async def test_unsupported_file_type_is_refused_before_sending(
    adapter: AnthropicAdapter, wire_server: WireServer
) -> None:
    with pytest.raises(LLMBadRequestError, match="application/pdf or text"):
        await adapter.chat([UserMessage([FilePart(b"PK..", media_type="application/zip")])])
    assert wire_server.requests == []


def test_missing_key_is_a_one_line_auth_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LLMAuthError) as info:
        AnthropicAdapter("claude-sonnet-5")
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert "\n" not in str(info.value)


def test_key_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    assert AnthropicAdapter("claude-sonnet-5").provider == "anthropic"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Claude_3_Opus", "claude-3-opus"),
        ("anthropic:claude-sonnet-5", "claude-sonnet-5"),
        ("  Claude 3 Haiku ", "claude-3-haiku"),
    ],
)
def test_normalize_model_name_per_seed_002(name: str, expected: str) -> None:
    adapter = AnthropicAdapter("claude-sonnet-5", api_key="k")
    assert adapter.normalize_model_name(name) == expected
    assert adapter.normalize_model_name() == "claude-sonnet-5"


def test_count_tokens_is_offline_and_positive() -> None:
    adapter = AnthropicAdapter("claude-sonnet-5", api_key="k")
    assert adapter.count_tokens("hello world") > 0
    assert adapter.count_tokens([UserMessage("hello world")]) > adapter.count_tokens("hello world") - 1
