"""The minimal AG-UI chat page (``GET /ag-ui/{agent}/page``) in headless Chromium (Debian's
``chromium`` driven by Playwright): it posts a ``RunAgentInput``, draws the streamed answer and the
agent's tool calls, runs its own frontend tool when the agent calls it and sends the result back,
after a reload goes on with the same thread, and resumes a stream cut mid-answer with
``Last-Event-ID`` without losing or repeating a word."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from playwright.async_api import Page, Route, async_playwright

from kanawa.server.http.app import create_app
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.agui_agents import STORY, agents
from tests.server.sse import KEY_A
from tests.server.test_every_page import Outside, outside

__all__ = ["outside"]  # the other origin the pages' tests count requests on

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def page_server() -> Iterator[LiveServer]:
    server = LiveServer(create_app(agents=agents(), settings=settings_for("embedded", None))).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    if shutil.which(CHROMIUM) is None:
        pytest.fail("chromium is not installed: run `make browser` (apt-get install chromium)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = await browser.new_context(viewport={"width": 1000, "height": 800})
            yield await context.new_page()
            await context.close()
        finally:
            await browser.close()


async def _ask(page: Page, text: str) -> None:
    await page.fill("#text", text)
    await page.click("button[type=submit]")


async def test_the_page_streams_runs_a_frontend_tool_and_goes_on_after_a_reload(
    page: Page, page_server: LiveServer
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await page.goto(f"{page_server.url}/ag-ui/helper/page#key={KEY_A}")
    assert "#key" not in page.url  # the key leaves the address bar (kept in sessionStorage)
    await _ask(page, "What is the weather in Tokyo?")
    answer = page.locator(".msg.assistant", has_text="(question 1)")
    await answer.wait_for(timeout=WAIT_MS)
    assert await answer.text_content() == (
        "Weather Tokyo: sunny, 21°C. The page says: the page is now rgb(255, 220, 120). (question 1)"
    )
    tools = await page.locator(".msg.tool").all_text_contents()
    assert tools == [
        '🔧 lookup({"city": "Tokyo"})',
        "↳ Tokyo: sunny, 21°C",
        '🔧 set_theme({"color": "rgb(255, 220, 120)"})',
        "↳ the page is now rgb(255, 220, 120)",
    ]
    # the frontend tool ran in the page
    assert await page.evaluate("document.body.style.backgroundColor") == "rgb(255, 220, 120)"

    await page.reload()
    assert await page.locator(".msg").count() == 0
    await _ask(page, "And tomorrow?")
    await page.locator(".msg.assistant", has_text="(question 2)").wait_for(timeout=WAIT_MS)
    assert errors == []


async def test_the_page_shows_a_failed_run_and_has_the_page_headers(
    page: Page, page_server: LiveServer
) -> None:
    await page.goto(f"{page_server.url}/ag-ui/shaky/page#key={KEY_A}")
    await _ask(page, "hello")
    failure = page.locator(".msg.error")
    await failure.wait_for(timeout=WAIT_MS)
    assert "model request" in (await failure.text_content() or "")
    async with httpx.AsyncClient() as client:
        served = await client.get(f"{page_server.url}/ag-ui/shaky/page")
    assert served.status_code == 200
    assert "frame-ancestors 'none'" in served.headers["content-security-policy"]
    assert served.headers["x-frame-options"] == "DENY"


async def test_the_page_resumes_a_stream_cut_mid_answer(page: Page, page_server: LiveServer) -> None:
    resumed: list[str | None] = []

    async def cut(route: Route) -> None:
        whole = await route.fetch()
        body = await whole.body()
        await route.fulfill(response=whole, body=body[:900])  # the connection ends mid-answer

    page.on(
        "request",
        lambda request: (
            resumed.append(request.headers.get("last-event-id"))
            if request.method == "GET" and "/threads/" in request.url
            else None
        ),
    )
    await page.route("**/ag-ui/teller", cut)
    await page.goto(f"{page_server.url}/ag-ui/teller/page#key={KEY_A}")
    await _ask(page, "a story, please")
    await page.locator("#status", has_text="done").wait_for(timeout=WAIT_MS)
    assert await page.locator(".msg.assistant").all_text_contents() == [STORY]
    assert len(resumed) == 1
    assert resumed[0] is not None
    assert resumed[0].startswith("0:")


HOSTILE = [
    "url({outside}/leak-a.png)",
    "red url({outside}/leak-b.png)",
    'image-set("{outside}/leak-c.png" 1x)',
    "#fff; background-image: url({outside}/leak-d.png)",
]


async def test_set_theme_takes_a_colour_only_and_the_page_fetches_nothing_elsewhere(
    page: Page, page_server: LiveServer, outside: Outside
) -> None:
    """Issue 30 #11: an agent steered into calling the page's ``set_theme`` with a style that fetches
    (``url(http://…)``) changes nothing and makes no request to another host; a colour still works."""
    outside.seen.clear()
    elsewhere: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(page_server.url) else elsewhere.append(r.url))
    await page.goto(f"{page_server.url}/ag-ui/painter/page#key={KEY_A}")
    for n, value in enumerate(HOSTILE):
        await _ask(page, value.format(outside=outside.url))
        await page.locator(".msg.assistant").nth(n).wait_for(timeout=WAIT_MS)
    await page.wait_for_timeout(300)  # a fetch the page had started would have arrived by now
    assert outside.seen == []
    assert elsewhere == []
    for said in await page.locator(".msg.assistant").all_text_contents():
        assert said.startswith("The page says: not changed:"), said
    assert await page.evaluate("document.body.style.backgroundColor") == ""
    await _ask(page, "teal")
    await page.locator(".msg.assistant", has_text="the page is now teal").wait_for(timeout=WAIT_MS)
    assert await page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(0, 128, 128)"
