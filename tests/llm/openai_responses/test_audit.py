"""Audit log (seed 001 §3.9): only with OPENAI_GPT5_AUDIT_LOG=true; the listed fields; no secrets."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from kanawa.llm.errors import LLMConnectionError, LLMRateLimitError
from kanawa.llm.openai.audit import AUDIT_FIELDS, AuditContext, audit_enabled, audit_request
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.types import (
    AssistantMessage,
    OutputSchema,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from tests.llm.openai_responses.conftest import API_KEY
from tests.llm.openai_responses.wire import ResponseScript, text_response
from tests.wire.server import WireServer, json_reply

MARKERS = (
    "PROMPT-MARKER-5d1",
    "INSTR-MARKER-77a",
    "SCHEMA-MARKER-c0d",
    "TOOLARG-MARKER-e42",
    "TOOLOUT-MARKER-9f",
)
REQUEST_KEYS = {"event", "model", "response_format", "stream", "tool_count", "input_message_count"} | {
    "base_url_host",
    "use_custom_base_url",
}
TOOL = ToolSpec("lookup", "Look up.", {"type": "object", "properties": {"q": {"type": "string"}}})


def conversation() -> list[Any]:
    return [
        SystemMessage(f"Follow {MARKERS[1]}."),
        UserMessage(f"Question {MARKERS[0]}"),
        AssistantMessage(tool_calls=(ToolCall("call_0", "lookup", json.dumps({"q": MARKERS[3]})),)),
        ToolMessage("call_0", f"result {MARKERS[4]}"),
    ]


def records(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "kanawa.audit"]


def assert_clean(caplog: pytest.LogCaptureFixture) -> None:
    text = caplog.text + "".join(json.dumps(getattr(r, "kanawa_audit", {})) for r in caplog.records)
    for secret in (API_KEY, "SECRETKEY", "Authorization", "authorization", "Bearer", *MARKERS):
        assert secret not in text


@pytest.fixture
def audit_on(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    monkeypatch.setenv("OPENAI_GPT5_AUDIT_LOG", "true")
    caplog.set_level(logging.DEBUG)
    return caplog


async def test_audit_is_off_by_default(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wire_server.enqueue(text_response("hi").json())
    await adapter.chat([UserMessage("x")])
    assert records(caplog) == []


@pytest.mark.parametrize(
    ("value", "enabled"), [("true", True), ("TRUE", True), ("1", True), ("false", False), ("", False)]
)
def test_switch_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch, value: str, enabled: bool) -> None:
    monkeypatch.setenv("OPENAI_GPT5_AUDIT_LOG", value)
    assert audit_enabled() is enabled


async def test_chat_request_and_success_records(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter, audit_on: pytest.LogCaptureFixture
) -> None:
    script = ResponseScript().function_call("lookup", json.dumps({"q": MARKERS[3]}), call_id="call_1")
    wire_server.enqueue(script.json(headers={"x-request-id": "req_audit_1"}))
    await adapter.chat(conversation(), tools=[TOOL])
    request, success = records(audit_on)
    assert request == {
        "event": "responses_api_request",
        "model": "gpt-5",
        "response_format": "text",
        "stream": False,
        "tool_count": 1,
        "input_message_count": 4,
        "base_url_host": f"127.0.0.1:{wire_server.port}",
        "use_custom_base_url": True,
    }
    assert success == {
        **request,
        "event": "responses_api_success",
        "response_model": "gpt-5-2025-08-07",
        "request_id": "req_audit_1",
    }
    assert_clean(audit_on)


async def test_error_record_has_status_code_param_and_type(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter, audit_on: pytest.LogCaptureFixture
) -> None:
    body = {
        "error": {
            "message": "Rate limited",
            "type": "requests",
            "param": "input",
            "code": "rate_limit_exceeded",
        }
    }
    wire_server.enqueue(json_reply(body, 429, {"x-request-id": "req_429"}))
    schema = OutputSchema("Out", {"type": "object", "properties": {MARKERS[2]: {"type": "string"}}})
    with pytest.raises(LLMRateLimitError):
        await adapter.chat(conversation(), response_schema=schema)
    request, error = records(audit_on)
    assert request["response_format"] == "json_schema"
    assert error == {
        **request,
        "event": "responses_api_error",
        "request_id": "req_429",
        "status_code": 429,
        "code": "rate_limit_exceeded",
        "param": "input",
        "error_type": "LLMRateLimitError",
    }
    assert_clean(audit_on)


async def test_stream_success_and_failure_records(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter, audit_on: pytest.LogCaptureFixture
) -> None:
    ok = (
        ResponseScript()
        .reasoning("thinking")
        .function_call("lookup", json.dumps({"q": MARKERS[3]}), call_id="c")
    )
    wire_server.enqueue(ok.completed().sse(headers={"x-request-id": "req_s1"}))
    wire_server.enqueue(
        ResponseScript().failed("server_error", "boom").sse(headers={"x-request-id": "req_s2"})
    )
    [e async for e in adapter.stream(conversation(), tools=[TOOL])]
    with pytest.raises(LLMConnectionError):
        [e async for e in adapter.stream(conversation(), tools=[TOOL])]
    events = [(r["event"], r.get("request_id"), r["stream"]) for r in records(audit_on)]
    assert events == [
        ("responses_api_request", None, True),
        ("responses_api_success", "req_s1", True),
        ("responses_api_request", None, True),
        ("responses_api_error", "req_s2", True),
    ]
    assert records(audit_on)[-1]["code"] == "server_error"
    assert_clean(audit_on)


async def test_every_record_uses_only_allow_listed_keys(
    wire_server: WireServer, adapter: OpenAIResponsesAdapter, audit_on: pytest.LogCaptureFixture
) -> None:
    wire_server.enqueue(text_response("ok").json(), json_reply({"error": {"message": "x"}}, 500))
    await adapter.chat(conversation())
    with pytest.raises(LLMConnectionError):
        await adapter.chat(conversation())
    for record in records(audit_on):
        assert set(record) <= {"event", *AUDIT_FIELDS}
        assert set(record) >= REQUEST_KEYS
        assert all(isinstance(v, str | int | bool) or v is None for v in record.values())


def test_default_base_url_is_the_openai_api(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = OpenAIResponsesAdapter("gpt-5", api_key=API_KEY)
    assert adapter.base_url.startswith("https://api.openai.com/v1")


def test_audit_context_fields_are_logged_verbatim(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_GPT5_AUDIT_LOG", "true")
    caplog.set_level(logging.INFO)
    audit_request(AuditContext("gpt-5", "text", True, 0, 1, "api.openai.com", False))
    (record,) = records(caplog)
    assert (record["base_url_host"], record["use_custom_base_url"]) == ("api.openai.com", False)
