"""Record real provider traffic once, replay it with the network off (kanawa.testing, issue 24 part 6).

Each adapter (OpenAI Responses, OpenAI Chat Completions, Anthropic, Gemini) talks through its official
SDK to a loopback server speaking that provider's wire protocol, inside a cassette in ``all`` mode:
one whole answer and one streamed answer. The server is then stopped and every socket connect in the
process fails; the same calls inside the cassette in ``none`` mode give the same responses and the same
stream events. The cassettes are then scanned for credentials by a scanner of this test's own.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kanawa.llm.anthropic.adapter import AnthropicAdapter
from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.openai.credentials import OpenAICredentials
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.llm.openai.responses_sync import OpenAIResponsesSyncClient
from kanawa.testing import Cassette, CassetteError, use_cassette
from kanawa.types import LLMResponse, TextDelta, ToolSpec, UserMessage
from tests.llm.anthropic import wire as anthropic_wire
from tests.llm.gemini import wire as gemini_wire
from tests.llm.openai_chat import wire as chat_wire
from tests.llm.openai_responses.wire import ResponseScript
from tests.wire.server import RecordedRequest, Reply, WireServer, json_reply

OPENAI_KEY = "sk-proj-Zq8XkP2mW7vN4bR9tL6yH3cJ5dF1gS0a"
ANTHROPIC_KEY = "sk-ant-api03-Lm4Np7Qr2St9Uv6Wx1Yz8Ab3Cd5Ef0Gh"
GEMINI_KEY = "AIzaSyD4x7Kq9Lm2Np5Rs8Tv1Wy3Za6Bc0De7Fg"
GATEWAY_KEY = "gateway-secret-7731-kanawa"
"""Not key-shaped at all: only the adapter's registration of the key it sends can catch it."""
KEYS = (OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY, GATEWAY_KEY)
SESSION_COOKIE = "sessionid=c0ff33c0ff33c0ff33c0ff33"

TOOL = ToolSpec("lookup", "Look a word up.", {"type": "object", "properties": {"word": {"type": "string"}}})


def _leaky(request: RecordedRequest) -> dict[str, str]:
    """Response headers a careless gateway sends: the credential it got, echoed, and a cookie."""
    sent = request.headers.get("authorization") or request.headers.get("x-api-key") or ""
    sent = sent or request.headers.get("x-goog-api-key", "")
    return {"x-debug-credential": sent, "set-cookie": SESSION_COOKIE}


def _echo(request: RecordedRequest) -> str:
    """The credential a server echoes inside a body (an unused field the SDK ignores)."""
    return "Authorization: " + (_leaky(request)["x-debug-credential"] or "none")


def _responses_reply(request: RecordedRequest) -> Reply:
    script = ResponseScript(model="gpt-5.2").message("Tokyo is the capital.")
    if request.json().get("stream"):
        reply = script.function_call("lookup", '{"word": "capital"}', call_id="call_1").completed().sse()
    else:
        reply = script.json()
    reply.headers.update(_leaky(request))
    return reply


def _chat_reply(request: RecordedRequest) -> Reply:
    headers = _leaky(request)
    if request.json().get("stream"):
        reply = chat_wire.stream(
            chat_wire.chunk({"role": "assistant", "content": "Tokyo "}),
            chat_wire.chunk({"content": "is the capital."}),
            chat_wire.chunk(finish="stop"),
            chat_wire.usage_chunk(),
        )
        reply.headers.update(headers)
        return reply
    reply = chat_wire.completion({"content": "Tokyo is the capital.", "refusal": None})
    body = json.loads(reply.body[0])  # type: ignore[arg-type]
    body["system_fingerprint"] = _echo(request)
    return json_reply(body, headers=headers)


def _anthropic_reply(request: RecordedRequest) -> Reply:
    headers = _leaky(request)
    if request.json().get("stream"):
        return anthropic_wire.stream(
            anthropic_wire.message_start(model="claude-sonnet-4-6", cache_read_input_tokens=900),
            anthropic_wire.ping(),
            anthropic_wire.thinking_block(0, ["Capital ", "of Japan."], "sig-Zm9vYmFy"),
            anthropic_wire.text_block(1, "Tokyo ", "is the capital."),
            anthropic_wire.tool_block(2, "toolu_01", "lookup", '{"word"', ': "capital"}'),
            anthropic_wire.message_end("tool_use", output_tokens=33),
            headers=headers,
        )
    reply = anthropic_wire.message([{"type": "text", "text": "Tokyo is the capital."}])
    body = json.loads(reply.body[0])  # type: ignore[arg-type]
    body["container"] = None
    body["debug"] = _echo(request)
    return json_reply(body, headers=headers)


