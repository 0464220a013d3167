"""No key leaks when a server echoes it (DESIGN principle 5, ``kanawa.secrets``).

A real loopback server answers every request with an error (400/401/403/429/500) whose body AND
headers echo the credential it received — what a misconfigured proxy or a hostile endpoint does. For
each adapter (OpenAI Responses, OpenAI-compatible chat, Anthropic, Gemini), through the real SDKs:

* no text reachable from the raised exception carries the key: ``str``/``repr``/``args``/attributes of
  every exception in the chain (``__cause__``, ``__context__``), and the formatted traceback;
* no log line carries it, with every logger (kanawa's, the SDKs', the HTTP transports') at DEBUG;
* no trace line (the JSONL sink) and no ``kanawa run`` output carries it.

Keys are opaque (not key-shaped) and unique per test, so what masks them is the adapter registering
the key it was configured with — by ``api_key=`` here, by the environment in the CLI test, by
``default_headers`` in the proxy-token test — not a pattern or another test's registration.
"""

from __future__ import annotations

import json
import logging
import traceback
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kanawa.agents.agent import Agent
from kanawa.cli.app import app
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.anthropic.adapter import AnthropicAdapter
from kanawa.llm.errors import LLMError
from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.llm.openai.azure import AzureOpenAIAdapter, AzureOpenAIChatAdapter
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.loop.errors import LLMCallFailed
from kanawa.trace.config import TraceSettings, jsonl_path, tracer_from_env
from kanawa.types import UserMessage
from tests.wire.server import RecordedRequest, Reply, WireServer, json_reply, sse_reply

STATUSES = (400, 401, 403, 429, 500)
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "x-proxy-token", "api-key")
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
}


def received_credentials(request: RecordedRequest) -> list[str]:
    """Every credential the request carried, as sent and without its auth scheme."""
    found: list[str] = []
    for name in _CREDENTIAL_HEADERS:
        value = request.headers.get(name)
        if value:
            found.append(value)
            if value.lower().startswith("bearer "):
                found.append(value[7:])
    return found


def openai_body(status: int, key: str) -> dict[str, Any]:
    return {
        "error": {
            "message": f"Incorrect API key provided: {key}. You passed {key}.",
            "type": "invalid_request_error",
            "param": key,
            "code": "invalid_api_key",
        }
    }


def anthropic_body(status: int, key: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": "authentication_error", "message": f"invalid x-api-key: {key}"},
        "request_id": key,
    }


def gemini_body(status: int, key: str) -> dict[str, Any]:
    return {
        "error": {
            "code": status,
            "message": f"API key not valid. Please pass a valid API key. (got {key})",
            "status": _GOOGLE_STATUS[status],
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "metadata": {"key": key},
                }
            ],
        }
    }


def echoing(status: int, body: Callable[[int, str], dict[str, Any]]) -> Callable[[RecordedRequest], Reply]:
    """A handler answering ``status`` with the received key in the body and in several headers."""

    def handle(request: RecordedRequest) -> Reply:
        keys = received_credentials(request) or ["<no credential received>"]
        headers = {
            "x-request-id": keys[-1],
            "request-id": keys[-1],
            "x-echo-credentials": " ".join(keys),
            "www-authenticate": f'Bearer realm="proxy", error="invalid_token", key="{keys[-1]}"',
            "retry-after": "0",
        }
        return json_reply(body(status, " / ".join(keys)), status=status, headers=headers)

    return handle


def openai_stream_error(key: str) -> tuple[str | None, dict[str, Any]]:
    return (
        "error",
        {"type": "error", "code": "server_error", "message": f"upstream saw {key}", "param": key},
    )


def chat_stream_error(key: str) -> tuple[str | None, dict[str, Any]]:
    return (
        None,
        {"error": {"message": f"upstream saw {key}", "type": "server_error", "code": "server_error"}},
    )


def anthropic_stream_error(key: str) -> tuple[str | None, dict[str, Any]]:
    return (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": f"upstream saw {key}"}},
    )


def gemini_stream_error(key: str) -> tuple[str | None, dict[str, Any]]:
    return (None, {"error": {"code": 500, "message": f"upstream saw {key}", "status": "INTERNAL"}})


def echoing_in_stream(
    event: Callable[[str], tuple[str | None, dict[str, Any]]],
) -> Callable[[RecordedRequest], Reply]:
    """A handler answering 200 with an SSE stream whose first event is an error echoing the key."""

    def handle(request: RecordedRequest) -> Reply:
        keys = " / ".join(received_credentials(request))
        return sse_reply([event(keys)], headers={"x-request-id": keys})

    return handle


@dataclass(frozen=True)
class Provider:
    name: str
    build: Callable[[str, str], LLMAdapter]
    body: Callable[[int, str], dict[str, Any]]
    spec: Callable[[str], str]
    env_key: str
    stream_error: Callable[[str], tuple[str | None, dict[str, Any]]]


