"""Claude on Amazon Bedrock over the wire: the Anthropic SDK's ``AsyncAnthropicBedrock`` (botocore signs
with SigV4 and decodes the AWS event stream) talks to a loopback server that checks what Bedrock
checks — the ``/model/<id>/invoke`` and ``/invoke-with-response-stream`` paths, a SigV4
``Authorization`` for the right key, region and service — and answers JSON or event-stream frames."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from kanawa import Agent, tool
from kanawa.llm import resolve_model
from kanawa.llm.anthropic.bedrock import BedrockAnthropicAdapter
from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
)
from kanawa.llm.retry import NO_RETRY
from kanawa.types import ResponseCompleted, TextDelta, ToolCallStarted, UserMessage
from tests.llm.anthropic.wire import message, message_end, message_start, text_block, tool_block
from tests.llm.bedrock.wire import event_stream, exception
from tests.wire.server import Disconnect, RecordedRequest, Reply, WireServer, json_reply

ACCESS_KEY = "AKIAFAKEKANAWATEST01"
SECRET_KEY = "fake-secret-kanawa-test-0123456789abcdef"
SESSION_TOKEN = "fake-session-token-kanawa-0123456789"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
REGION = "us-east-1"


@pytest.fixture(autouse=True)
def _fake_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    """Fake credentials from the environment only: no profile, no instance metadata, no real AWS."""
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "ANTHROPIC_BEDROCK_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/kanawa-test-aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/kanawa-test-aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def signed_for(access_key: str, region: str) -> Callable[[RecordedRequest], bool]:
    def check(request: RecordedRequest) -> bool:
        auth = request.headers.get("authorization", "")
        return (
            auth.startswith(f"AWS4-HMAC-SHA256 Credential={access_key}/")
            and f"/{region}/bedrock/aws4_request" in auth
            and "SignedHeaders=" in auth
            and "Signature=" in auth
            and "x-amz-date" in request.headers
        )

    return check


def bedrock_only(
    reply: Reply, *, stream: bool, auth: Callable[[RecordedRequest], bool] | None = None, model: str = MODEL
) -> Callable[[RecordedRequest], Reply]:
    """Answer ``reply`` only to a request Bedrock would accept."""
    check = auth or signed_for(ACCESS_KEY, REGION)
    expected = f"/model/{model}/invoke-with-response-stream" if stream else f"/model/{model}/invoke"

    def handle(request: RecordedRequest) -> Reply:
        if request.path != expected:
            return json_reply({"message": f"Unknown operation {request.path}"}, 404)
        if not check(request):
            return json_reply({"message": "The security token included in the request is invalid."}, 403)
        body = request.json()
        if "model" in body or body.get("anthropic_version") != "bedrock-2023-05-31":
            return json_reply({"message": "Malformed input request"}, 400)
        return reply

    return handle


def adapter(server: WireServer, **kwargs: object) -> BedrockAnthropicAdapter:
    return BedrockAnthropicAdapter(MODEL, base_url=server.base_url, timeout=5.0, **kwargs)  # type: ignore[arg-type]


async def test_a_whole_answer_comes_from_invoke_signed_with_sigv4(wire_server: WireServer) -> None:
    wire_server.enqueue(bedrock_only(message([{"type": "text", "text": "Hello from Bedrock"}]), stream=False))
    response = await adapter(wire_server).chat([UserMessage("hi")])
    assert response.message.text == "Hello from Bedrock"
    sent = wire_server.requests[0]
    assert sent.headers["x-amz-security-token"] == SESSION_TOKEN
    assert sent.json()["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def test_a_stream_arrives_as_aws_event_stream_frames(wire_server: WireServer) -> None:
    reply = event_stream(
        [
            message_start(input_tokens=30),
            *text_block(0, "Looking ", "it up."),
            *tool_block(1, "toolu_1", "lookup", '{"q": ', '"kanawa"}'),
            *message_end("tool_use", output_tokens=21),
        ]
    )
    wire_server.enqueue(bedrock_only(reply, stream=True))
    events = [e async for e in adapter(wire_server).stream([UserMessage("find kanawa")])]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Looking it up."
    assert [e.name for e in events if isinstance(e, ToolCallStarted)] == ["lookup"]
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.message.tool_calls[0].arguments == '{"q": "kanawa"}'
    assert final.response.usage.input_tokens == 30
    assert final.response.usage.output_tokens == 21


async def test_an_exception_frame_maps_like_the_same_fault_outside_a_stream(wire_server: WireServer) -> None:
    reply = event_stream([message_start(), exception("throttlingException", "Too many requests, slow down")])
    wire_server.enqueue(bedrock_only(reply, stream=True))
    with pytest.raises(LLMRateLimitError) as caught:
        async for _ in adapter(wire_server).stream([UserMessage("hi")]):
            pass
    assert caught.value.provider == "bedrock"
    assert "slow down" in caught.value.message


async def test_a_stream_cut_before_message_stop_is_a_retryable_connection_error(
    wire_server: WireServer,
) -> None:
    reply = event_stream([message_start(), *text_block(0, "partial"), Disconnect()])
    wire_server.enqueue(bedrock_only(reply, stream=True))
    with pytest.raises(LLMConnectionError):
        async for _ in adapter(wire_server).stream([UserMessage("hi")]):
            pass


async def test_an_http_error_names_bedrock_and_carries_its_message(wire_server: WireServer) -> None:
    wire_server.enqueue(
        json_reply(
            {"message": "Malformed input request: #: extraneous key [foo] is not permitted"},
            400,
            headers={"x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/"},
        )
    )
    with pytest.raises(LLMBadRequestError) as caught:
        await adapter(wire_server).chat([UserMessage("hi")])
    assert caught.value.provider == "bedrock"
    assert "extraneous key" in caught.value.message


async def test_explicit_keys_and_region_sign_for_that_region(wire_server: WireServer) -> None:
    wire_server.enqueue(
        bedrock_only(
            message([{"type": "text", "text": "Tokyo"}]),
            stream=False,
            auth=signed_for("AKIAOTHERFAKEKEY0002", "ap-northeast-1"),
        )
    )
    bedrock = adapter(
        wire_server,
        aws_access_key="AKIAOTHERFAKEKEY0002",
        aws_secret_key="another-fake-secret-0123456789abcdef",
        aws_region="ap-northeast-1",
    )
    assert (await bedrock.chat([UserMessage("where?")])).message.text == "Tokyo"
    assert "x-amz-security-token" not in wire_server.requests[0].headers


async def test_a_bedrock_api_key_is_sent_as_a_bearer_token_instead_of_a_signature(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-fake-0123456789")
    wire_server.enqueue(
        bedrock_only(
            message([{"type": "text", "text": "ok"}]),
            stream=False,
            auth=lambda r: r.headers.get("authorization") == "Bearer bedrock-api-key-fake-0123456789",
        )
    )
    assert (await adapter(wire_server).chat([UserMessage("hi")])).message.text == "ok"


async def test_the_model_string_resolves_with_the_region_profile_model_id(wire_server: WireServer) -> None:
    profile = "us.anthropic.claude-opus-4-6-v1:0"
    wire_server.enqueue(
        bedrock_only(message([{"type": "text", "text": "opus"}]), stream=False, model=profile)
    )
    llm = resolve_model(f"bedrock:{profile}@{wire_server.base_url}", retry_policy=NO_RETRY)
    assert (await llm.chat([UserMessage("hi")])).message.text == "opus"
    assert llm.provider == "bedrock"
    assert BedrockAnthropicAdapter(profile, base_url=wire_server.base_url).normalize_model_name() == (
        "claude-opus-4-6-v1:0"
    )


def test_missing_credentials_or_region_fail_at_construction_naming_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    with pytest.raises(LLMAuthError, match="AWS_ACCESS_KEY_ID"):
        BedrockAnthropicAdapter(MODEL)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(LLMBadRequestError, match="AWS_REGION"):
        BedrockAnthropicAdapter(MODEL)


async def test_a_server_echoing_the_credentials_leaks_none_of_them(wire_server: WireServer) -> None:
    def echo(request: RecordedRequest) -> Reply:
        seen = f"{request.headers.get('authorization')} token={request.headers.get('x-amz-security-token')}"
        return json_reply(
            {"message": f"denied for {seen} secret {SECRET_KEY}"}, 403, headers={"x-echo": seen}
        )

    wire_server.default = echo
    with pytest.raises(LLMError) as caught:
        await adapter(wire_server).chat([UserMessage("hi")])
    text = f"{caught.value!s} {caught.value!r} {vars(caught.value)!r}"
    assert caught.value.status_code == 403
    for secret in (SECRET_KEY, SESSION_TOKEN, ACCESS_KEY):
        assert secret not in text


@tool
def lookup(q: str) -> str:
    """Look something up.

    Args:
        q: what to look up
    """
    return f"{q} is an agent framework"


async def test_an_agent_runs_a_tool_turn_on_bedrock(wire_server: WireServer) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "kanawa"}}
    wire_server.enqueue(
        bedrock_only(message([call], stop_reason="tool_use"), stream=False),
        bedrock_only(message([{"type": "text", "text": "kanawa is an agent framework."}]), stream=False),
    )
    agent = Agent("bedrock", "Answer with the tool.", model=adapter(wire_server), tools=[lookup])
    result = await agent.arun("what is kanawa?")
    assert result.output == "kanawa is an agent framework."
    sent = wire_server.requests[1].json()["messages"][-1]["content"][0]
    assert sent["type"] == "tool_result"
    assert sent["tool_use_id"] == "toolu_1"
    assert json.loads(json.dumps(sent["content"]))  # the tool's answer went back
