"""What GeminiAdapter sends besides the conversation: generationConfig, thinking, tools, toolConfig,
structured output and ``extra`` (seed 002 §3-3, seed 001 §3.5; :mod:`kanawa.llm.gemini.config`).

Asserted on the JSON the real SDK put on the wire to the loopback server."""

from __future__ import annotations

from typing import Any

import pytest

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.llm.settings import ModelSettings, ReasoningEffort
from kanawa.types import (
    JsonObject,
    JsonValue,
    OutputSchema,
    UserMessage,
)
from tests.llm.gemini.wire import (
    ADD,
    API_KEY,
    NOW,
    body,
    field,
    generation_config,
    send,
    text,
)
from tests.wire.server import WireServer, json_reply

# ------------------------------------------------------------------------------------ generation config


async def test_settings_map_onto_generation_config(wire_server: WireServer) -> None:
    settings = ModelSettings(
        max_output_tokens=256, temperature=0.3, top_p=0.9, stop=("END",), seed=7, verbosity="low"
    )
    request = await send(wire_server, [UserMessage("q")], settings=settings)
    assert generation_config(request) == {
        "maxOutputTokens": 256,
        "temperature": 0.3,
        "topP": 0.9,
        "stopSequences": ["END"],
        "seed": 7,
    }
    sent = request.json()
    assert "tools" not in sent
    assert "toolConfig" not in sent
    assert "automaticFunctionCalling" not in str(sent)
    assert "automatic_function_calling" not in str(sent)


@pytest.mark.parametrize(
    ("model", "effort", "expected"),
    [
        ("gemini-2.5-flash", "none", {"thinkingBudget": 0}),
        ("gemini-2.5-flash", "low", {"thinkingBudget": 1024}),
        ("gemini-2.5-flash", "high", {"thinkingBudget": 24576}),
        ("gemini-2.5-pro", "none", {"thinkingBudget": 128}),
        ("gemini-2.5-pro", "xhigh", {"thinkingBudget": 32768}),
        ("gemini-3-flash-preview", "minimal", {"thinkingLevel": "MINIMAL"}),
        ("gemini-3-flash-preview", "medium", {"thinkingLevel": "MEDIUM"}),
        ("gemini-3-pro-preview", "none", {"thinkingLevel": "LOW"}),
        ("gemini-3-pro-preview", "high", {"thinkingLevel": "HIGH"}),
    ],
)
async def test_reasoning_effort_maps_to_thinking_budget_or_level_per_model_family(
    wire_server: WireServer, model: str, effort: ReasoningEffort, expected: dict[str, Any]
) -> None:
    request = await send(
        wire_server, [UserMessage("q")], model=model, settings=ModelSettings(reasoning_effort=effort)
    )
    thinking = field(generation_config(request), "thinkingConfig")
    assert {key: field(thinking, key) for key in expected} == expected
    assert len(thinking) == 1


async def test_reasoning_summary_turns_on_include_thoughts(wire_server: WireServer) -> None:
    settings = ModelSettings(reasoning_summary="auto", reasoning_effort="medium")
    thinking = field(
        generation_config(await send(wire_server, [UserMessage("q")], settings=settings)), "thinkingConfig"
    )
    assert field(thinking, "includeThoughts") is True
    assert field(thinking, "thinkingBudget") == 8192


async def test_models_that_do_not_think_get_no_thinking_config(wire_server: WireServer) -> None:
    settings = ModelSettings(reasoning_effort="high", reasoning_summary="auto")
    request = await send(wire_server, [UserMessage("q")], model="gemini-2.0-flash", settings=settings)
    assert "thinkingConfig" not in generation_config(request)


# ---------------------------------------------------------------------------------- tools and output


async def test_tools_become_function_declarations_with_the_raw_json_schema(wire_server: WireServer) -> None:
    request = await send(wire_server, [UserMessage("q")], tools=[ADD, NOW])
    declarations = field(request.json()["tools"][0], "functionDeclarations")
    assert declarations[0]["name"] == "add"
    assert declarations[0]["description"] == "Add two integers."
    assert field(declarations[0], "parametersJsonSchema") == ADD.parameters
    assert declarations[1] == {"name": "now", "description": "The current time."}
    assert "toolConfig" not in request.json()


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("add", {"mode": "ANY", "allowedFunctionNames": ["add"]}),
    ],
)
async def test_tool_choice_maps_to_function_calling_config(
    wire_server: WireServer, choice: str, expected: dict[str, Any]
) -> None:
    request = await send(
        wire_server, [UserMessage("q")], tools=[ADD, NOW], settings=ModelSettings(tool_choice=choice)
    )
    assert field(request.json()["toolConfig"], "functionCallingConfig") == expected


async def test_tool_choice_naming_an_unknown_tool_fails_before_sending(wire_server: WireServer) -> None:
    with pytest.raises(LLMBadRequestError, match="tool_choice"):
        await send(wire_server, [UserMessage("q")], tools=[ADD], settings=ModelSettings(tool_choice="mul"))
    assert wire_server.requests == []


async def test_response_schema_asks_for_json_with_the_schema(wire_server: WireServer) -> None:
    schema: JsonObject = {
        "type": "object",
        "properties": {"value": {"type": "integer"}},
        "required": ["value"],
    }
    request = await send(wire_server, [UserMessage("q")], response_schema=OutputSchema("Answer", schema))
    config = generation_config(request)
    assert config["responseMimeType"] == "application/json"
    assert field(config, "responseJsonSchema") == schema


async def test_json_schema_setting_is_structured_output_too(wire_server: WireServer) -> None:
    schema: JsonObject = {"type": "array", "items": {"type": "string"}}
    settings = ModelSettings(response_format="json_schema", json_schema=schema)
    config = generation_config(await send(wire_server, [UserMessage("q")], settings=settings))
    assert (config["responseMimeType"], field(config, "responseJsonSchema")) == ("application/json", schema)


async def test_extra_is_merged_into_the_request_body(wire_server: WireServer) -> None:
    safety: list[JsonValue] = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
    settings = ModelSettings(
        temperature=0.1, extra={"generationConfig": {"topK": 5}, "safetySettings": safety}
    )
    request = await send(wire_server, [UserMessage("q")], settings=settings)
    assert generation_config(request) == {"temperature": 0.1, "topK": 5}
    assert request.json()["safetySettings"] == safety


async def test_adapter_settings_are_defaults_under_per_call_settings(wire_server: WireServer) -> None:
    defaults = ModelSettings(temperature=0.1, max_output_tokens=100)
    adapter = GeminiAdapter(
        "gemini-2.5-flash", api_key=API_KEY, base_url=wire_server.base_url, settings=defaults, timeout=5.0
    )
    wire_server.enqueue(json_reply(body([text("ok")])))
    await adapter.chat([UserMessage("q")], settings=ModelSettings(temperature=0.7))
    assert generation_config(wire_server.requests[0]) == {"temperature": 0.7, "maxOutputTokens": 100}