PROVIDERS = [
    Provider(
        "openai-responses",
        lambda base, key: OpenAIResponsesAdapter("gpt-5", api_key=key, base_url=base, timeout=5.0),
        openai_body,
        lambda base: f"openai:gpt-5@{base}/v1",
        "OPENAI_API_KEY",
        openai_stream_error,
    ),
    Provider(
        "openai-chat",
        lambda base, key: OpenAIChatAdapter(
            "qwen2.5-7b-instruct", api_key=key, base_url=f"{base}/v1", timeout=5.0
        ),
        openai_body,
        lambda base: f"openai-chat:qwen2.5-7b-instruct@{base}/v1",
        "KANAWA_CHAT_API_KEY",
        chat_stream_error,
    ),
    Provider(
        "anthropic",
        lambda base, key: AnthropicAdapter("claude-sonnet-5", api_key=key, base_url=base, timeout=5.0),
        anthropic_body,
        lambda base: f"anthropic:claude-sonnet-5@{base}",
        "ANTHROPIC_API_KEY",
        anthropic_stream_error,
    ),
    Provider(
        "gemini",
        lambda base, key: GeminiAdapter("gemini-2.5-flash", api_key=key, base_url=base, timeout=5.0),
        gemini_body,
        lambda base: f"gemini:gemini-2.5-flash@{base}",
        "GEMINI_API_KEY",
        gemini_stream_error,
    ),
    Provider(
        "azure",
        lambda base, key: AzureOpenAIAdapter("gpt-5-deployment", endpoint=base, api_key=key, timeout=5.0),
        openai_body,
        lambda base: f"azure:gpt-5-deployment@{base}",
        "AZURE_OPENAI_API_KEY",
        openai_stream_error,
    ),
    Provider(
        "azure-chat",
        lambda base, key: AzureOpenAIChatAdapter(
            "gpt-4o-deployment", endpoint=base, api_key=key, timeout=5.0
        ),
        openai_body,
        lambda base: f"azure-chat:gpt-4o-deployment@{base}",
        "AZURE_OPENAI_API_KEY",
        chat_stream_error,
    ),
    Provider(
        "azure-entra-id",
        lambda base, token: AzureOpenAIChatAdapter(
            "gpt-4o-deployment", endpoint=base, azure_ad_token_provider=lambda: token, timeout=5.0
        ),
        openai_body,
        lambda base: f"azure-chat:gpt-4o-deployment@{base}",
        "AZURE_OPENAI_AD_TOKEN",
        chat_stream_error,
    ),
]


def unique_key(provider: Provider) -> str:
    return f"echo-{provider.name}-credential-{uuid.uuid4().hex[:16]}"


# ------------------------------------------------------------------------------------- observers


def reachable_text(error: BaseException) -> str:
    """Everything a handler could print from ``error``: each exception in its graph (cause, context,
    group members, exception-valued attributes) as ``str``, ``repr``, ``args`` and attribute reprs,
    plus the whole formatted traceback."""
    parts: list[str] = ["".join(traceback.format_exception(error))]
    stack: list[BaseException] = [error]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        parts += [str(current), repr(current), repr(current.args)]
        for value in vars(current).values():
            if isinstance(value, BaseException):
                stack.append(value)
            else:
                parts.append(repr(value))
        linked = [current.__cause__, current.__context__, *getattr(current, "exceptions", ())]
        stack.extend(item for item in linked if isinstance(item, BaseException))
    return "\n".join(parts)


_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        extras = {k: v for k, v in record.__dict__.items() if k not in _STANDARD}
        self.lines.append(f"{self.format(record)} {extras!r}")


@pytest.fixture
def debug_log() -> Iterator[list[str]]:
    """Every log record of every logger at DEBUG, formatted (exception text included) with its extras."""
    handler = _Collect()
    root = logging.getLogger()
    levels = {
        logger: logger.level
        for logger in [root, *logging.Logger.manager.loggerDict.values()]
        if isinstance(logger, logging.Logger)
    }
    for logger in levels:
        logger.setLevel(logging.DEBUG)
    root.addHandler(handler)
    yield handler.lines
    root.removeHandler(handler)
    for logger, level in levels.items():
        logger.setLevel(level)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "KANAWA_CHAT_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_AD_TOKEN",
        "AZURE_OPENAI_ENDPOINT",
        "OPENAI_API_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)
    for name in (
        "OPENAI_BASE_URL",
        "KANAWA_TRACE",
        "KANAWA_TRACE_DIR",
        "KANAWA_TRACE_REDACT",
        "KANAWA_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_GPT5_AUDIT_LOG", "true")  # its error record names request id and param


def assert_no_key(key: str, **texts: str) -> None:
    leaks = [where for where, text in texts.items() if key in text]
    assert not leaks, f"the key leaked into: {leaks}"


