"""``/ai-sdk/{agent}`` driven by the Vercel AI SDK's own UI code, installed from npm by the project's
files (``tests/clients/aisdk/``, ``make node-clients``): ``ai``'s ``DefaultChatTransport`` and
``readUIMessageStream`` in Node, and a ``useChat`` page (``@ai-sdk/react``, bundled by esbuild at
install time) in headless Chromium — in memory and on Redis.

The documented scripts (``chat.mjs``, ``chat_tools.mjs``) run as the docs show them (checked byte for
byte); ``probe.mjs`` reports every chunk for the finer checks. Mid-answer means: while the ``gated``
agent's ``hold`` tool waits for the test (:mod:`.ai_sdk_agents`), not after some delay.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from playwright.async_api import Page, Route, async_playwright

from kanawa.server.http.app import create_app
from tests.docs.blocks import blocks_in
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.ai_sdk_agents import (
    BUNDLE,
    CLIENTS,
    FIRST_HALF,
    GATE,
    ROOT,
    SECOND_HALF,
    ai_sdk_agents,
    page_extension,
)
from tests.server.sse import KEY_A

CHROMIUM = "/usr/bin/chromium"
PAGES = [ROOT / "docs" / "ai-sdk.md", ROOT / "docs" / "ai-sdk.ja.md"]
SHOWN = {"chat.mjs": "js", "chat_tools.mjs": "js", "page/chat.jsx": "jsx"}
"""The client files the docs pages show, and their blocks' language."""


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed: the AI SDK client tests need Node.js 18+"
    if not (CLIENTS / "node_modules" / ".installed").is_file() or not BUNDLE.is_file():
        return "the AI SDK clients are not installed: run `make node-clients`"
    return None


needs_node = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


