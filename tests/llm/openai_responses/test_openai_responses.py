"""``OpenAIResponsesAdapter`` over the wire: what it sends (seed 001 §3.6, §3.7), what ``chat`` returns,
and how HTTP faults map to errors (seed 002 §3-3, §7)."""

from __future__ import annotations

import pytest

from kanawa.llm import resolve_model
from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMRateLimitError,
    LLMTimeoutError,
)
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.types import (
    AssistantMessage,
    OutputSchema,
    StopReason,
    SystemMessage,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from tests.llm.openai_responses.conftest import API_KEY, MakeAdapter
from tests.llm.openai_responses.wire import ResponseScript, text_response
from tests.wire.server import Delay, Reply, WireServer, json_reply

ADD = ToolSpec("add", "Add two integers.", {"type": "object", "properties": {"a": {"type": "integer"}}})
MUL = ToolSpec("mul", "Multiply.", {"type": "object", "properties": {}}, strict=True)


async def test_chat_posts_to_v1_responses_with_bearer_key_and_no_sdk_retries(
    wire_server: WireServer, make_adapter: MakeAdapter
) -> None:
    wire_server.enqueue(text_response("hi").json())
    adapter = make_adapter(organization="org-kanawa")
    await adapter.chat([UserMessage("hello")])
    (request,) = wire_server.requests
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["openai-organization"] == "org-kanawa"
    assert request.headers["x-stainless-retry-count"] == "0"


async def test_every_mapping_row_reaches_the_wire(wire_server: WireServer, make_adapter: MakeAdapter) -> None:
    wire_server.enqueue(text_response("ok").json())
    adapter = make_adapter(settings=ModelSettings(max_output_tokens=8192, reasoning_effort="medium"))
    call_settings = ModelSettings(
        reasoning_summary="detailed",
        verbosity="high",
        tool_choice="add",
        parallel_tool_calls=True,
        stop=("###",),
        timeout=7.5,
    )
    await adapter.chat(
        [SystemMessage("Be exact."), UserMessage("2+2?")], tools=[ADD, MUL], settings=call_settings
    )
    sent = wire_server.requests[0].json()
    assert sent == {
        "model": "gpt-5",
        "instructions": "Be exact.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "2+2?"}]}],
        "tools": [
            {
                "type": "function",
                "name": "add",
                "description": ADD.description,
                "parameters": ADD.parameters,
                "strict": False,
            },
            {
                "type": "function",
                "name": "mul",
                "description": MUL.description,
                "parameters": MUL.parameters,
                "strict": True,
            },
        ],
        "tool_choice": {"type": "function", "name": "add"},
        "parallel_tool_calls": True,
        "max_output_tokens": 8192,
        "reasoning": {"effort": "medium", "summary": "detailed"},
        "text": {"verbosity": "high"},
        "truncation": "disabled",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": False,
    }
    assert wire_server.requests[0].headers["x-stainless-read-timeout"] == "7.5"


async def test_json_schema_setting_and_response_schema_map_to_text_format(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(text_response('{"v": 1}').json(), text_response('{"v": 2}').json())
    settings = ModelSettings(
        response_format="json_schema", json_schema={"name": "S", "schema": {"type": "object"}}
    )
    await adapter.chat([UserMessage("x")], settings=settings)
    schema = OutputSchema("Answer", {"type": "object", "properties": {"v": {"type": "integer"}}})
    await adapter.chat([UserMessage("x")], response_schema=schema)
    first, second = (r.json()["text"]["format"] for r in wire_server.requests)
    assert first == {"type": "json_schema", "name": "S", "schema": {"type": "object"}}
    assert second == {"type": "json_schema", "name": "Answer", "schema": schema.schema, "strict": True}


async def test_chat_returns_text_calls_reasoning_usage(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    script = (
        ResponseScript()
        .reasoning("Need both sums.")
        .function_call("add", '{"a": 1}', call_id="call_1")
        .function_call("add", '{"a": 2}', call_id="call_2")
    )
    wire_server.enqueue(script.json(headers={"x-request-id": "req_chat"}))
    response = await adapter.chat([UserMessage("sum")], tools=[ADD])
    assert response.stop_reason is StopReason.TOOL_USE
    assert [(c.id, c.arguments) for c in response.message.tool_calls] == [
        ("call_1", '{"a": 1}'),
        ("call_2", '{"a": 2}'),
    ]
    assert response.message.reasoning[0].text == "Need both sums."
    assert response.message.reasoning[0].payload == script.output[0]
    assert (response.usage.reasoning_tokens, response.usage.cached_tokens) == (48, 64)
    assert response.response_id == "resp_0001"


async def test_incomplete_max_output_tokens_is_max_tokens(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(
        ResponseScript().message("cut").json(status="incomplete", incomplete_reason="max_output_tokens")
    )
    response = await adapter.chat([UserMessage("long")])
    assert (response.message.text, response.stop_reason) == ("cut", StopReason.MAX_TOKENS)


async def test_stop_sequence_is_applied_client_side_in_chat(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(text_response("Answer: 4\n###\nmore").json())
    response = await adapter.chat([UserMessage("x")], settings=ModelSettings(stop=("###",)))
    assert (response.message.text, response.stop_reason) == ("Answer: 4\n", StopReason.STOP_SEQUENCE)


async def test_second_turn_replays_reasoning_verbatim_calls_and_outputs(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    first = (
        ResponseScript(response_id="resp_1")
        .reasoning("Plan.", encrypted="gAAAA-ENCRYPTED-1")
        .function_call("add", '{"a": 1}', call_id="call_1")
        .function_call("mul", "{}", call_id="call_2")
    )
    wire_server.enqueue(first.json(), text_response("done").json())
    history = [UserMessage("go")]
    turn = await adapter.chat(history, tools=[ADD, MUL])
    history += [turn.message, ToolMessage("call_1", "2"), ToolMessage("call_2", "")]
    await adapter.chat(history, tools=[ADD, MUL])
    sent = wire_server.requests[1].json()["input"]
    assert sent == [
        {"role": "user", "content": [{"type": "input_text", "text": "go"}]},
        first.output[0],
        {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": '{"a": 1}'},
        {"type": "function_call", "call_id": "call_2", "name": "mul", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "2"},
        {"type": "function_call_output", "call_id": "call_2", "output": ""},
    ]
    assert sent[1]["encrypted_content"] == "gAAAA-ENCRYPTED-1"


async def test_foreign_reasoning_is_dropped_on_replay(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    from kanawa.types import ReasoningPart

    wire_server.enqueue(text_response("ok").json())
    foreign = AssistantMessage(
        text="prior", reasoning=(ReasoningPart(text="t", provider="anthropic", payload={"signature": "s"}),)
    )
    await adapter.chat([UserMessage("a"), foreign, UserMessage("b")])
    assert [item.get("type", item.get("role")) for item in wire_server.requests[0].json()["input"]] == [
        "user",
        "assistant",
        "user",
    ]


async def test_nameless_tool_is_value_error_and_nothing_is_sent(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    with pytest.raises(ValueError, match="tool name is missing"):
        await adapter.chat([UserMessage("x")], tools=[ToolSpec("", "d", {"type": "object"})])
    assert wire_server.requests == []


async def test_catalogue_rejects_before_any_request(
    wire_server: WireServer, make_adapter: MakeAdapter
) -> None:
    adapter = make_adapter("gpt-5.2")
    with pytest.raises(LLMBadRequestError, match=r"reasoning_effort 'minimal' is not supported by gpt-5\.2"):
        await adapter.chat([UserMessage("x")], settings=ModelSettings(reasoning_effort="minimal"))
    with pytest.raises(LLMBadRequestError):
        async for _ in adapter.stream([UserMessage("x")], settings=ModelSettings(reasoning_effort="minimal")):
            pass
    assert wire_server.requests == []


def test_missing_api_key_names_openai_api_key(wire_server: WireServer) -> None:
    with pytest.raises(LLMAuthError) as info:
        OpenAIResponsesAdapter("gpt-5", base_url=wire_server.base_url)
    assert str(info.value).splitlines() == [str(info.value)]
    assert "OPENAI_API_KEY is not set: pass api_key=... or export OPENAI_API_KEY" in str(info.value)


def test_api_key_from_environment(monkeypatch: pytest.MonkeyPatch, wire_server: WireServer) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAIResponsesAdapter("gpt-5", base_url=wire_server.base_url).model == "gpt-5"


def test_identity_normalisation_and_token_count(adapter: OpenAIResponsesAdapter) -> None:
    assert (adapter.provider, adapter.model) == ("openai", "gpt-5")
    assert adapter.normalize_model_name("openai:GPT_5 mini") == "gpt-5-mini"
    assert adapter.normalize_model_name(" gpt_4o ") == "gpt-4o"
    assert adapter.count_tokens("hello world") > 0
    assert adapter.count_tokens([UserMessage("hello world")]) >= adapter.count_tokens("hello world")


def test_resolve_model_builds_this_adapter(wire_server: WireServer) -> None:
    from kanawa.llm.retry import RetryingLLM

    resolved = resolve_model(f"openai:GPT-5-mini@{wire_server.base_url}", api_key=API_KEY)
    adapter = resolved.primary if isinstance(resolved, RetryingLLM) else resolved
    assert isinstance(adapter, OpenAIResponsesAdapter)
    assert (resolved.provider, resolved.model) == ("openai", "gpt-5-mini")


# ------------------------------------------------------------------------------------------- errors


def error_body(
    message: str, code: str | None = None, type_: str = "invalid_request_error"
) -> dict[str, object]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


async def test_429_with_retry_after_is_rate_limit(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    headers = {"retry-after": "2", "x-request-id": "req_429"}
    wire_server.enqueue(json_reply(error_body("Rate limit reached", "rate_limit_exceeded"), 429, headers))
    with pytest.raises(LLMRateLimitError) as info:
        await adapter.chat([UserMessage("x")])
    error = info.value
    assert (error.status_code, error.retry_after, error.request_id, error.code) == (
        429,
        2.0,
        "req_429",
        "rate_limit_exceeded",
    )
    assert error.retryable
    assert len(wire_server.requests) == 1


async def test_429_retry_after_ms_and_http_date(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(
        json_reply(error_body("slow"), 429, {"retry-after-ms": "250"}),
        json_reply(error_body("slow"), 429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}),
    )
    with pytest.raises(LLMRateLimitError) as first:
        await adapter.chat([UserMessage("x")])
    assert first.value.retry_after == 0.25
    with pytest.raises(LLMRateLimitError) as second:
        await adapter.chat([UserMessage("x")])
    assert second.value.retry_after == 0.0


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_is_retryable_connection_error(
    status: int, wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(json_reply(error_body("upstream", type_="server_error"), status))
    with pytest.raises(LLMConnectionError) as info:
        await adapter.chat([UserMessage("x")])
    assert info.value.status_code == status
    assert info.value.retryable


async def test_401_is_auth_error_without_the_key(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(json_reply(error_body("Incorrect API key provided.", "invalid_api_key"), 401))
    with pytest.raises(LLMAuthError) as info:
        await adapter.chat([UserMessage("x")])
    assert info.value.status_code == 401
    assert API_KEY not in str(info.value)


async def test_400_is_bad_request_with_server_message(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    body = error_body("Unsupported parameter: 'temperature'.", "unsupported_parameter")
    wire_server.enqueue(json_reply(body, 400))
    with pytest.raises(LLMBadRequestError) as info:
        await adapter.chat([UserMessage("PROMPT-MARKER-400")])
    assert info.value.message == "Unsupported parameter: 'temperature'."
    assert "PROMPT-MARKER-400" not in str(info.value)
    assert not info.value.retryable


async def test_slow_server_hits_the_timeout(wire_server: WireServer, make_adapter: MakeAdapter) -> None:
    wire_server.enqueue(Reply(200, {"content-type": "application/json"}, [Delay(2.0), b"{}"]))
    adapter = make_adapter(timeout=0.3)
    with pytest.raises(LLMTimeoutError):
        await adapter.chat([UserMessage("x")])


async def test_per_call_timeout_overrides_adapter_timeout(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(Reply(200, {"content-type": "application/json"}, [Delay(2.0), b"{}"]))
    with pytest.raises(LLMTimeoutError):
        await adapter.chat([UserMessage("x")], settings=ModelSettings(timeout=0.3))


async def test_non_json_body_is_a_connection_error(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter
) -> None:
    wire_server.enqueue(Reply(200, {"content-type": "application/json"}, [b"<html>proxy</html>"]))
    with pytest.raises(LLMConnectionError, match="malformed response body"):
        await adapter.chat([UserMessage("x")])
