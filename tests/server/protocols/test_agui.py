"""AG-UI at ``POST /ag-ui/{agent}``: the official Node client (``@ag-ui/client`` HttpAgent), the
``ag-ui-validate`` conformance validator, threads that go on per tenant, frontend tools, state, steps,
and a reconnect that loses nothing — in memory and with Redis, one served app per mode."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui_validate.pytest_plugin import assert_valid_agui, assert_valid_agui_endpoint

from kanawa.server.http.app import create_app
from kanawa.server.http.protocols.agui.events import ENCODER, AguiTranslator, json_patch
from kanawa.server.http.protocols.framing import typed_dict
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.agui_agents import FRONTEND_TOOL, STORY, agents
from tests.server.protocols.agui_sse import AguiEvent, parse, post, read, run_input, user
from tests.server.sse import AUTH_A, AUTH_B, KEY_A

ROOT = Path(__file__).resolve().parents[3]
AGUI_CLIENT = ROOT / "tests" / "clients" / "ag-ui"
THEME_TOOL = {
    "name": FRONTEND_TOOL,
    "description": "Change the page's background colour.",
    "parameters": {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
}


def _node_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed: the @ag-ui/client tests need Node.js 18+"
    if not (AGUI_CLIENT / "node_modules" / ".installed").is_file():
        return "the AG-UI client is not installed: run `make node-clients` (npm ci in tests/clients/ag-ui)"
    return None


@pytest.fixture(scope="module", params=["embedded", "redis"])
def agui(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    server = LiveServer(create_app(agents=agents(), settings=settings_for(request.param, redis))).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def client(agui: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=agui.url, timeout=httpx.Timeout(30.0)) as http:
        yield http


def _thread() -> str:
    return f"thread-{uuid.uuid4().hex[:12]}"


def _types(events: list[AguiEvent]) -> list[str]:
    return [e.type for e in events]


def _collapsed(events: list[dict[str, Any]]) -> list[str]:
    """Event types with runs of the same type (a call's argument deltas) counted once."""
    types = [e["type"] for e in events]
    return [t for i, t in enumerate(types) if i == 0 or types[i - 1] != t]


def _args(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")


def _text(events: list[AguiEvent]) -> str:
    return "".join(e.event["delta"] for e in events if e.type == "TEXT_MESSAGE_CONTENT")


# -- the official client ------------------------------------------------------------------------


@pytest.mark.skipif(_node_missing() is not None, reason=_node_missing() or "")
def test_the_official_http_agent_streams_runs_own_tools_and_a_frontend_tool(agui: LiveServer) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(KANAWA_URL=agui.url, KANAWA_API_KEY=KEY_A, NODE_NO_WARNINGS="1")
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, "chat.mjs"], cwd=AGUI_CLIENT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        'called lookup({"city":"Tokyo"})',
        "result Tokyo: sunny, 21°C",
        "Let me brighten the page.",
        'called set_theme({"color":"rgb(255, 220, 120)"})',
        "ran set_theme: the page is now rgb(255, 220, 120)",
        "Weather Tokyo: sunny, 21°C. The page says: the page is now rgb(255, 220, 120). (question 1)",
    ]


# -- conformance --------------------------------------------------------------------------------


CONFORMANCE = {
    "helper-frontend-tool": ("helper", {"tools": [THEME_TOOL]}, None),
    "helper": ("helper", {}, None),
    "recipe-state": ("recipe", {"state": {"title": "Stew", "servings": 2}}, ["shared-state"]),
    "recipe-no-state": ("recipe", {}, None),
    "desk-handoff": ("desk", {}, None),
    "teller": ("teller", {}, None),
    "shaky-fails": ("shaky", {}, None),
}


@pytest.mark.parametrize("case", list(CONFORMANCE))
async def test_the_conformance_validator_finds_nothing(agui: LiveServer, case: str) -> None:
    agent, fields, features = CONFORMANCE[case]
    body = run_input(_thread(), "run-1", user("hello"), **fields)
    await assert_valid_agui_endpoint(
        f"{agui.url}/ag-ui/{agent}",
        headers=AUTH_A,
        input=body,
        features=features,
        max_warnings=0,
        timeout_ms=30_000,
    )


# -- runs, threads, frontend tools --------------------------------------------------------------