@pytest.fixture(scope="module", params=["embedded", "redis"])
def served(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    app = create_app(
        agents=ai_sdk_agents(), settings=settings_for(request.param, redis), extensions=[page_extension()]
    )
    server = LiveServer(app).start()
    try:
        yield server
    finally:
        server.stop()


def _node(server: LiveServer, script: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(KANAWA_URL=server.url, KANAWA_API_KEY=KEY_A, NODE_NO_WARNINGS="1")
    node = shutil.which("node")
    assert node is not None
    return subprocess.Popen(
        [node, script, *args], cwd=CLIENTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _run(server: LiveServer, script: str, *args: str) -> list[str]:
    process = _node(server, script, *args)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err[-4000:]
    return out.rstrip("\n").splitlines()


def _texts(message: dict[str, Any]) -> str:
    return "".join(part["text"] for part in message["parts"] if part["type"] == "text")


# -- the docs show the files the tests run --------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_docs_show_the_tested_clients_as_they_are(page: Path) -> None:
    blocks = {block.code for block in blocks_in(page)}
    for name in SHOWN:
        assert (CLIENTS / name).read_text(encoding="utf-8") in blocks, f"{page.name} does not show {name}"


# -- ai in Node ---------------------------------------------------------------------------------------


@needs_node
def test_the_documented_chat_script_prints_the_answer(served: LiveServer) -> None:
    assert _run(served, "chat.mjs", "concierge", "hello there") == ["Hello! You said: hello there"]


@needs_node
def test_the_documented_client_tool_round_trip(served: LiveServer) -> None:
    lines = _run(served, "chat_tools.mjs", "concierge", "What is the weather?")
    assert lines == ["the agent asks for the weather in Kyoto", "Kyoto is sunny, 21°C in Kyoto"]


@needs_node
def test_read_ui_message_stream_builds_the_message_of_every_part(served: LiveServer) -> None:
    chat_id = uuid.uuid4().hex
    seen = json.loads(_run(served, "probe.mjs", "stream", "concierge", chat_id, "hi", "tools")[-1])
    assert "failure" not in seen  # readUIMessageStream took every chunk
    message = seen["message"]
    assert message["id"].startswith("msg_")
    kinds = [part["type"] for part in message["parts"]]
    assert kinds == ["step-start", "reasoning", "text", "tool-tick", "tool-get_weather"]
    tick, weather = message["parts"][3], message["parts"][4]
    assert (tick["state"], tick["output"]) == ("output-available", "tick 1")
    assert (weather["state"], weather["input"]) == ("input-available", {"city": "Kyoto"})
    assert seen["chunks"][-1] == {"type": "finish", "finishReason": "tool-calls"}


@needs_node
def test_a_reconnect_mid_answer_loses_nothing_and_repeats_nothing(served: LiveServer) -> None:
    GATE.clear()
    chat_id = uuid.uuid4().hex
    process = _node(served, "probe.mjs", "cut", "gated", chat_id, "go")
    try:
        assert process.stdout is not None
        cut = json.loads(process.stdout.readline())
        assert cut["phase"] == "cut"
        assert json.loads(process.stdout.readline()) == {"phase": "reconnected"}
        GATE.set()  # only now may the answer go on: the reconnect came mid-answer
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err[-4000:]
    done = json.loads(out.splitlines()[-1])
    before, replay = cut["chunks"], done["chunks"]
    assert replay[: len(before)] == before  # the same answer from its start: same ids, same events
    assert _texts(done["message"]) == FIRST_HALF + SECOND_HALF
    assert done["message"]["id"] == before[0]["messageId"]
    assert replay[-1] == {"type": "finish", "finishReason": "stop"}


@needs_node
def test_a_reconnect_to_a_chat_with_nothing_going_gets_null(served: LiveServer) -> None:
    assert json.loads(_run(served, "probe.mjs", "resume", "concierge", uuid.uuid4().hex)[-1]) == {
        "resumed": None
    }
    refused = json.loads(_run(served, "probe.mjs", "error", "nobody", "c", "hi")[-1])
    assert "no agent named" in refused["error"]


# -- useChat in Chromium ----------------------------------------------------------------------------


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    if shutil.which(CHROMIUM) is None:
        pytest.fail("chromium is not installed: run `make browser` (apt-get install chromium)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            context = await browser.new_context()
            yield await context.new_page()
            await context.close()
        finally:
            await browser.close()


async def _ask(page: Page, server: LiveServer, agent: str, question: str) -> None:
    await page.goto(f"{server.url}/test-page/chat.html#agent={agent}&key={KEY_A}")
    await page.wait_for_selector("#status >> text=ready")
    await page.fill("input", question)
    await page.click("button")


@needs_node
async def test_use_chat_resumes_after_a_reload_mid_answer(served: LiveServer, page: Page) -> None:
    GATE.clear()
    await _ask(page, served, "gated", "go")
    await page.wait_for_selector("text=hold: input-streaming", timeout=30_000)
    assert FIRST_HALF.strip() in await page.inner_text("main")
    await page.reload()  # the answer's connection goes with the page; the chat lives in sessionStorage
    await page.wait_for_selector("#status >> text=streaming", timeout=30_000)
    GATE.set()
    await page.wait_for_selector(f"text={SECOND_HALF}", timeout=30_000)
    await page.wait_for_selector("#status >> text=ready", timeout=30_000)
    assistant = page.locator("section[data-role=assistant]")
    assert await assistant.count() == 1
    text = await assistant.inner_text()
    assert text.count(FIRST_HALF.strip()) == 1
    assert text.count(SECOND_HALF) == 1
    assert "hold: output-available" in text


@needs_node
async def test_use_chat_runs_a_client_tool_and_the_run_goes_on(served: LiveServer, page: Page) -> None:
    await _ask(page, served, "concierge", "weather please")
    await page.wait_for_selector("text=Kyoto is sunny, 21°C", timeout=30_000)
    await page.wait_for_selector("#status >> text=ready", timeout=30_000)
    assistant = page.locator("section[data-role=assistant]")
    assert await assistant.count() == 1
    text = await assistant.inner_text()
    assert "get_weather: output-available" in text
    assert "tick: output-available" in text


# -- useChat on another origin (KANAWA_CORS_ORIGINS), and Send after an error ------------------------


@pytest.fixture(scope="module")
def origins() -> Iterator[dict[str, LiveServer]]:
    """The useChat page served alone from one loopback origin (``page``); kanawa on two others, one
    allowing the page's origin (``allowing``), one with the default settings (``plain``)."""
    alone = FastAPI()
    router = page_extension().router
    assert router is not None
    alone.include_router(router)
    page_server = LiveServer(alone)
    made = {
        "page": page_server,
        "allowing": LiveServer(
            create_app(
                agents=ai_sdk_agents(),
                settings=settings_for("embedded", None, cors_origins=(page_server.url,)),
            )
        ),
        "plain": LiveServer(create_app(agents=ai_sdk_agents(), settings=settings_for("embedded", None))),
    }
    for server in made.values():
        server.start()
    try:
        yield made
    finally:
        for server in made.values():
            server.stop()


def _page_on(origins: dict[str, LiveServer], kanawa: str, agent: str = "concierge") -> str:
    return f"{origins['page'].url}/test-page/chat.html#agent={agent}&key={KEY_A}&server={origins[kanawa].url}"


@needs_node
async def test_use_chat_from_another_origin_works_where_that_origin_is_allowed(
    origins: dict[str, LiveServer], page: Page
) -> None:
    """Issue 34 #2: a page on another loopback origin (another port) chats with kanawa when
    ``KANAWA_CORS_ORIGINS`` names its origin; with the default settings the browser refuses it."""
    await page.goto(_page_on(origins, "allowing"))
    await page.wait_for_selector("#status >> text=ready")
    await page.fill("input", "hello")
    await page.click("button")
    await page.wait_for_selector("text=Kyoto is sunny, 21°C", timeout=30_000)  # the client tool's turn too
    await page.wait_for_selector("#status >> text=ready", timeout=30_000)
    assert await page.locator(".error").count() == 0

    await page.evaluate("sessionStorage.clear()")
    await page.goto("about:blank")
    await page.goto(_page_on(origins, "plain"))
    await page.fill("input", "hello")
    await page.click("button")
    await page.wait_for_selector("#status >> text=error", timeout=30_000)
    assert "fetch" in (await page.inner_text(".error")).lower()
    assert await page.locator("section[data-role=assistant]").count() == 0


@needs_node
async def test_use_chat_can_send_again_after_an_error(origins: dict[str, LiveServer], page: Page) -> None:
    """Issue 34 #3: after a failed request (status ``error``) Send is enabled again, and the retry
    gets its answer without a reload."""
    failed: list[str] = []

    async def fail_once(route: Route) -> None:
        if route.request.method == "POST" and not failed:
            failed.append(route.request.url)
            await route.abort("connectionreset")
        else:
            await route.continue_()

    await page.route(f"{origins['allowing'].url}/ai-sdk/concierge", fail_once)
    await page.goto(_page_on(origins, "allowing"))
    await page.wait_for_selector("#status >> text=ready")
    await page.fill("input", "first try")
    await page.click("button")
    await page.wait_for_selector("#status >> text=error", timeout=30_000)
    assert failed
    send = page.locator("button[type=submit]")
    assert await send.is_enabled()
    await page.fill("input", "second try")
    await send.click()
    await page.wait_for_selector("text=Kyoto is sunny, 21°C", timeout=30_000)
    await page.wait_for_selector("#status >> text=ready", timeout=30_000)
    assert await page.locator(".error").count() == 0
