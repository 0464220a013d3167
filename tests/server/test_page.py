"""The live trace timeline page in headless Chromium (Debian's ``chromium`` driven by Playwright; no
browser is ever downloaded). Screenshots go to ``test-artifacts/`` for people to look at."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, async_playwright

from kanawa.server.app import create_app
from kanawa.server.trace_view import create_trace_app
from kanawa.trace.events import Tracer
from kanawa.trace.jsonl import JsonlTraceSink
from tests.server.agents import STORY, server_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A, KEY_A

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    """A fresh headless Chromium page (one browser per test: the suite's event loop is per test)."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail("chromium is not installed: run `make browser` (apt-get install chromium)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = await browser.new_context(viewport={"width": 1280, "height": 800})
            yield await context.new_page()
            await context.close()
        finally:
            await browser.close()


@pytest.fixture(scope="module")
def page_server() -> Iterator[LiveServer]:
    server = LiveServer(create_app(server_agents(), settings_for("embedded", None))).start()
    try:
        yield server
    finally:
        server.stop()


async def _start(server: LiveServer, agent: str, text: str, *, wait: bool) -> str:
    async with (
        httpx.AsyncClient(base_url=server.url, timeout=20) as client,
        client.stream("POST", "/v1/runs", json={"agent": agent, "input": text}, headers=AUTH_A) as r,
    ):
        run_id = r.headers["x-run-id"]
        if wait:
            await r.aread()
    return run_id


async def test_the_run_page_draws_the_timeline_of_a_finished_run(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    run_id = await _start(page_server, "story", "go", wait=True)
    await page.goto(f"{page_server.url}/runs/{run_id}#key={KEY_A}")
    await page.wait_for_selector("body[data-status=completed]")
    assert await page.locator(".bar[data-kind=tool]").count() == 3
    assert await page.locator(".bar[data-kind=llm]").count() == 4
    assert await page.locator(".bar[data-kind=agent]").count() == 1
    assert (await page.inner_text("#answer")).strip() == STORY.strip()
    _prompt, completion = (await page.inner_text("#tokens")).split(" / ")
    assert int(completion) > 0
    assert "#key" not in page.url  # the key leaves the address bar
    await page.screenshot(path=str(artifacts / "timeline-run.png"), full_page=True)


async def test_the_run_page_follows_a_live_run_to_its_end(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    run_id = await _start(page_server, "slow", "0.4", wait=False)
    await page.goto(f"{page_server.url}/runs/{run_id}#key={KEY_A}")
    await page.wait_for_selector("body[data-status=running]")
    await page.wait_for_selector(".bar.open")  # a call in progress is drawn open-ended
    await page.wait_for_selector("body[data-status=completed]", timeout=20_000)
    assert await page.locator(".bar[data-kind=tool]").count() == 2
    assert await page.inner_text("#answer") == "slow and steady"
    await page.screenshot(path=str(artifacts / "timeline-live.png"), full_page=True)


async def test_the_list_page_and_a_missing_key(page: Page, page_server: LiveServer) -> None:
    run_id = await _start(page_server, "echo", "listed", wait=True)
    await page.goto(f"{page_server.url}/runs#key={KEY_A}")
    await page.wait_for_selector(f"a[href='/runs/{run_id}']")
    fresh = await page.context.new_page()
    await fresh.goto(f"{page_server.url}/runs")  # sessionStorage is per tab: this one has no key
    await fresh.wait_for_selector("#keybox.show")


async def test_trace_view_draws_a_jsonl_trace(page: Page, tmp_path: Path, artifacts: Path) -> None:
    agent = server_agents()["story"]
    sink = JsonlTraceSink(tmp_path / "run.jsonl")
    agent.tracer = Tracer([sink])
    await agent.run("go")
    await sink.aclose()
    lines = (tmp_path / "run.jsonl").read_text().splitlines()
    assert sum(1 for line in lines if json.loads(line)["event"] == "tool_end") == 3
    server = LiveServer(create_trace_app(tmp_path / "run.jsonl")).start()
    try:
        await page.goto(f"{server.url}/")
        await page.wait_for_selector("body[data-status=completed]")
        assert await page.locator(".bar[data-kind=tool]").count() == 3
        assert await page.locator("#rows tr").count() == len(lines)
        await page.screenshot(path=str(artifacts / "timeline-trace-view.png"), full_page=True)
    finally:
        server.stop()