def _gemini_reply(request: RecordedRequest) -> Reply:
    headers = _leaky(request)
    if "streamGenerateContent" in request.path:
        reply = gemini_wire.stream_reply(
            gemini_wire.chunks(
                [gemini_wire.text("Tokyo ")],
                [gemini_wire.text("is the capital.")],
                [gemini_wire.call("lookup", {"word": "capital"}, signature=gemini_wire.SIGNATURE)],
            )
        )
        reply.headers.update(headers)
        return reply
    body = gemini_wire.body([gemini_wire.text("Tokyo is the capital.")])
    body["debugInfo"] = _echo(request)
    return json_reply(body, headers=headers)


@dataclass(frozen=True)
class Provider:
    name: str
    reply: Callable[[RecordedRequest], Reply]
    make: Callable[[str], Any]


PROVIDERS = [
    Provider(
        "openai-responses",
        _responses_reply,
        lambda url: OpenAIResponsesAdapter("gpt-5.2", api_key=OPENAI_KEY, base_url=url, timeout=5.0),
    ),
    Provider(
        "openai-chat",
        _chat_reply,
        lambda url: OpenAIChatAdapter("local-model", api_key=GATEWAY_KEY, base_url=f"{url}/v1", timeout=5.0),
    ),
    Provider(
        "anthropic",
        _anthropic_reply,
        lambda url: AnthropicAdapter("claude-sonnet-4-6", api_key=ANTHROPIC_KEY, base_url=url, timeout=5.0),
    ),
    Provider(
        "gemini",
        _gemini_reply,
        lambda url: GeminiAdapter("gemini-2.5-flash", api_key=GEMINI_KEY, base_url=url, timeout=5.0),
    ),
]


def _summary(response: LLMResponse) -> dict[str, Any]:
    message = response.message
    return {
        "text": message.text,
        "calls": [(c.name, c.arguments) for c in message.tool_calls],
        "reasoning": [(r.text, json.dumps(r.payload, sort_keys=True)) for r in message.reasoning],
        "stop": response.stop_reason,
        "usage": response.usage,
        "model": response.model,
        "id": response.response_id,
    }


async def _conversation(adapter: Any) -> dict[str, Any]:
    """One whole answer, then one streamed answer (every event, in order)."""
    try:
        whole = await adapter.chat([UserMessage("What is the capital of Japan?")])
        events: list[Any] = []
        async for event in adapter.stream([UserMessage("And look it up.")], tools=[TOOL]):
            events.append(_summary(event.response) if hasattr(event, "response") else event)
        return {"whole": _summary(whole), "events": events}
    finally:
        await adapter.aclose()


