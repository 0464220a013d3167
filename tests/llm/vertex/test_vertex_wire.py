"""Gemini and Claude on Vertex AI over the wire: ``google-genai`` (``vertexai=True``) and the Anthropic
SDK's ``AsyncAnthropicVertex`` talk to a loopback server that checks Vertex AI's paths — project,
location, publisher, model and method — and the bearer token, which the tests inject as an access
token (no network to Google, no Application Default Credentials)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kanawa.llm import resolve_model
from kanawa.llm.errors import LLMBadRequestError, LLMError
from kanawa.llm.retry import NO_RETRY
from kanawa.llm.vertex import VertexAnthropicAdapter, VertexGeminiAdapter, vertex_model
from kanawa.types import ResponseCompleted, TextDelta, ToolCallStarted, UserMessage
from tests.llm.anthropic import wire as claude
from tests.llm.gemini import wire as gemini
from tests.wire.server import RecordedRequest, Reply, WireServer, json_reply

PROJECT = "kanawa-test-project"
LOCATION = "asia-northeast1"
TOKEN = "ya29.fake-vertex-access-token-0123456789"
GEMINI = "gemini-2.5-flash"
CLAUDE = "claude-sonnet-4-5@20250929"


@pytest.fixture(autouse=True)
def _no_ambient_google_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "CLOUD_ML_REGION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "ANTHROPIC_VERTEX_BASE_URL",
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "GOOGLE_GENAI_USE_VERTEXAI",
    ):
        monkeypatch.delenv(name, raising=False)


def vertex_only(reply: Reply, *, path: str, query: str = "") -> Callable[[RecordedRequest], Reply]:
    """Answer ``reply`` only at ``path`` (and ``query``) with the injected bearer token."""

    def handle(request: RecordedRequest) -> Reply:
        route, _, sent_query = request.path.partition("?")
        if route != path or (query and query not in sent_query):
            return gemini.error_reply(404, f"not found: {request.path}", "NOT_FOUND")
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return gemini.error_reply(
                401, "Request had invalid authentication credentials.", "UNAUTHENTICATED"
            )
        return reply

    return handle


def model_path(publisher: str, model: str, method: str) -> str:
    return f"/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/{publisher}/models/{model}:{method}"


def options(server: WireServer) -> dict[str, object]:
    return {
        "project": PROJECT,
        "location": LOCATION,
        "access_token": TOKEN,
        "base_url": server.base_url,
        "timeout": 5.0,
    }


async def test_gemini_generate_content_goes_to_the_vertex_publisher_path(wire_server: WireServer) -> None:
    reply = json_reply(gemini.body([gemini.text("Hello from Vertex")]))
    wire_server.enqueue(vertex_only(reply, path=model_path("google", GEMINI, "generateContent")))
    adapter = VertexGeminiAdapter(GEMINI, **options(wire_server))  # type: ignore[arg-type]
    response = await adapter.chat([UserMessage("hi")])
    assert response.message.text == "Hello from Vertex"
    assert adapter.provider == "vertex"
    assert "x-goog-api-key" not in wire_server.requests[0].headers


async def test_gemini_streams_from_stream_generate_content_with_sse(wire_server: WireServer) -> None:
    reply = gemini.stream_reply(
        gemini.chunks(
            [gemini.text("Vertex ")], [gemini.text("streams.")], [gemini.call("lookup", {"q": "x"})]
        )
    )
    path = model_path("google", GEMINI, "streamGenerateContent")
    wire_server.enqueue(vertex_only(reply, path=path, query="alt=sse"))
    adapter = vertex_model(f"vertex:{GEMINI}", **options(wire_server))
    events = [e async for e in adapter.stream([UserMessage("hi")])]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Vertex streams."
    assert [e.name for e in events if isinstance(e, ToolCallStarted)] == ["lookup"]
    assert isinstance(events[-1], ResponseCompleted)


async def test_claude_raw_predict_carries_the_vertex_anthropic_version(wire_server: WireServer) -> None:
    reply = claude.message([{"type": "text", "text": "Claude on Vertex"}])
    wire_server.enqueue(vertex_only(reply, path=model_path("anthropic", CLAUDE, "rawPredict")))
    adapter = vertex_model(CLAUDE, **options(wire_server))
    assert isinstance(adapter, VertexAnthropicAdapter)
    assert (await adapter.chat([UserMessage("hi")])).message.text == "Claude on Vertex"
    body = wire_server.requests[0].json()
    assert body["anthropic_version"] == "vertex-2023-10-16"
    assert "model" not in body


async def test_claude_streams_from_stream_raw_predict(wire_server: WireServer) -> None:
    reply = claude.stream(
        claude.message_start(input_tokens=17),
        *claude.text_block(0, "Hi ", "there"),
        *claude.message_end("end_turn"),
    )
    wire_server.enqueue(vertex_only(reply, path=model_path("anthropic", CLAUDE, "streamRawPredict")))
    adapter = VertexAnthropicAdapter(CLAUDE, **options(wire_server))  # type: ignore[arg-type]
    events = [e async for e in adapter.stream([UserMessage("hi")])]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hi there"
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.usage.input_tokens == 17


async def test_the_model_string_and_the_environment_configure_vertex(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", PROJECT)
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", LOCATION)
    wire_server.enqueue(
        vertex_only(
            claude.message([{"type": "text", "text": "from env"}]),
            path=model_path("anthropic", CLAUDE, "rawPredict"),
        )
    )
    llm = resolve_model(f"vertex:{CLAUDE}@{wire_server.base_url}", access_token=TOKEN, retry_policy=NO_RETRY)
    assert (await llm.chat([UserMessage("hi")])).message.text == "from env"


def test_without_a_project_the_constructor_names_the_variable() -> None:
    with pytest.raises(LLMBadRequestError, match="GOOGLE_CLOUD_PROJECT"):
        VertexGeminiAdapter(GEMINI, access_token=TOKEN)
    with pytest.raises(LLMBadRequestError, match="GOOGLE_CLOUD_PROJECT"):
        VertexAnthropicAdapter(CLAUDE, access_token=TOKEN)


@pytest.mark.parametrize("model", [GEMINI, CLAUDE])
async def test_a_server_echoing_the_token_leaks_it_nowhere(wire_server: WireServer, model: str) -> None:
    def echo(request: RecordedRequest) -> Reply:
        seen = request.headers.get("authorization", "")
        return gemini.error_reply(403, f"Permission denied for {seen} ({seen[7:]})", "PERMISSION_DENIED")

    wire_server.default = echo
    adapter = vertex_model(model, **options(wire_server))
    with pytest.raises(LLMError) as caught:
        await adapter.chat([UserMessage("hi")])
    assert caught.value.status_code == 403
    assert caught.value.provider == "vertex"
    assert "Permission denied" in caught.value.message
    assert TOKEN not in f"{caught.value!s} {caught.value!r} {vars(caught.value)!r}"
