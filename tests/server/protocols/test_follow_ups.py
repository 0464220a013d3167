"""A follow-up question on every protocol gets its own answer: the demo agent ``calc`` asked
"What is 2 + 3?" and then "What is 7 * 8?" in one conversation answers 5, then 56 — with each
protocol's official client where there is one (``openai`` for Responses and Chat Completions,
``@ag-ui/client``, the AI SDK's ``DefaultChatTransport``, ``a2a-sdk``, ``mcp``). The conversations
that continue on the server (Responses ``previous_response_id``, an AG-UI thread's next run, an AI SDK
chat's next message) hold the first question's tool result too: only what follows the last question
answers it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openai import OpenAI

from kanawa.server.http.app import create_app
from tests.mcp_server.test_http import session_of
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.a2a_support import a2a_client, ask, text_of
from tests.server.sse import KEY_A, start_run

ROOT = Path(__file__).resolve().parents[3]
QUESTIONS = ("What is 2 + 3?", "What is 7 * 8?")
ANSWERS = ["The answer is 5.", "The answer is 56."]


@pytest.fixture(scope="module")
def calc() -> Iterator[LiveServer]:
    """The demo agents (``calc``, ``echo``) as ``kanawa serve`` serves them."""
    server = LiveServer(create_app(settings=settings_for("embedded", None))).start()
    try:
        yield server
    finally:
        server.stop()


def _node(client: str, script: str, server: LiveServer, *args: str) -> list[str]:
    folder = ROOT / "tests" / "clients" / client
    node = shutil.which("node")
    if node is None or not (folder / "node_modules" / ".installed").is_file():
        pytest.skip(f"the {client} client is not installed: run `make node-clients`")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(KANAWA_URL=server.url, KANAWA_API_KEY=KEY_A, NODE_NO_WARNINGS="1")
    done = subprocess.run(
        [node, script, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.rstrip("\n").splitlines()


async def test_kanawa_sse(calc: LiveServer) -> None:
    """Each ``POST /v1/runs`` is a run of its own: the second question is asked afresh."""
    async with httpx.AsyncClient(base_url=calc.url, timeout=30) as http:
        answers = []
        for question in QUESTIONS:
            _, events = await start_run(http, "calc", question)
            answers.append(next(e.chunk["data"]["text"] for e in events if e.chunk["type"] == "final"))
    assert answers == ANSWERS


def test_responses_with_previous_response_id(calc: LiveServer) -> None:
    with OpenAI(base_url=f"{calc.url}/v1", api_key=KEY_A, max_retries=0, timeout=30) as client:
        first = client.responses.create(model="calc", input=QUESTIONS[0])
        second = client.responses.create(model="calc", input=QUESTIONS[1], previous_response_id=first.id)
        with client.responses.stream(
            model="calc", input="And 6 * 7?", previous_response_id=second.id
        ) as stream:
            third = stream.get_final_response()
    assert [first.output_text, second.output_text, third.output_text] == [*ANSWERS, "The answer is 42."]


def test_chat_completions_with_the_history(calc: LiveServer) -> None:
    with OpenAI(base_url=f"{calc.url}/v1", api_key=KEY_A, max_retries=0, timeout=30) as client:
        first = client.chat.completions.create(
            model="calc", messages=[{"role": "user", "content": QUESTIONS[0]}]
        )
        said = first.choices[0].message.content
        second = client.chat.completions.create(
            model="calc",
            messages=[
                {"role": "user", "content": QUESTIONS[0]},
                {"role": "assistant", "content": said},
                {"role": "user", "content": QUESTIONS[1]},
            ],
        )
    assert [said, second.choices[0].message.content] == ANSWERS


def test_ag_ui_second_run_of_a_thread(calc: LiveServer) -> None:
    assert _node("ag-ui", "turns.mjs", calc, "calc", *QUESTIONS) == ANSWERS


def test_ai_sdk_next_message_of_a_chat(calc: LiveServer) -> None:
    lines = _node("aisdk", "probe.mjs", calc, "turns", "calc", uuid.uuid4().hex, *QUESTIONS)
    assert json.loads(lines[-1]) == {"answers": ANSWERS}


async def test_a2a(calc: LiveServer) -> None:
    """Each A2A message is a run of its own (its ``contextId`` kept as the run's session)."""
    answers = []
    async with a2a_client(calc.url, "calc", streaming=False) as client:
        for question in QUESTIONS:
            answers.append(text_of([event async for event in client.send_message(ask(question))]))
    assert answers == ANSWERS


async def test_mcp(calc: LiveServer) -> None:
    """Each tool call is a run of its own, in one session."""
    async with session_of(calc.url, KEY_A) as session:
        answers = [
            (await session.call_tool("calc", {"input": question})).content[0].text  # type: ignore[union-attr]
            for question in QUESTIONS
        ]
    assert answers == ANSWERS
