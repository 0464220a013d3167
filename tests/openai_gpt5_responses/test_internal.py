"""The plugin's adapters to kanawa: credentials, parameters, messages, errors (seed 001 §3.3–§3.8)."""

from __future__ import annotations

import pytest
from dify_plugin.entities.model.message import (
    AssistantPromptMessage,
    PromptMessageTool,
    SystemPromptMessage,
    ToolPromptMessage,
    UserPromptMessage,
)
from dify_plugin.errors.model import (
    CredentialsValidateFailedError,
    InvokeAuthorizationError,
    InvokeBadRequestError,
    InvokeConnectionError,
    InvokeRateLimitError,
)

from kanawa.llm.errors import LLMAuthError, LLMBadRequestError, LLMConnectionError, LLMRateLimitError
from kanawa.llm.openai.responses_output import parse_response
from kanawa.llm.openai.responses_payload import ResponsesPayloadError, build_responses_payload
from tests.llm.openai_responses.wire import ResponseScript
from tests.openai_gpt5_responses.conftest import PLUGIN
from tests.wire.dify_paths import plugin_modules

credentials, errors, messages, payloads = plugin_modules(
    PLUGIN, "internal.credentials", "internal.errors", "internal.messages", "internal.payloads"
)
normalize_credentials, to_invoke_error = credentials.normalize_credentials, errors.to_invoke_error
opaque_body_of, restore_assistant = messages.opaque_body_of, messages.restore_assistant
prompt_messages_to_responses_input = messages.prompt_messages_to_responses_input
settings_from_parameters, tool_specs_from_dify = (
    payloads.settings_from_parameters,
    payloads.tool_specs_from_dify,
)


def test_credentials_are_normalised_per_seed_3_3() -> None:
    creds = normalize_credentials(
        {
            "openai_api_key": " sk-x ",
            "openai_organization": "  org-1 ",
            "openai_api_base": "https://proxy.example.com/",
            "request_timeout_seconds": "5",
            "max_retries": "99",
        }
    )
    assert (creds.api_key, creds.organization, creds.base_url) == (
        "sk-x",
        "org-1",
        "https://proxy.example.com/v1",
    )
    assert (creds.timeout, creds.max_retries) == (30, 5)
    assert normalize_credentials({"openai_api_key": "k", "request_timeout_seconds": "9999"}).timeout == 900
    assert normalize_credentials({"openai_api_key": "k"}).base_url is None


def test_missing_key_fails_credential_validation() -> None:
    with pytest.raises(CredentialsValidateFailedError, match="openai_api_key is required"):
        normalize_credentials({"openai_api_base": "http://x"})


@pytest.mark.parametrize(("raw", "expected"), [(True, True), ("false", False), (1, True), ("0", False)])
def test_bool_likes_are_coerced_strictly(raw: object, expected: bool) -> None:
    settings = settings_from_parameters({"enable_stream": raw, "parallel_tool_calls": raw})
    assert settings.stream is expected
    assert settings.parallel_tool_calls is expected


@pytest.mark.parametrize("raw", ["yes", 2, "", None.__class__])
def test_other_bool_likes_are_refused(raw: object) -> None:
    with pytest.raises(ValueError, match="enable_stream must be a boolean"):
        settings_from_parameters({"enable_stream": raw})


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("", "required"),
        ("[1]", "JSON object"),
        ('{"name": "x"}', "'schema' field"),
        ('{"schema": {}, "strict": "maybe"}', "json_schema.strict"),
        ("{nope", "not valid JSON"),
    ],
)
def test_json_schema_is_validated(schema: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        settings_from_parameters({"response_format": "json_schema", "json_schema": schema})


def test_stop_is_kept_for_client_side_cutting_and_truncation() -> None:
    settings = settings_from_parameters({}, ["\nObservation"])
    body = build_responses_payload("gpt-5", [], settings=settings, stream=True)
    assert body["truncation"] == "disabled"
    assert "stop" not in body


def test_a_nameless_tool_is_a_value_error() -> None:
    specs = tool_specs_from_dify([PromptMessageTool(name="", description="d", parameters={})])
    with pytest.raises(ResponsesPayloadError) as caught:
        build_responses_payload("gpt-5", [], tools=specs)
    assert isinstance(caught.value, ValueError)


def test_messages_convert_per_seed_3_7() -> None:
    instructions, items = prompt_messages_to_responses_input(
        [
            SystemPromptMessage(content="sys"),
            UserPromptMessage(content="question"),
            AssistantPromptMessage(
                content="<think>\nmine\n</think>calling",
                tool_calls=[
                    AssistantPromptMessage.ToolCall(
                        id="c1",
                        type="function",
                        function=AssistantPromptMessage.ToolCall.ToolCallFunction(
                            name="t", arguments='{"a":1}'
                        ),
                    )
                ],
            ),
            ToolPromptMessage(content="", tool_call_id="c1", name="t"),
        ]
    )
    assert instructions == "sys"
    assert items == [
        {"role": "user", "content": [{"type": "input_text", "text": "question"}]},
        {"role": "assistant", "content": "calling"},
        {"type": "function_call", "call_id": "c1", "name": "t", "arguments": '{"a":1}'},
        {"type": "function_call_output", "call_id": "c1", "output": ""},
    ]


def test_opaque_body_round_trips_the_reasoning_item() -> None:
    script = ResponseScript().reasoning("why", encrypted="gAAAA-enc").message("done")
    response = parse_response(script.response_object("completed", usage={}))
    body = opaque_body_of(response)
    assert body is not None
    restored = restore_assistant(AssistantPromptMessage(content="done", opaque_body=body))
    assert restored.reasoning[0].payload == script.output[0]
    _, items = prompt_messages_to_responses_input([AssistantPromptMessage(content="done", opaque_body=body)])
    assert items[0]["encrypted_content"] == "gAAAA-enc"


def test_foreign_opaque_body_is_ignored() -> None:
    restored = restore_assistant(AssistantPromptMessage(content="x", opaque_body={"other_plugin": [1]}))
    assert restored.reasoning == ()
    assert restored.text == "x"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (LLMAuthError("no", provider="openai"), InvokeAuthorizationError),
        (LLMRateLimitError("slow", provider="openai"), InvokeRateLimitError),
        (LLMConnectionError("down", provider="openai"), InvokeConnectionError),
        (LLMBadRequestError("bad", provider="openai"), InvokeBadRequestError),
        (ValueError("bad"), InvokeBadRequestError),
    ],
)
def test_errors_map_to_dify_invoke_errors(error: Exception, expected: type) -> None:
    assert type(to_invoke_error(error)) is expected