async def test_a_frontend_tool_call_ends_the_run_and_its_result_continues_the_same_thread(
    client: httpx.AsyncClient,
) -> None:
    thread = _thread()
    first, events = await post(
        client, "helper", run_input(thread, "r1", user("weather?"), tools=[THEME_TOOL])
    )
    assert first.status_code == 200
    assert first.headers["content-type"].startswith("text/event-stream")
    types = _types(events)
    assert types[0] == "RUN_STARTED"
    assert events[0].event == {"type": "RUN_STARTED", "threadId": thread, "runId": "r1"}
    # the agent's own tool: called, ended, answered on the server
    own = [e.event for e in events if e.event.get("toolCallId") == "own_lookup"]
    assert _collapsed(own) == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]
    assert _args(own) == '{"city": "Tokyo"}'
    assert own[-1]["content"] == "Tokyo: sunny, 21°C"
    # the frontend's tool: called and ended, not answered; the run ends for the frontend
    frontend = [e.event for e in events if e.event.get("toolCallId") == "fe_theme"]
    assert _collapsed(frontend) == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert _args(frontend) == '{"color": "rgb(255, 220, 120)"}'
    assert frontend[0]["toolCallName"] == FRONTEND_TOOL
    assert events[-1].event == {
        "type": "RUN_FINISHED",
        "threadId": thread,
        "runId": "r1",
        "outcome": {"type": "success", "pendingToolCallIds": ["fe_theme"]},
    }
    answer = {"id": "t1", "role": "tool", "toolCallId": "fe_theme", "content": "the page is teal"}
    call = {
        "id": "a1",
        "role": "assistant",
        "toolCalls": [
            {"id": "fe_theme", "type": "function", "function": {"name": FRONTEND_TOOL, "arguments": "{}"}}
        ],
    }
    second, more = await post(
        client, "helper", run_input(thread, "r2", user("weather?"), call, answer, tools=[THEME_TOOL])
    )
    assert second.headers["x-run-id"] == first.headers["x-run-id"]  # the same kanawa run goes on
    assert _text(more) == "Weather Tokyo: sunny, 21°C. The page says: the page is teal. (question 1)"
    assert more[-1].type == "RUN_FINISHED"
    assert more[-1].event["runId"] == "r2"
    assert "outcome" not in more[-1].event


async def test_a_thread_goes_on_from_the_servers_history_after_a_page_reload(
    client: httpx.AsyncClient,
) -> None:
    thread = _thread()
    _, events = await post(client, "helper", run_input(thread, "r1", user("first")))
    assert _text(events).endswith("(question 1)")
    # a reloaded page knows only its thread id: the server keeps the conversation
    _, again = await post(client, "helper", run_input(thread, "r2", user("second", "u2")))
    assert _text(again).endswith("(question 2)")


async def test_first_inputs_racing_on_a_new_thread_start_it_once(client: httpx.AsyncClient) -> None:
    """The thread's run id is derived from its id, so two first inputs sent at once derive the same
    one: the store creates it once (``RunExists``) and the loser gets a 409, never a second run that
    overwrites the first's record."""
    thread = _thread()
    answers = await asyncio.gather(
        *(post(client, "helper", run_input(thread, f"r{n}", user("first"))) for n in range(6))
    )
    assert {response.status_code for response, _ in answers} <= {200, 409}
    firsts = [events for response, events in answers if response.status_code == 200]
    assert sum(_text(events).endswith("(question 1)") for events in firsts) == 1


async def test_tool_results_for_calls_that_do_not_wait_are_refused(client: httpx.AsyncClient) -> None:
    thread = _thread()
    await post(client, "helper", run_input(thread, "r1", user("hi")))
    answer = {"id": "t1", "role": "tool", "toolCallId": "nobody_asked", "content": "x"}
    response, _ = await post(client, "helper", run_input(thread, "r2", answer))
    assert response.status_code == 400
    assert "nobody_asked" in response.json()["detail"]


async def test_a_failed_thread_takes_no_more_input(client: httpx.AsyncClient) -> None:
    thread = _thread()
    _, events = await post(client, "shaky", run_input(thread, "r1", user("hi")))
    assert events[-1].type == "RUN_ERROR"
    assert events[-1].event["code"] == "LLMCallFailed"
    response, _ = await post(client, "shaky", run_input(thread, "r2", user("again")))
    assert response.status_code == 409


