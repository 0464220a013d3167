"""What OpenAIChatAdapter SENDS to an OpenAI-compatible server (seed 002 §3-3), recorded at the wire."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kanawa.llm.models import resolve_model
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.types import (
    AssistantMessage,
    FilePart,
    ImagePart,
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
from tests.llm.openai_chat.conftest import API_KEY
from tests.llm.openai_chat.wire import chunk, completion, stream, usage_chunk
from tests.wire.server import WireServer

WEATHER = ToolSpec(
    "get_weather",
    "Weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


async def sent(
    adapter: OpenAIChatAdapter, server: WireServer, messages: list[Message], **kwargs: Any
) -> dict[str, Any]:
    server.enqueue(completion({"content": "ok"}))
    await adapter.chat(messages, **kwargs)
    body: dict[str, Any] = server.requests[-1].json()
    return body


async def test_posts_to_chat_completions_with_bearer_key(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    body = await sent(adapter, wire_server, [UserMessage("Hi")])
    request = wire_server.requests[-1]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert API_KEY not in request.body.decode()
    assert body == {
        "model": "qwen2.5-7b-instruct",
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": False,
    }


async def test_keyless_server_gets_a_placeholder_never_the_openai_key(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-from-env")
    monkeypatch.delenv("KANAWA_CHAT_API_KEY", raising=False)
    keyless = OpenAIChatAdapter("llama3", base_url=f"{wire_server.base_url}/v1")
    await sent(keyless, wire_server, [UserMessage("Hi")])
    assert wire_server.requests[-1].headers["authorization"] == "Bearer sk-no-key-required"
    monkeypatch.setenv("KANAWA_CHAT_API_KEY", "sk-for-the-compatible-server")
    from_env = OpenAIChatAdapter("llama3", base_url=f"{wire_server.base_url}/v1")
    await sent(from_env, wire_server, [UserMessage("Hi")])
    assert wire_server.requests[-1].headers["authorization"] == "Bearer sk-for-the-compatible-server"


def test_openai_key_is_used_only_for_openais_own_host(monkeypatch: pytest.MonkeyPatch) -> None:
    from kanawa.llm.openai.chat import chat_api_key

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.delenv("KANAWA_CHAT_API_KEY", raising=False)
    assert chat_api_key(None) == "sk-openai"
    assert chat_api_key("https://api.openai.com/v1") == "sk-openai"
    assert chat_api_key("https://api.example-inference.com/v1") is None
    assert chat_api_key("http://127.0.0.1:11434/v1") is None


async def test_model_string_routes_to_the_base_url(wire_server: WireServer) -> None:
    llm = resolve_model(f"openai-chat:llama3.1:8b@{wire_server.base_url}/v1")
    wire_server.enqueue(completion({"content": "pong"}))
    response = await llm.chat([UserMessage("ping")])
    assert response.message.text == "pong"
    assert wire_server.requests[-1].json()["model"] == "llama3.1:8b"


async def test_system_messages_keep_their_place_and_role_option(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    history: list[Message] = [SystemMessage("Be brief."), UserMessage("Hi"), SystemMessage("Now in French.")]
    body = await sent(adapter, wire_server, history)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "system"]
    developer = OpenAIChatAdapter(
        "o4-mini", api_key=API_KEY, base_url=f"{wire_server.base_url}/v1", system_role="developer"
    )
    body = await sent(developer, wire_server, history)
    assert body["messages"][0] == {"role": "developer", "content": "Be brief."}


async def test_user_parts_become_text_image_and_file_parts(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    png, pdf = b"\x89PNG\r\n", b"%PDF-1.7"
    user = UserMessage(
        [
            TextPart("Look:"),
            ImagePart(data=png, media_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg"),
            FilePart(pdf, media_type="application/pdf", filename="report.pdf"),
            FilePart("注記".encode(), media_type="text/plain", filename="note.txt"),
        ]
    )
    body = await sent(adapter, wire_server, [user])
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "Look:"},
        {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{base64.b64encode(png).decode()}"},
        },
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
        {
            "type": "file",
            "file": {
                "file_data": f"data:application/pdf;base64,{base64.b64encode(pdf).decode()}",
                "filename": "report.pdf",
            },
        },
        {"type": "text", "text": "注記"},
    ]


async def test_assistant_tool_calls_and_tool_results(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    history: list[Message] = [
        UserMessage("Weather in Paris and Rome?"),
        AssistantMessage(
            text="",
            tool_calls=(
                ToolCall("call_1", "get_weather", '{"city": "Paris"}'),
                ToolCall("call_2", "get_weather", '{"city": "Ro'),
            ),
            reasoning=(ReasoningPart(text="thinking about cities", provider="openai-chat"),),
        ),
        ToolMessage("call_1", "18°C"),
        ToolMessage("call_2", "tool arguments are not valid JSON", is_error=True),
    ]
    body = await sent(adapter, wire_server, history, tools=[WEATHER])
    assert body["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        ],
    }
    assert "reasoning_content" not in body["messages"][1]
    assert body["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
        {"role": "tool", "tool_call_id": "call_2", "content": "tool arguments are not valid JSON"},
    ]


async def test_images_from_tools_follow_the_tool_results(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    history: list[Message] = [
        UserMessage("plot it"),
        AssistantMessage(text="", tool_calls=(ToolCall("call_1", "plot", "{}"),)),
        ToolMessage("call_1", [TextPart("chart attached"), ImagePart(url="https://example.com/c.png")]),
    ]
    body = await sent(adapter, wire_server, history)
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "chart attached"}
    assert body["messages"][3] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Images returned by tool call call_1:"},
            {"type": "image_url", "image_url": {"url": "https://example.com/c.png"}},
        ],
    }


async def test_sampling_settings_only_when_set(adapter: OpenAIChatAdapter, wire_server: WireServer) -> None:
    settings = ModelSettings(max_output_tokens=300, temperature=0.3, top_p=0.8, stop=("###",), seed=42)
    body = await sent(adapter, wire_server, [UserMessage("?")], settings=settings)
    assert {k: body[k] for k in ("max_tokens", "temperature", "top_p", "stop", "seed")} == {
        "max_tokens": 300,
        "temperature": 0.3,
        "top_p": 0.8,
        "stop": ["###"],
        "seed": 42,
    }
    assert "max_completion_tokens" not in body
    assert "reasoning_effort" not in body


async def test_max_tokens_field_option(wire_server: WireServer) -> None:
    adapter = OpenAIChatAdapter(
        "o4-mini",
        api_key=API_KEY,
        base_url=f"{wire_server.base_url}/v1",
        max_tokens_field="max_completion_tokens",
    )
    settings = ModelSettings(max_output_tokens=900, reasoning_effort="low")
    body = await sent(adapter, wire_server, [UserMessage("?")], settings=settings)
    assert body["max_completion_tokens"] == 900
    assert "max_tokens" not in body
    assert body["reasoning_effort"] == "low"


async def test_tools_offered_as_functions(adapter: OpenAIChatAdapter, wire_server: WireServer) -> None:
    body = await sent(adapter, wire_server, [UserMessage("?")], tools=[WEATHER])
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city.",
                "parameters": WEATHER.parameters,
            },
        }
    ]
    assert "tool_choice" not in body
    assert "parallel_tool_calls" not in body


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("any", "required"),
        ("get_weather", {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
async def test_tool_choice_mapping(
    adapter: OpenAIChatAdapter, wire_server: WireServer, choice: str, expected: object
) -> None:
    settings = ModelSettings(tool_choice=choice, parallel_tool_calls=False)
    body = await sent(adapter, wire_server, [UserMessage("?")], tools=[WEATHER], settings=settings)
    assert body["tool_choice"] == expected
    assert body["parallel_tool_calls"] is False


async def test_tool_settings_are_not_sent_without_tools(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    settings = ModelSettings(tool_choice="required", parallel_tool_calls=True)
    body = await sent(adapter, wire_server, [UserMessage("?")], settings=settings)
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & body.keys()


async def test_response_schema_becomes_json_schema_response_format(
    adapter: OpenAIChatAdapter, wire_server: WireServer
) -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"value": {"type": "integer"}},
        "required": ["value"],
    }
    output = OutputSchema("Final answer (v2)", schema, description="The result.")
    body = await sent(adapter, wire_server, [UserMessage("?")], response_schema=output)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "Final_answer__v2_",
            "schema": schema,
            "strict": True,
            "description": "The result.",
        },
    }


async def test_extra_is_merged_last(adapter: OpenAIChatAdapter, wire_server: WireServer) -> None:
    settings = ModelSettings(temperature=0.5, extra={"temperature": 0.0, "repetition_penalty": 1.1})
    body = await sent(adapter, wire_server, [UserMessage("?")], settings=settings)
    assert (body["temperature"], body["repetition_penalty"]) == (0.0, 1.1)


async def test_streaming_asks_for_usage_unless_turned_off(wire_server: WireServer) -> None:
    base = f"{wire_server.base_url}/v1"
    for include_usage, expected in ((True, {"include_usage": True}), (False, None)):
        adapter = OpenAIChatAdapter("llama3", base_url=base, include_usage=include_usage)
        wire_server.enqueue(stream(chunk({"content": "x"}, finish="stop"), usage_chunk()))
        _ = [e async for e in adapter.stream([UserMessage("?")])]
        body = wire_server.requests[-1].json()
        assert body["stream"] is True
        assert body.get("stream_options") == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai-chat:GPT_4o", "gpt-4o"),
        ("Qwen2.5 7B Instruct", "qwen2.5-7b-instruct"),
        ("llama3.1:8b", "llama3.1:8b"),
    ],
)
def test_normalize_model_name_per_seed_002(name: str, expected: str) -> None:
    adapter = OpenAIChatAdapter("Llama_3", base_url="http://127.0.0.1:1/v1")
    assert adapter.normalize_model_name(name) == expected
    assert adapter.normalize_model_name() == "llama-3"
    assert adapter.model == "Llama_3"
