"""The blocking Responses caller used by the Dify model plugin: same body, parsing, errors and audit
as the async adapter, over the real HTTP wire (seed 001 §3.6, §3.8, §3.9)."""

from __future__ import annotations

import json
import logging

import pytest

from kanawa.llm.errors import LLMAuthError, LLMConnectionError
from kanawa.llm.openai.credentials import OpenAICredentials
from kanawa.llm.openai.responses_sync import OpenAIResponsesSyncClient
from kanawa.llm.settings import ModelSettings
from kanawa.types import ResponseCompleted, TextDelta, UserMessage
from tests.llm.openai_responses.conftest import API_KEY
from tests.llm.openai_responses.wire import ResponseScript, text_response
from tests.wire.server import Disconnect, WireServer, json_reply, sse_reply


def _client(server: WireServer) -> OpenAIResponsesSyncClient:
    creds = OpenAICredentials.from_dict(
        {"openai_api_key": API_KEY, "openai_api_base": server.base_url, "max_retries": "0"}
    )
    return OpenAIResponsesSyncClient(creds)


def test_streamed_answer_yields_deltas_then_one_completed(wire_server: WireServer) -> None:
    wire_server.enqueue(ResponseScript().reasoning("Thinking.").message("Hello there").completed().sse())
    with _client(wire_server) as client:
        events = list(
            client.stream("gpt-5", [UserMessage("hi")], settings=ModelSettings(max_output_tokens=9))
        )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    done = [e for e in events if isinstance(e, ResponseCompleted)]
    assert len(done) == 1
    assert done[0].response.message.reasoning[0].payload is not None
    body = wire_server.requests[0].json()
    assert body["stream"] is True
    assert body["max_output_tokens"] == 9
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert wire_server.requests[0].path == "/v1/responses"


def test_enable_stream_false_makes_one_blocking_request(wire_server: WireServer) -> None:
    wire_server.enqueue(text_response("Blocking answer").json())
    with _client(wire_server) as client:
        events = list(client.stream("gpt-5", [UserMessage("hi")], settings=ModelSettings(stream=False)))
    assert len(events) == 1
    assert isinstance(events[0], ResponseCompleted)
    assert events[0].response.message.text == "Blocking answer"
    assert wire_server.requests[0].json()["stream"] is False


def test_http_401_is_an_auth_error_and_is_audited(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_GPT5_AUDIT_LOG", "true")
    wire_server.enqueue(json_reply({"error": {"message": "bad key", "code": "invalid_api_key"}}, 401))
    with (
        _client(wire_server) as client,
        caplog.at_level(logging.INFO, "kanawa.audit"),
        pytest.raises(LLMAuthError),
    ):
        list(client.stream("gpt-5", [UserMessage("secret prompt")]))
    records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "kanawa.audit"]
    assert [r["event"] for r in records] == ["responses_api_request", "responses_api_error"]
    assert records[1]["status_code"] == 401
    assert all("secret prompt" not in json.dumps(r) and API_KEY not in json.dumps(r) for r in records)


def test_a_stream_cut_before_completion_is_a_connection_error(wire_server: WireServer) -> None:
    script = ResponseScript().message("partial")
    wire_server.enqueue(sse_reply([*script.events[:4], Disconnect()]))
    with _client(wire_server) as client, pytest.raises(LLMConnectionError):
        list(client.stream("gpt-5", [UserMessage("hi")]))


def test_list_models_reads_the_model_ids(wire_server: WireServer) -> None:
    wire_server.enqueue(
        json_reply(
            {
                "object": "list",
                "data": [{"id": "gpt-5", "object": "model", "created": 0, "owned_by": "openai"}],
            }
        )
    )
    with _client(wire_server) as client:
        assert client.list_models() == ["gpt-5"]
    assert wire_server.requests[0].path == "/v1/models"