async def test_an_agent_with_structured_answers_has_state(client: httpx.AsyncClient) -> None:
    body = run_input(_thread(), "r1", user("one more"), state={"title": "Stew", "servings": 2})
    _, events = await post(client, "recipe", body)
    assert events[1].event == {"type": "STATE_SNAPSHOT", "snapshot": {"title": "Stew", "servings": 2}}
    deltas = [e.event["delta"] for e in events if e.type == "STATE_DELTA"]
    assert deltas == [[{"op": "replace", "path": "/servings", "value": 3}]]
    assert events[-1].event["result"] == {"title": "Stew", "servings": 3}
    _, fresh = await post(client, "recipe", run_input(_thread(), "r1", user("start")))
    assert [e.event["snapshot"] for e in fresh if e.type == "STATE_SNAPSHOT"] == [
        {"title": "Soup", "servings": 2}
    ]


async def test_a_handoff_is_a_step(client: httpx.AsyncClient) -> None:
    _, events = await post(client, "desk", run_input(_thread(), "r1", user("grade it")))
    steps = [(e.type, e.event["stepName"]) for e in events if e.type.startswith("STEP_")]
    assert steps == [("STEP_STARTED", "grader"), ("STEP_FINISHED", "grader")]
    assert _text(events) == "The grader said 9/10"  # the grader's own words are not the answer


async def test_unknown_agents_and_inputs_a_run_cannot_take(client: httpx.AsyncClient) -> None:
    missing, _ = await post(client, "nobody", run_input(_thread(), "r", user("x")))
    assert missing.status_code == 404
    image = {
        "id": "u",
        "role": "user",
        "content": [{"type": "image", "source": {"type": "url", "value": "http://x/y.png"}}],
    }
    refused, _ = await post(client, "helper", run_input(_thread(), "r", image))
    assert refused.status_code == 400
    nothing, _ = await post(client, "helper", run_input(_thread(), "r"))
    assert nothing.status_code == 400
    bad_tool = {**THEME_TOOL, "name": "has spaces"}
    named, _ = await post(client, "helper", run_input(_thread(), "r", user("x"), tools=[bad_tool]))
    assert named.status_code == 400
    unauthenticated = await client.post("/ag-ui/helper", json=run_input(_thread(), "r", user("x")))
    assert unauthenticated.status_code == 401


# -- tenants --------------------------------------------------------------------------------------


async def test_another_tenants_thread_is_an_unknown_one(client: httpx.AsyncClient) -> None:
    thread = _thread()
    mine, events = await post(client, "helper", run_input(thread, "r1", user("mine")))
    last = events[-1].id
    # the same threadId under another key starts that tenant's own thread
    theirs, other = await post(client, "helper", run_input(thread, "r1", user("theirs")), headers=AUTH_B)
    assert theirs.headers["x-run-id"] != mine.headers["x-run-id"]
    assert _text(other).endswith("(question 1)")
    # and resuming a tenant's thread with another key is answered like a thread never used
    only_mine = _thread()
    await post(client, "helper", run_input(only_mine, "r1", user("mine alone")))
    path = "/ag-ui/helper/threads/{}/runs/r1"
    unknown = await client.get(path.format(_thread()), headers={**AUTH_B, "Last-Event-ID": "0:0:0"})
    foreign = await client.get(path.format(only_mine), headers={**AUTH_B, "Last-Event-ID": "0:0:0"})
    stranger = await client.get(
        path.format(only_mine), headers={"Authorization": "Bearer kw-nobody", "Last-Event-ID": "0:0:0"}
    )
    assert (foreign.status_code, foreign.content) == (unknown.status_code, unknown.content)
    assert foreign.status_code == 404
    assert stranger.status_code == 401
    # the owner still resumes it (from its last event: nothing is left to send)
    owner = await client.get(path.format(thread), headers={**AUTH_A, "Last-Event-ID": str(last)})
    assert owner.status_code == 200
    assert parse(owner.content)[0] == []


# -- a reconnect that loses nothing ---------------------------------------------------------------


