"""Azure OpenAI over the wire: the official ``openai`` SDK's ``AsyncAzureOpenAI`` talks to a loopback
server that checks what Azure checks — the deployment URL shape, ``?api-version=``, and the ``api-key``
header (or an Entra ID bearer token) — for Chat Completions and the Responses API, whole and streamed."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import pytest

from kanawa import Agent, tool
from kanawa.llm import resolve_model
from kanawa.llm.errors import LLMAuthError, LLMBadRequestError, LLMError
from kanawa.llm.openai.azure import DEFAULT_API_VERSION, AzureOpenAIAdapter, AzureOpenAIChatAdapter
from kanawa.llm.retry import NO_RETRY
from kanawa.types import ResponseCompleted, TextDelta, ToolCallStarted, UserMessage
from tests.llm.openai_chat.wire import chunk, completion, stream, tool_delta, usage_chunk
from tests.llm.openai_responses.wire import text_response
from tests.wire.server import RecordedRequest, Reply, WireServer, json_reply

KEY = "azure-test-key-0123456789abcdef"
DEPLOYMENT = "Prod_GPT5-mini"


@pytest.fixture(autouse=True)
def _no_ambient_azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_AD_TOKEN",
        "OPENAI_API_VERSION",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def azure_only(reply: Reply, *, path: str, auth: Callable[[RecordedRequest], bool]) -> Callable[..., Reply]:
    """Answer ``reply`` only to a request Azure would accept: the right path, an api-version, auth."""

    def handle(request: RecordedRequest) -> Reply:
        route, _, query = request.path.partition("?")
        if route != path or "api-version=" not in query:
            return json_reply({"error": {"code": "404", "message": f"Resource not found: {route}"}}, 404)
        if not auth(request):
            return json_reply({"error": {"code": "401", "message": "Access denied"}}, 401)
        return reply

    return handle


def has_key(request: RecordedRequest) -> bool:
    return request.headers.get("api-key") == KEY and "authorization" not in request.headers


def has_bearer(token: str) -> Callable[[RecordedRequest], bool]:
    def check(request: RecordedRequest) -> bool:
        return request.headers.get("authorization") == f"Bearer {token}" and "api-key" not in request.headers

    return check


CHAT_PATH = f"/openai/deployments/{DEPLOYMENT}/chat/completions"
RESPONSES_PATH = "/openai/responses"


def chat_adapter(server: WireServer, **kwargs: object) -> AzureOpenAIChatAdapter:
    return AzureOpenAIChatAdapter(DEPLOYMENT, endpoint=server.base_url, timeout=5.0, **kwargs)  # type: ignore[arg-type]


async def test_chat_completions_go_to_the_deployment_url_with_the_api_key_header(
    wire_server: WireServer,
) -> None:
    wire_server.enqueue(azure_only(completion({"content": "hi from Azure"}), path=CHAT_PATH, auth=has_key))
    adapter = chat_adapter(wire_server, api_key=KEY)
    response = await adapter.chat([UserMessage("hello")])
    assert response.message.text == "hi from Azure"
    sent = wire_server.requests[0]
    assert sent.path == f"{CHAT_PATH}?api-version={DEFAULT_API_VERSION}"
    assert sent.json()["model"] == DEPLOYMENT
    assert "max_tokens" not in sent.json()
    assert adapter.provider == "azure-chat"


async def test_chat_completions_stream_tool_calls_from_an_azure_deployment(wire_server: WireServer) -> None:
    reply = stream(
        chunk({"role": "assistant", "content": ""}),
        chunk(tool_delta(0, call_id="call_1", name="lookup", arguments='{"q": ')),
        chunk(tool_delta(0, arguments='"kanawa"}')),
        chunk(finish="tool_calls"),
        usage_chunk(40, 9),
    )
    wire_server.enqueue(azure_only(reply, path=CHAT_PATH, auth=has_key))
    adapter = chat_adapter(wire_server, api_key=KEY, api_version="2024-10-21")
    events = [event async for event in adapter.stream([UserMessage("find kanawa")])]
    assert [e.name for e in events if isinstance(e, ToolCallStarted)] == ["lookup"]
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.message.tool_calls[0].arguments == '{"q": "kanawa"}'
    assert final.response.usage.input_tokens == 40
    assert wire_server.requests[0].path.endswith("?api-version=2024-10-21")
    assert wire_server.requests[0].json()["stream"] is True


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "stream"])
async def test_the_responses_api_goes_to_openai_responses_with_the_deployment_as_model(
    wire_server: WireServer, streaming: bool
) -> None:
    script = text_response("Responses on Azure", model=DEPLOYMENT)
    reply = script.sse() if streaming else script.json()
    wire_server.enqueue(azure_only(reply, path=RESPONSES_PATH, auth=has_key))
    adapter = AzureOpenAIAdapter(DEPLOYMENT, endpoint=wire_server.base_url, api_key=KEY, timeout=5.0)
    if streaming:
        events = [event async for event in adapter.stream([UserMessage("hello")])]
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Responses on Azure"
        final = events[-1]
        assert isinstance(final, ResponseCompleted)
        text = final.response.message.text
    else:
        text = (await adapter.chat([UserMessage("hello")])).message.text
    assert text == "Responses on Azure"
    body = wire_server.requests[0].json()
    assert body["model"] == DEPLOYMENT  # sent exactly as given, never lower-cased or re-hyphenated
    assert body.get("stream", False) is streaming


def sync_token(token: str) -> Callable[[], str]:
    return lambda: token


def async_token(token: str) -> Callable[[], Awaitable[str]]:
    async def provide() -> str:
        return token

    return provide


@pytest.mark.parametrize("make", [sync_token, async_token], ids=["sync", "async"])
async def test_an_entra_id_token_provider_authenticates_each_request_with_a_bearer_token(
    wire_server: WireServer, make: Callable[[str], Callable[[], object]]
) -> None:
    token = "eyJ0eXAiOiJKV1Qi.entra-token-for-test.signature"
    wire_server.enqueue(azure_only(completion({"content": "ok"}), path=CHAT_PATH, auth=has_bearer(token)))
    adapter = chat_adapter(wire_server, azure_ad_token_provider=make(token))
    assert (await adapter.chat([UserMessage("hello")])).message.text == "ok"


async def test_a_token_provider_that_fails_is_an_auth_error_naming_only_the_failure(
    wire_server: WireServer,
) -> None:
    def broken() -> str:
        raise RuntimeError("secret-bearing detail that must not show")

    adapter = chat_adapter(wire_server, azure_ad_token_provider=broken)
    with pytest.raises(LLMAuthError) as caught:
        await adapter.chat([UserMessage("hello")])
    assert "RuntimeError" in str(caught.value)
    assert "secret-bearing" not in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    assert wire_server.requests == []


async def test_model_strings_and_the_environment_configure_azure(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", wire_server.base_url)
    monkeypatch.setenv("OPENAI_API_VERSION", "2025-03-01-preview")
    wire_server.enqueue(
        azure_only(completion({"content": "via env"}), path=CHAT_PATH, auth=has_key),
        azure_only(text_response("responses via env").json(), path=RESPONSES_PATH, auth=has_key),
    )
    chat = resolve_model(f"azure-chat:{DEPLOYMENT}", retry_policy=NO_RETRY)
    assert (await chat.chat([UserMessage("hi")])).message.text == "via env"
    responses = resolve_model(f"azure:{DEPLOYMENT}", retry_policy=NO_RETRY)
    assert (await responses.chat([UserMessage("hi")])).message.text == "responses via env"
    assert all(r.path.endswith("?api-version=2025-03-01-preview") for r in wire_server.requests)


async def test_an_endpoint_in_the_model_string_wins_over_the_environment(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    wire_server.enqueue(azure_only(completion({"content": "here"}), path=CHAT_PATH, auth=has_key))
    adapter = resolve_model(
        f"azure-chat:{DEPLOYMENT}@{wire_server.base_url}", api_key=KEY, retry_policy=NO_RETRY
    )
    assert (await adapter.chat([UserMessage("hi")])).message.text == "here"


def test_without_an_endpoint_or_a_credential_the_constructor_says_what_to_set() -> None:
    with pytest.raises(LLMBadRequestError, match="AZURE_OPENAI_ENDPOINT"):
        AzureOpenAIChatAdapter(DEPLOYMENT, api_key=KEY)
    with pytest.raises(LLMAuthError, match="AZURE_OPENAI_API_KEY"):
        AzureOpenAIAdapter(DEPLOYMENT, endpoint="https://example.openai.azure.com")


async def test_an_azure_error_maps_like_openai_and_names_the_azure_provider(wire_server: WireServer) -> None:
    wire_server.enqueue(
        json_reply(
            {
                "error": {
                    "code": "DeploymentNotFound",
                    "message": "The API deployment for this resource does not exist.",
                }
            },
            404,
        )
    )
    adapter = chat_adapter(wire_server, api_key=KEY)
    with pytest.raises(LLMError) as caught:
        await adapter.chat([UserMessage("hello")])
    assert caught.value.status_code == 404
    assert caught.value.provider == "azure-chat"
    assert caught.value.code == "DeploymentNotFound"


@tool
def lookup(q: str) -> str:
    """Look something up.

    Args:
        q: what to look up
    """
    return f"{q} is an agent framework"


async def test_an_agent_runs_a_tool_turn_through_an_azure_deployment(wire_server: WireServer) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup", "arguments": json.dumps({"q": "kanawa"})},
    }
    wire_server.enqueue(
        azure_only(
            completion({"content": None, "tool_calls": [call]}, finish="tool_calls"),
            path=CHAT_PATH,
            auth=has_key,
        ),
        azure_only(completion({"content": "kanawa is an agent framework."}), path=CHAT_PATH, auth=has_key),
    )
    agent = Agent(
        "azure", "Answer with the tool.", model=chat_adapter(wire_server, api_key=KEY), tools=[lookup]
    )
    result = await agent.arun("what is kanawa?")
    assert result.output == "kanawa is an agent framework."
    tool_turn = wire_server.requests[1].json()["messages"]
    assert tool_turn[-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "kanawa is an agent framework",
    }
