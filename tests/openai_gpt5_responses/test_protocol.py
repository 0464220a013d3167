"""The model plugin through Dify's real plugin protocol: ``python -m main`` with INSTALL_METHOD=local,
JSON-line requests on stdin, a loopback server speaking the Responses API (seed 001 §3.2–§3.9)."""

from __future__ import annotations

import json
from typing import Any

from tests.llm.openai_responses.wire import ResponseScript, text_response
from tests.openai_gpt5_responses.conftest import API_KEY, credentials
from tests.wire.dify_plugin import DifyPluginProcess, SessionResult
from tests.wire.server import WireServer, json_reply

SCHEMA = {
    "name": "answer",
    "schema": {"type": "object", "properties": {"a": {"type": "string"}}},
    "strict": "1",
}
TOOL = {"name": "lookup", "description": "Look a word up", "parameters": {"type": "object", "properties": {}}}


def invoke(plugin: DifyPluginProcess, server: WireServer, **fields: Any) -> SessionResult:
    data: dict[str, Any] = {
        "type": "model",
        "action": "invoke_llm",
        "user_id": "user-1",
        "provider": "openai_gpt5",
        "model_type": "llm",
        "model": "gpt-5",
        "credentials": credentials(server),
        "prompt_messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "model_parameters": {},
        "stop": None,
        "tools": None,
        "stream": True,
    }
    data.update(fields)
    return plugin.request(data)


def text_of(result: SessionResult) -> str:
    return "".join(chunk["delta"]["message"]["content"] or "" for chunk in result.stream)


def test_manifest_line_declares_the_seed_3_2_runner(model_plugin: DifyPluginProcess) -> None:
    meta = model_plugin.manifest["meta"]
    assert meta["runner"] == {"language": "python", "version": "3.12", "entrypoint": "main"}
    assert meta["minimum_dify_version"] == "1.10.0"
    assert model_plugin.manifest["plugins"]["models"] == ["provider/openai_gpt5.yaml"]


def test_streamed_answer_shows_reasoning_as_think_and_carries_opaque_body(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(ResponseScript().reasoning("Plan the reply.").message("Hello!").completed().sse())
    result = invoke(model_plugin, server)
    assert result.error is None, result.error
    assert text_of(result) == "<think>\nPlan the reply.\n</think>Hello!"
    final = result.stream[-1]["delta"]
    assert final["usage"]["prompt_tokens"] == 120
    assert final["usage"]["completion_tokens"] == 90
    assert final["finish_reason"] == "stop"
    carried = final["message"]["opaque_body"]["kanawa_responses"]
    assert carried["reasoning"][0]["encrypted_content"] == "gAAAAABenc-0001"
    assert carried["message_items"] == []  # no phase labels in this answer: nothing to keep
    body = server.requests[0].json()
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]