async def test_a_cut_stream_resumes_after_its_last_event_without_a_gap_or_a_duplicate(
    client: httpx.AsyncClient,
) -> None:
    thread = _thread()
    async with client.stream(
        "POST", "/ag-ui/teller", json=run_input(thread, "r1", user("a story")), headers=AUTH_A
    ) as cut:
        before = await read(cut, cut_after=700)  # mid-answer: the connection drops here
    assert before[0].type == "RUN_STARTED"
    assert before[-1].type == "TEXT_MESSAGE_CONTENT"
    resume = f"/ag-ui/teller/threads/{thread}/runs/r1"
    async with client.stream("GET", resume, headers={**AUTH_A, "Last-Event-ID": str(before[-1].id)}) as again:
        assert again.status_code == 200
        after = await read(again)
    joined = before + after
    keys = [e.key for e in joined]
    assert keys == sorted(set(keys))  # in order, none twice
    assert _types(joined)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert _text(joined) == STORY
    assert_valid_agui([e.event for e in joined], max_warnings=0)
    # the same as reading the whole run again from its first event on
    async with client.stream("GET", f"{resume}?last_event_id={before[0].id}", headers=AUTH_A) as whole:
        replay = await read(whole)
    assert [e.event for e in joined[1:]] == [e.event for e in replay]
    assert [e.id for e in joined[1:]] == [e.id for e in replay]


async def test_a_resume_needs_one_of_the_streams_event_ids(client: httpx.AsyncClient) -> None:
    thread = _thread()
    await post(client, "helper", run_input(thread, "r1", user("hi")))
    path = f"/ag-ui/helper/threads/{thread}/runs/r1"
    assert (await client.get(path, headers=AUTH_A)).status_code == 400
    assert (await client.get(path, headers={**AUTH_A, "Last-Event-ID": "seven"})).status_code == 400
    assert (await client.get(path, headers={**AUTH_A, "Last-Event-ID": "3:1:0"})).status_code == 404


# -- the framing's fast path is the encoder's output --------------------------------------------


@pytest.mark.parametrize(
    "text", ["plain", 'quotes " and \\ slashes', "é 日本語 🎋", "\x01\x1f\x7f\u2028 tab\t"]
)
def test_a_text_delta_framed_from_the_template_is_what_the_encoder_writes(text: str) -> None:
    from ag_ui.core import TextMessageContentEvent

    translator = AguiTranslator(thread_id="t", run_id="r", run="f" * 32, after=4)
    translator.feed(typed_dict({"type": "delta", "data": {"text": "first"}, "seq": 5}))
    framed = translator.more_text(text, 6)
    expected = ENCODER.encode(TextMessageContentEvent(message_id=f"{'f' * 32}_5", delta=text))
    assert framed == b"id: 4:6:0\n" + expected.encode()


def test_a_state_patch_turns_the_old_state_into_the_new() -> None:
    before: dict[str, Any] = {"a": 1, "b": {"c": [1], "d/e": "x"}, "gone": True}
    after: dict[str, Any] = {"a": 1, "b": {"c": [1, 2], "d/e": "y"}, "new": None}
    patch = json_patch(before, after)
    assert patch == [
        {"op": "remove", "path": "/gone"},
        {"op": "replace", "path": "/b/c", "value": [1, 2]},
        {"op": "replace", "path": "/b/d~1e", "value": "y"},
        {"op": "add", "path": "/new", "value": None},
    ]
    assert json.loads(json.dumps(patch))  # JSON as it is sent


@pytest.mark.parametrize("page", ["ag-ui.md", "ag-ui.ja.md"])
def test_the_pages_show_the_client_script_the_tests_run(page: str) -> None:
    from tests.docs.blocks import blocks_in

    shown = [block.code for block in blocks_in(ROOT / "docs" / page) if block.lang == "js"]
    assert shown == [(AGUI_CLIENT / "chat.mjs").read_text(encoding="utf-8")]


@pytest.mark.parametrize("page", ["ag-ui.md", "ag-ui.ja.md"])
def test_the_pages_install_the_validator_with_the_extra_its_http_form_needs(page: str) -> None:
    """``ag-ui-validate <url>`` needs httpx, which only its ``transport`` extra installs: the block
    that runs the HTTP form installs ``ag-ui-validate[transport]`` first."""
    from importlib.metadata import requires

    from tests.docs.blocks import blocks_in

    extra = [
        line.split(";")[0] for line in requires("ag-ui-validate") or [] if "extra == 'transport'" in line
    ]
    assert any(line.startswith("httpx") for line in extra)  # the extra brings the transport's client
    shell = [block.code for block in blocks_in(ROOT / "docs" / page) if block.lang == "bash"]
    [block] = [code for code in shell if "ag-ui-validate http" in code]
    assert block.splitlines()[:2] == [
        "pip install 'ag-ui-validate[transport]'",
        'ag-ui-validate http://127.0.0.1:8000/ag-ui/calc --header "Authorization: Bearer my-key"',
    ]
