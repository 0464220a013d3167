"""kanawa's OpenAI-compatible endpoints driven by their official Node clients: the ``openai``
TypeScript SDK and the Vercel AI SDK (``ai`` + ``@ai-sdk/openai``), installed from npm by the
project's own files (``tests/clients/node/``, ``make node-clients``).

Every script the protocol pages show (``docs/openai-responses.md``, ``docs/openai-chat.md``) runs
here as it is, against the app served on loopback in each run-store mode (embedded, Redis, Celery),
and prints what the pages say it prints (the pages' ``js`` blocks are checked to be those files,
byte for byte, in English and Japanese); ``probe.mjs`` reports everything a client saw — a stream's
parts and events, a tool round trip, a resumed stream, an error — for the finer checks. Without node
or the installed clients the tests that run them skip, saying which is missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.docs.blocks import ROOT, blocks_in
from tests.server.conftest import LiveServer
from tests.server.protocols.node_clients import DOCUMENTED, NODE_CLIENTS, NodeRun, missing_reason, run_node
from tests.server.sse import KEY_A, KEY_B

needs_node = pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or "")
PAGES = [ROOT / "docs" / f"openai-{api}{lang}.md" for api in ("responses", "chat") for lang in ("", ".ja")]

WEATHER = {"city": "Tokyo", "sky": "sunny", "celsius": 21}
"""What the documented client-side ``weather`` tool returns."""


# -- the pages show the scripts the tests run -----------------------------------------------------


def _script_blocks(page: Path) -> list[str]:
    return [block.code for block in blocks_in(page) if block.lang in ("js", "javascript", "ts", "typescript")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_script_a_protocol_page_shows_is_one_the_tests_run(page: Path) -> None:
    tested = {(NODE_CLIENTS / name).read_text(encoding="utf-8"): name for name in DOCUMENTED}
    shown = _script_blocks(page)
    assert shown, f"{page.name} shows no client script"
    for code in shown:
        assert code in tested, f"{page.name} shows a script that is not in tests/clients/node:\n{code}"


def test_every_tested_script_is_shown_on_its_pages() -> None:
    for name in DOCUMENTED:
        api = name.split("_")[0]
        code = (NODE_CLIENTS / name).read_text(encoding="utf-8")
        for page in (p for p in PAGES if p.name.startswith(f"openai-{api}")):
            assert code in _script_blocks(page), f"{page.name} does not show {name} as it is tested"


def _run(live: LiveServer, script: str, *args: str) -> NodeRun:
    return run_node(script, *args, base_url=f"{live.url}/v1", api_key=KEY_A)


def _probe(live: LiveServer, case: str, agent: str, prompt: str) -> Any:
    return _run(live, "probe.mjs", case, agent, prompt).json()


# -- the documented scripts, as they are ---------------------------------------------------------


@needs_node
@pytest.mark.parametrize("script", ["responses_vercel.mjs", "chat_vercel.mjs"])
def test_vercel_generate_text_and_stream_text_use_an_agent_as_a_model(live: LiveServer, script: str) -> None:
    # the demo agent `calc` calls its own calculator tool, then answers: one answer per call
    assert _run(live, script).lines() == ["The answer is 5.", "The answer is 42."]


@needs_node
@pytest.mark.parametrize("script", ["responses_openai.mjs", "chat_openai.mjs"])
def test_openai_typescript_sdk_creates_and_streams(live: LiveServer, script: str) -> None:
    first, streamed, usage = _run(live, script).lines()
    assert first == "The answer is 5."
    assert streamed == "The answer is 42."
    assert usage.startswith("(")
    assert usage.endswith(" tokens)")
    assert int(usage[1:].split()[0]) > 0


def _weather_calls(lines: list[str]) -> list[dict[str, Any]]:
    calls = [line for line in lines if line.startswith("called ")]
    assert all(line.startswith("called weather(") and line.endswith(")") for line in calls), lines
    return [json.loads(line[len("called weather(") : -1]) for line in calls]


TOOL_SCRIPTS = [
    "responses_vercel_tools.mjs",
    "chat_vercel_tools.mjs",
    "responses_openai_tools.mjs",
    "chat_openai_tools.mjs",
]


@needs_node
@pytest.mark.parametrize("script", TOOL_SCRIPTS)
def test_a_client_declared_tool_is_called_run_by_the_client_and_answered(
    live: LiveServer, script: str
) -> None:
    lines = _run(live, script).lines()
    # the agent called the client's tool once, with its arguments, and answered from what the client's
    # function returned (the `assistant` agent repeats its tool result)
    assert _weather_calls(lines) == [{"city": "Tokyo"}]
    answer = lines[-1]
    assert answer.startswith("In Tokyo: ")
    assert json.loads(answer.removeprefix("In Tokyo: ")) == WEATHER


# -- what the clients saw of a stream ------------------------------------------------------------


@needs_node
@pytest.mark.parametrize("api", ["responses", "chat"])
def test_vercel_stream_text_gets_every_delta_the_finish_reason_and_usage(live: LiveServer, api: str) -> None:
    seen = _probe(live, f"vercel-{api}-stream", "echo", "a timber joint holds without nails or glue")
    assert seen["errors"] == []
    # the echo agent streams the question back in 8-character deltas, each one reaching the client
    assert len(seen["deltas"]) > 1
    assert "".join(seen["deltas"]) == seen["text"] == "a timber joint holds without nails or glue"
    assert seen["finishReason"] == "stop"
    assert seen["types"][0] == "start"
    assert seen["types"][-1] == "finish"
    assert seen["usage"]["outputTokens"] > 0


@needs_node
def test_openai_responses_stream_events_are_numbered_and_complete(live: LiveServer) -> None:
    events = _probe(live, "openai-responses-stream", "echo", "no nails, no glue")["events"]
    types = [e["type"] for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    for kind in ("response.output_item.added", "response.content_part.added", "response.output_text.done"):
        assert kind in types
    numbers = [e["sequence_number"] for e in events]
    assert numbers == list(range(numbers[0], numbers[0] + len(events)))
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "no nails, no glue"
    done = next(e for e in events if e["type"] == "response.output_text.done")
    assert done["text"] == "no nails, no glue"
    final = events[-1]["response"]
    assert final["status"] == "completed"
    assert final["model"] == "echo"
    assert final["id"] == events[0]["response"]["id"]
    assert final["usage"]["output_tokens"] > 0


@needs_node
def test_openai_chat_stream_chunks_carry_the_text_then_the_usage(live: LiveServer) -> None:
    chunks = _probe(live, "openai-chat-stream", "echo", "no nails, no glue")["chunks"]
    assert len({c["id"] for c in chunks}) == 1
    assert all(c["object"] == "chat.completion.chunk" and c["model"] == "echo" for c in chunks)
    with_choices = [c for c in chunks if c["choices"]]
    deltas = [c["choices"][0]["delta"].get("content") or "" for c in with_choices]
    assert len([d for d in deltas if d]) > 1
    assert "".join(deltas) == "no nails, no glue"
    assert with_choices[-1]["choices"][0]["finish_reason"] == "stop"
    # stream_options.include_usage: the last chunk has no choices and the usage
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] > 0
    assert all(c.get("usage") is None for c in chunks[:-1])


@needs_node
@pytest.mark.parametrize("api", ["responses", "chat"])
def test_vercel_stream_text_round_trips_a_client_tool_beside_the_agents_own(
    live: LiveServer, api: str
) -> None:
    # the `concierge` agent calls its own `tick` and the client's `get_weather` in one turn, then
    # answers with the client's result
    seen = _probe(live, f"vercel-{api}-tools", "concierge", "What is the weather in Kyoto?")
    assert seen["errors"] == []
    assert seen["executed"] == ["Kyoto"]
    client_call = {"name": "get_weather", "input": {"city": "Kyoto"}, "providerExecuted": False}
    if api == "responses":
        # the agent's own call is an `mcp_call` item: the SDK shows it as run by the provider, and
        # the model's reasoning summary as reasoning parts
        own_call = {"name": "mcp.tick", "input": {"n": 1}, "providerExecuted": True}
        assert seen["calls"] == [own_call, client_call]
        assert "reasoning-delta" in seen["types"]
        # the SDK sends its history back with references to the first response's items: the
        # second step continues the same run
        first, second = seen["responseIds"]
        assert second.startswith(f"{first}_")
    else:  # Chat Completions has no place for the agent's own calls: only the client's
        assert seen["calls"] == [client_call]
    assert seen["text"].endswith("Kyoto is sunny in Kyoto")
    assert seen["finishReason"] == "stop"
    assert seen["steps"] == 2


@needs_node
def test_openai_responses_stream_resumes_after_a_dropped_connection(live: LiveServer) -> None:
    # `slow` takes a moment per step (the seconds it is asked for): the stream is dropped while the
    # run goes on, and resumed from the last event the client saw
    seen = _probe(live, "openai-responses-resume", "slow", "0.3")
    first, rest = seen["first"], seen["rest"]
    numbers = [e["sequence_number"] for e in first + rest]
    assert numbers == list(range(len(numbers)))
    assert rest[-1]["type"] == "response.completed"
    final = rest[-1]["response"]
    assert final["id"] == seen["id"]
    assert final["output"][-1]["content"][0]["text"] == "slow and steady"


@needs_node
def test_openai_typescript_sdk_raises_its_own_errors(live: LiveServer) -> None:
    seen = _probe(live, "openai-errors", "no-such-agent", "hello")
    for api in ("responses", "chat"):
        assert seen[api] == {
            "raised": "NotFoundError",
            "status": 404,
            "code": "model_not_found",
            "type": "invalid_request_error",
        }
    assert seen["retrieve"]["raised"] == "NotFoundError"
    assert seen["retrieve"]["status"] == 404


@needs_node
def test_another_tenants_response_is_a_404_exactly_like_a_missing_one(live: LiveServer) -> None:
    seen = run_node(
        "probe.mjs",
        "openai-tenants",
        "echo",
        "mine alone",
        base_url=f"{live.url}/v1",
        api_key=KEY_A,
        extra_env={"OTHER_API_KEY": KEY_B},
    ).json()
    assert seen["owner"] == "mine alone"
    assert seen["other"]["raised"] == "NotFoundError"
    assert seen["other"]["status"] == 404
    assert seen["other"] == seen["missing"] == seen["otherCancel"]