def test_message_phase_of_gpt5x_is_kept_in_opaque_body(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    script = ResponseScript(model="gpt-5.2").reasoning("r").message("Checking.")
    script.output[1]["phase"] = "commentary"
    server.enqueue(script.json())
    result = invoke(model_plugin, server, model="gpt-5.2", model_parameters={"enable_stream": False})
    carried = result.stream[-1]["delta"]["message"]["opaque_body"]["kanawa_responses"]
    assert carried["message_items"] == [{"text": "Checking.", "phase": "commentary"}]
    assert carried["reasoning"][0]["id"] == "rs_0001"


def test_seed_6_defaults_are_sent_when_the_form_sends_nothing(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(text_response("ok").sse())
    assert invoke(model_plugin, server, tools=[TOOL]).error is None
    body = server.requests[0].json()
    assert body["max_output_tokens"] == 8192
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["text"] == {"verbosity": "medium"}
    assert body["tool_choice"] == "auto"
    assert body["parallel_tool_calls"] is True
    assert body["stream"] is True


def test_every_declared_parameter_reaches_the_responses_request(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    """Seed 001 §3.5/§3.6: the SDK drops undeclared parameters, so each one is checked on the wire."""
    server.enqueue(text_response('{"a": "x"}').json())
    parameters = {
        "max_output_tokens": 1234,
        "reasoning_effort": "high",
        "reasoning_summary": "detailed",
        "verbosity": "low",
        "response_format": "json_schema",
        "json_schema": json.dumps(SCHEMA),
        "tool_choice": "lookup",
        "parallel_tool_calls": False,
        "enable_stream": False,
    }
    result = invoke(model_plugin, server, model_parameters=parameters, tools=[TOOL])
    assert result.error is None, result.error
    assert text_of(result) == '{"a": "x"}'
    body = server.requests[0].json()
    assert body["max_output_tokens"] == 1234
    assert body["reasoning"] == {"effort": "high", "summary": "detailed"}
    assert body["text"]["verbosity"] == "low"
    assert body["text"]["format"] == {
        "type": "json_schema",
        "name": "answer",
        "schema": SCHEMA["schema"],
        "strict": True,
    }
    assert body["tool_choice"] == {"type": "function", "name": "lookup"}
    assert body["parallel_tool_calls"] is False
    assert body["stream"] is False
    assert body["tools"][0]["name"] == "lookup"


def test_stream_flag_false_from_the_caller_wins_over_enable_stream(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(text_response("blocking").json())
    result = invoke(model_plugin, server, stream=False)
    assert result.error is None
    assert server.requests[0].json()["stream"] is False
    assert text_of(result) == "blocking"


def test_stop_words_send_truncation_disabled_and_cut_the_text(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(text_response("Answer: 42\nObservation: more").sse())
    result = invoke(model_plugin, server, stop=["Observation:"])
    body = server.requests[0].json()
    assert "stop" not in body
    assert body["truncation"] == "disabled"
    assert text_of(result) == "Answer: 42\n"


def test_function_calls_come_back_as_tool_calls(model_plugin: DifyPluginProcess, server: WireServer) -> None:
    script = (
        ResponseScript().reasoning("Need data.").function_call("lookup", '{"q": "kanawa"}', call_id="call_1")
    )
    server.enqueue(script.completed().sse())
    result = invoke(model_plugin, server, tools=[TOOL])
    final = result.stream[-1]["delta"]
    assert final["message"]["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "kanawa"}'}}
    ]
    assert final["finish_reason"] == "tool_calls"


def test_opaque_body_is_replayed_as_reasoning_and_phase_items(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(text_response("second").sse())
    reasoning = {"id": "rs_9", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA-secret"}
    history = [
        {"role": "user", "content": "first"},
        {
            "role": "assistant",
            "content": "<think>\nshown thought\n</think>Let me check.",
            "tool_calls": [
                {"id": "call_7", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
            ],
            "opaque_body": {
                "kanawa_responses": {
                    "version": 1,
                    "reasoning": [reasoning],
                    "message_items": [{"text": "Let me check.", "phase": "commentary"}],
                }
            },
        },
        {"role": "tool", "content": "", "tool_call_id": "call_7", "name": "lookup"},
    ]
    assert invoke(model_plugin, server, prompt_messages=history, tools=[TOOL]).error is None
    items = server.requests[0].json()["input"]
    assert items[1] == reasoning
    assert items[2] == {"role": "assistant", "content": "Let me check.", "phase": "commentary"}
    assert items[3] == {"type": "function_call", "call_id": "call_7", "name": "lookup", "arguments": "{}"}
    assert items[4] == {"type": "function_call_output", "call_id": "call_7", "output": ""}


def test_an_assistant_message_without_opaque_body_is_sent_as_text(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(text_response("ok").sse())
    history = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    assert invoke(model_plugin, server, prompt_messages=history).error is None
    items = server.requests[0].json()["input"]
    assert items[1] == {"role": "assistant", "content": "b"}
    assert not any(item.get("type") == "reasoning" for item in items)


def test_api_errors_become_dify_invoke_errors(model_plugin: DifyPluginProcess, server: WireServer) -> None:
    server.enqueue(json_reply({"error": {"message": "Incorrect API key", "code": "invalid_api_key"}}, 401))
    auth = invoke(model_plugin, server)
    assert auth.error is not None
    assert auth.error["error_type"] == "InvokeAuthorizationError"
    server.enqueue(json_reply({"error": {"message": "slow down", "code": "rate_limit_exceeded"}}, 429))
    assert invoke(model_plugin, server).error["error_type"] == "InvokeRateLimitError"
    server.enqueue(json_reply({"error": {"message": "bad", "param": "input"}}, 400))
    assert invoke(model_plugin, server).error["error_type"] == "InvokeBadRequestError"
    assert API_KEY not in json.dumps([auth.error])


def test_invalid_json_schema_is_a_bad_request_before_any_http(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    params = {"response_format": "json_schema", "json_schema": '{"name": "x"}'}
    result = invoke(model_plugin, server, model_parameters=params)
    assert result.error is not None
    assert "schema" in result.error["message"]
    assert server.requests == []


def test_bool_like_strings_are_refused_by_the_declared_boolean_rule(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    result = invoke(model_plugin, server, model_parameters={"enable_stream": "yes"})
    assert result.error is not None
    assert server.requests == []


def test_provider_credentials_are_validated_with_models_list(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(json_reply({"object": "list", "data": []}))
    request = {
        "type": "model",
        "action": "validate_provider_credentials",
        "user_id": "u",
        "provider": "openai_gpt5",
        "credentials": credentials(server, openai_api_base=server.base_url + "/"),
    }
    result = model_plugin.request(request)
    assert result.error is None
    assert result.stream[0]["result"] is True
    assert server.requests[0].path == "/v1/models"
    server.enqueue(json_reply({"error": {"message": "bad key"}}, 401))
    assert model_plugin.request(request).error["error_type"] == "CredentialsValidateFailedError"
    no_key = {**request, "credentials": {"openai_api_base": server.base_url}}
    failed = model_plugin.request(no_key).error
    assert failed["error_type"] == "CredentialsValidateFailedError"
    assert "openai_api_key is required" in failed["message"]


def test_model_credentials_are_validated_with_a_ping_response(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(text_response("pong").json())
    result = model_plugin.request(
        {
            "type": "model",
            "action": "validate_model_credentials",
            "user_id": "u",
            "provider": "openai_gpt5",
            "model_type": "llm",
            "model": "my-gpt-5-deployment",
            "credentials": credentials(server),
        }
    )
    assert result.error is None
    body = server.requests[0].json()
    assert body["model"] == "my-gpt-5-deployment"
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "ping"}]}]


def test_num_tokens_are_counted_offline(model_plugin: DifyPluginProcess, server: WireServer) -> None:
    result = model_plugin.request(
        {
            "type": "model",
            "action": "get_llm_num_tokens",
            "user_id": "u",
            "provider": "openai_gpt5",
            "model_type": "llm",
            "model": "gpt-5",
            "credentials": {"openai_api_key": API_KEY, "openai_api_base": "http://127.0.0.1:9"},
            "prompt_messages": [{"role": "user", "content": "How many tokens is this sentence?"}],
            "tools": [TOOL],
        }
    )
    assert result.error is None, result.error
    assert 8 <= result.stream[0]["num_tokens"] <= 80
    assert server.requests == []


def test_audit_log_records_calls_without_secrets(model_plugin: DifyPluginProcess, server: WireServer) -> None:
    server.enqueue(text_response("audited").sse(headers={"x-request-id": "req_audit_1"}))
    before = len(model_plugin.logs)
    invoke(model_plugin, server, prompt_messages=[{"role": "user", "content": "top secret prompt"}])
    records = [
        json.loads(log["message"]) for log in model_plugin.logs[before:] if "responses_api" in log["message"]
    ]
    assert [r["event"] for r in records] == ["responses_api_request", "responses_api_success"]
    assert records[1]["request_id"] == "req_audit_1"
    assert records[0]["base_url_host"].startswith("127.0.0.1:")
    assert records[0]["use_custom_base_url"] is True
    text = json.dumps(records)
    assert "top secret prompt" not in text
    assert API_KEY not in text


def test_a_customizable_model_gets_the_full_parameter_schema(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    result = model_plugin.request(
        {
            "type": "model",
            "action": "get_ai_model_schemas",
            "user_id": "u",
            "provider": "openai_gpt5",
            "model_type": "llm",
            "model": "gpt-5.1",
            "credentials": credentials(server),
        }
    )
    assert result.error is None, result.error
    schema = result.stream[0]["model_schema"]
    assert schema["model"] == "gpt-5.1"
    assert schema["fetch_from"] == "customizable-model"
    assert [r["name"] for r in schema["parameter_rules"]][:2] == ["max_output_tokens", "reasoning_effort"]
    assert "vision" not in schema["features"]


def test_a_customizable_model_accepts_its_declared_parameters(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    server.enqueue(text_response("custom").sse())
    result = invoke(model_plugin, server, model="gpt-5.1", model_parameters={"verbosity": "high"})
    assert result.error is None, result.error
    body = server.requests[0].json()
    assert body["model"] == "gpt-5.1"
    assert body["text"] == {"verbosity": "high"}


def test_tool_choice_naming_a_tool_not_offered_is_a_bad_request(
    model_plugin: DifyPluginProcess, server: WireServer
) -> None:
    result = invoke(model_plugin, server, model_parameters={"tool_choice": "missing_tool"}, tools=[TOOL])
    assert result.error is not None
    assert result.error["error_type"] == "InvokeBadRequestError"
    assert "missing_tool" in result.error["message"]
    assert server.requests == []