def turn_the_network_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every socket connect in this process fails from now on: a replay that reached for the network
    would fail."""

    def refuse(self: socket.socket, address: object) -> None:
        raise OSError(f"network is off in this test (connect to {address!r})")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


@pytest.fixture
def network_off(monkeypatch: pytest.MonkeyPatch) -> None:
    turn_the_network_off(monkeypatch)


@pytest.fixture
def cassette_dir(tmp_path: Path) -> Path:
    return tmp_path / "cassettes"


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_record_against_the_wire_server_then_replay_with_the_network_off(
    provider: Provider, cassette_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = cassette_dir / f"{provider.name}.yaml"
    with WireServer() as server:
        server.default = provider.reply
        with use_cassette(path, record="all") as recording:
            live = asyncio.run(_conversation(provider.make(server.base_url)))
        base_url = server.base_url
        assert len(server.requests) == 2
    assert len(recording.exchanges) == 2
    assert live["events"], "the streamed answer produced events"
    assert path.is_file()

    turn_the_network_off(monkeypatch)
    with use_cassette(path, record="none") as replay:
        replayed = asyncio.run(_conversation(provider.make(base_url)))
    assert replay.misses == []
    assert replay.played == {0, 1}
    assert replayed == live
    # more than one chunk reached the SDK for the streamed answer: it was replayed as a stream
    assert sum(1 for e in live["events"] if not isinstance(e, dict)) >= 2


@pytest.mark.usefixtures("network_off")
async def test_a_request_with_no_recording_fails_naming_it_and_never_reaches_the_network(
    cassette_dir: Path,
) -> None:
    path = cassette_dir / "empty.yaml"
    Cassette(path).save()
    adapter = OpenAIResponsesAdapter(
        "gpt-5.2", api_key=OPENAI_KEY, base_url="http://127.0.0.1:9", timeout=5.0
    )
    with use_cassette(path, record="none") as cassette:
        with pytest.raises(LLMConnectionError):
            await adapter.chat([UserMessage("hi")])
        await adapter.aclose()
    assert cassette.misses == ["POST http://127.0.0.1:9/v1/responses"]


def test_replay_mode_without_a_cassette_is_a_clear_error(cassette_dir: Path) -> None:
    with pytest.raises(CassetteError, match="--kanawa-record=once"), use_cassette(cassette_dir / "none.yaml"):
        pass


# -------------------------------------------------------------------------------- secret scanner

_KEY_SHAPES = re.compile(
    r"sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{10,}|(?:Bearer|Basic)\s+(?!\[REDACTED\])[A-Za-z0-9._~+/=\-]{6,}"
)
_CREDENTIAL_HEADERS = {"authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "set-cookie"}


def scan_cassette(path: Path) -> list[str]:
    """Everything in a cassette that looks like a credential: the keys the tests used (also base64-
    encoded), key-shaped text anywhere, and any value of a credential header but ``[REDACTED]``."""
    text = path.read_text(encoding="utf-8")
    found: list[str] = []
    for key in (*KEYS, SESSION_COOKIE):
        encoded = base64.b64encode(key.encode()).decode()
        if key in text or key[8:24] in text or encoded in text:
            found.append(f"{path.name}: the credential {key[:8]}…")
    found += [f"{path.name}: key-shaped {m.group(0)[:12]}…" for m in _KEY_SHAPES.finditer(text)]
    data = yaml.safe_load(text)
    for interaction in data["interactions"]:
        for side in ("request", "response"):
            for name, values in interaction[side]["headers"].items():
                if name.lower() in _CREDENTIAL_HEADERS and values != ["[REDACTED]"]:
                    found.append(f"{path.name}: {side} header {name} = {values}")
    return found


@pytest.fixture
def recorded_cassettes(cassette_dir: Path) -> list[Path]:
    paths = []
    for provider in PROVIDERS:
        path = cassette_dir / f"scan-{provider.name}.yaml"
        with WireServer() as server:
            server.default = provider.reply
            with use_cassette(path, record="all"):
                asyncio.run(_conversation(provider.make(server.base_url)))
        paths.append(path)
    return paths


def test_the_secret_scanner_finds_nothing_in_recorded_cassettes(recorded_cassettes: list[Path]) -> None:
    assert len(recorded_cassettes) == 4
    for path in recorded_cassettes:
        assert scan_cassette(path) == []
        text = path.read_text(encoding="utf-8")
        assert "[REDACTED]" in text  # the credentials were there, and were scrubbed


def test_the_secret_scanner_catches_a_leak(tmp_path: Path) -> None:
    """The scanner itself can fail: a cassette with a key in it is reported."""
    leaky = tmp_path / "leaky.yaml"
    leaky.write_text(
        yaml.safe_dump(
            {
                "interactions": [
                    {
                        "request": {"headers": {"authorization": [f"Bearer {GATEWAY_KEY}"]}},
                        "response": {"headers": {}, "body": {"string": f"echo {OPENAI_KEY}"}},
                    }
                ],
                "version": 1,
            }
        )
    )
    problems = scan_cassette(leaky)
    assert any("authorization" in p for p in problems)
    assert any("key-shaped" in p for p in problems)


def test_the_blocking_client_records_and_replays_too(
    cassette_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync OpenAI client (the Dify plugin's) goes through ``HTTPTransport.handle_request``."""
    path = cassette_dir / "sync.yaml"

    def run(base_url: str) -> list[str]:
        creds = OpenAICredentials.from_dict(
            {"openai_api_key": OPENAI_KEY, "openai_api_base": base_url, "max_retries": "0"}
        )
        with OpenAIResponsesSyncClient(creds) as client:
            events = list(client.stream("gpt-5.2", [UserMessage("hi")]))
        return [e.text for e in events if isinstance(e, TextDelta)]

    with WireServer() as server:
        server.default = lambda _request: (
            ResponseScript().message("Hello from the sync path").completed().sse()
        )
        with use_cassette(path, record="all"):
            live = run(server.base_url)
        base_url = server.base_url
    turn_the_network_off(monkeypatch)
    with use_cassette(path, record="none") as replay:
        replayed = run(base_url)
    assert "".join(live) == "Hello from the sync path"
    assert replayed == live
    assert len(live) > 1  # the deltas arrived one event at a time
    assert replay.played == {0}
    assert scan_cassette(path) == []