async def drain(adapter: LLMAdapter) -> None:
    async for _ in adapter.stream([UserMessage("hello")]):
        pass


async def close(adapter: LLMAdapter) -> None:
    """Close the adapter's HTTP client now rather than leave its sockets to the garbage collector."""
    aclose = getattr(adapter, "aclose", None)
    if aclose is not None:
        await aclose()
        return
    client = getattr(adapter, "_client", None)  # an adapter without aclose(): close its SDK client
    if client is not None:
        await client.close()


# ----------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("streamed", [False, True], ids=["chat", "stream"])
@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_an_adapter_error_never_carries_the_echoed_key(
    provider: Provider, status: int, streamed: bool, wire_server: WireServer, debug_log: list[str]
) -> None:
    key = unique_key(provider)
    wire_server.default = echoing(status, provider.body)
    adapter = provider.build(wire_server.base_url, key)
    try:
        with pytest.raises(LLMError) as caught:
            await (drain(adapter) if streamed else adapter.chat([UserMessage("hello")]))
    finally:
        await close(adapter)
    assert caught.value.status_code == status
    assert key in received_credentials(wire_server.requests[0])
    assert_no_key(key, exception=reachable_text(caught.value), logs="\n".join(debug_log))


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_an_error_event_inside_a_stream_never_carries_the_echoed_key(
    provider: Provider, wire_server: WireServer, debug_log: list[str]
) -> None:
    key = unique_key(provider)
    wire_server.default = echoing_in_stream(provider.stream_error)
    adapter = provider.build(wire_server.base_url, key)
    try:
        with pytest.raises(LLMError) as caught:
            await drain(adapter)
    finally:
        await close(adapter)
    assert "upstream saw" in caught.value.message
    assert_no_key(key, exception=reachable_text(caught.value), logs="\n".join(debug_log))


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_failed_agent_run_leaks_the_key_neither_in_its_exception_nor_its_trace(
    provider: Provider, status: int, wire_server: WireServer, debug_log: list[str], tmp_path: Path
) -> None:
    key = unique_key(provider)
    wire_server.default = echoing(status, provider.body)
    adapter = provider.build(wire_server.base_url, key)
    tracer = tracer_from_env(settings=TraceSettings(directory=tmp_path))
    agent = Agent("echo", "Answer.", model=adapter, tracer=tracer)
    try:
        with pytest.raises(LLMCallFailed) as caught:
            await agent.arun("hello")
    finally:
        await tracer.aclose()
        await close(adapter)
    path = jsonl_path(tracer)
    assert path is not None
    trace = path.read_text(encoding="utf-8")
    assert [json.loads(line)["event"] for line in trace.splitlines()][-2:] == ["llm_error", "agent_end"]
    assert_no_key(key, exception=reachable_text(caught.value), trace=trace, logs="\n".join(debug_log))


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_kanawa_run_prints_and_traces_no_key_from_the_environment(
    provider: Provider,
    status: int,
    wire_server: WireServer,
    debug_log: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = unique_key(provider)
    wire_server.default = echoing(status, provider.body)
    monkeypatch.chdir(tmp_path)
    env = {provider.env_key: key, "COLUMNS": "200", "NO_COLOR": "1"}
    result = CliRunner().invoke(
        app, ["run", "--model", provider.spec(wire_server.base_url), "--no-tools", "hi"], env=env
    )
    assert result.exit_code == 2, result.output
    assert str(status) in result.stderr
    (trace,) = sorted((tmp_path / ".kanawa" / "traces").glob("*.jsonl"))
    assert_no_key(
        key,
        stdout=result.stdout,
        stderr=result.stderr,
        trace=trace.read_text(encoding="utf-8"),
        logs="\n".join(debug_log),
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda base, token: OpenAIChatAdapter(
            "m", api_key="local-key-123456", base_url=f"{base}/v1", default_headers={"X-Proxy-Token": token}
        ),
        lambda base, token: AnthropicAdapter(
            "claude-sonnet-5",
            api_key="local-key-123456",
            base_url=base,
            default_headers={"X-Proxy-Token": token},
        ),
    ],
    ids=["openai-chat", "anthropic"],
)
async def test_a_proxy_token_sent_in_default_headers_is_masked_like_a_key(
    build: Callable[[str, str], LLMAdapter], wire_server: WireServer, debug_log: list[str]
) -> None:
    token = f"proxy-token-{uuid.uuid4().hex[:16]}"
    wire_server.default = echoing(401, openai_body)
    adapter = build(wire_server.base_url, token)
    try:
        with pytest.raises(LLMError) as caught:
            await adapter.chat([UserMessage("hello")])
    finally:
        await close(adapter)
    assert wire_server.requests[0].headers["x-proxy-token"] == token
    assert_no_key(token, exception=reachable_text(caught.value), logs="\n".join(debug_log))
