"""The minimal AG-UI chat page (``GET /ag-ui/{agent}/page``) in headless Chromium (Debian's
``chromium`` driven by Playwright): it posts a ``RunAgentInput``, draws the streamed answer and the
agent's tool calls, runs its own frontend tool when the agent calls it and sends the result back,
after a reload goes on with the same thread, and resumes a stream cut mid-answer with
``Last-Event-ID`` without losing or repeating a word."""

from __future__ import annotations

import http.server
import shutil
import threading
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from playwright.async_api import Page, Route, async_playwright

from kanawa.server.http.app import create_app
from tests.server.conftest import LiveServer, free_port, settings_for
from tests.server.protocols.agui_agents import STORY, agents
from tests.server.sse import KEY_A, KEY_B

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


# -- every page: the key a link brings, and what the page may fetch -------------------------------

PAGES = ["/runs", "/ag-ui/teller/page"]
"""A page of each kind the server sends (the timeline's views share one page; test_page.py has the
rest of the timeline's key tests)."""


class _Outside:
    """Another origin on loopback that counts the requests that reach it."""

    def __init__(self) -> None:
        seen: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.seen = seen
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def outside() -> Iterator[_Outside]:
    made = _Outside()
    try:
        yield made
    finally:
        made.close()


@pytest.mark.parametrize("path", PAGES)
async def test_a_key_in_a_link_never_silently_replaces_the_key_on_any_page(
    page: Page, page_server: LiveServer, path: str
) -> None:
    """Key fixation (issue 30 #5): every page handles the key with the one shared script — a tab
    holding key A opened at ``#key=B`` asks, naming both tenants, sends nothing with either key
    before the answer, and keeps A or switches to B as told."""
    held = "() => sessionStorage.getItem('kanawa-key')"
    keyed: list[tuple[str, str]] = []
    page.on(
        "request",
        lambda request: (
            keyed.append((request.url, request.headers.get("authorization", "")))
            if request.headers.get("authorization") and "/v1/whoami" not in request.url
            else None
        ),
    )
    await page.goto(f"{page_server.url}{path}#key={KEY_A}")
    await page.wait_for_selector("#tenant-name:text-is('alpha')")
    for choice in ("#switch-keep", "#switch-yes"):
        await page.goto("about:blank")
        keyed.clear()
        await page.goto(f"{page_server.url}{path}#key={KEY_B}")
        await page.wait_for_selector("#switchbox:not([hidden])")
        text = await page.inner_text("#switch-text")
        assert "tenant \u201cbeta\u201d" in text, text
        assert "tenant \u201calpha\u201d" in text, text
        assert "#key" not in page.url
        assert await page.evaluate(held) == KEY_A  # nothing replaced while the page asks
        assert keyed == []  # nor anything sent with either key
        if path.startswith("/ag-ui/"):
            assert await page.locator("button[type=submit]").is_disabled()
        await page.click(choice)
        await page.wait_for_selector("#switchbox", state="hidden")
        kept = choice == "#switch-keep"
        tenant, key = ("alpha", KEY_A) if kept else ("beta", KEY_B)
        await page.wait_for_selector(f"#tenant-name:text-is('{tenant}')")
        assert await page.evaluate(held) == key
        if path.startswith("/ag-ui/"):
            await _ask(page, "a story, please")
            await page.locator("#status", has_text="done").wait_for(timeout=WAIT_MS)
        assert keyed, "the page went on with the key chosen"
        assert {auth for _, auth in keyed} == {f"Bearer {key}"}


def test_every_page_loads_the_one_key_script() -> None:
    """No page under ``server/http/page/`` reads a ``#key=`` or stores a key itself: each loads
    ``/page/key.js`` before its own script."""
    from importlib.resources import files

    pages = [one for one in files("kanawa.server.http.page").iterdir() if one.name.endswith(".html")]
    assert sorted(one.name for one in pages) == ["agui.html", "timeline.html"]
    for one in pages:
        html = one.read_text(encoding="utf-8")
        assert html.count('<script src="/page/key.js"></script>') == 1, one.name
        assert html.index("/page/key.js") < html.index("<script", html.index("/page/key.js")), one.name
        assert "location.hash" not in html, one.name
        assert "sessionStorage" not in html, one.name


HOSTILE = [
    "url({outside}/leak-a.png)",
    "red url({outside}/leak-b.png)",
    'image-set("{outside}/leak-c.png" 1x)',
    "#fff; background-image: url({outside}/leak-d.png)",
]


async def test_set_theme_takes_a_colour_only_and_the_page_fetches_nothing_elsewhere(
    page: Page, page_server: LiveServer, outside: _Outside
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


@pytest.mark.parametrize("path", PAGES)
async def test_the_pages_policy_stops_any_fetch_to_another_host(
    page: Page, page_server: LiveServer, outside: _Outside, path: str
) -> None:
    """The Content-Security-Policy alone: a style's ``url()``, an image and a ``fetch`` aimed at
    another origin never leave the page."""
    outside.seen.clear()
    blocked: list[str] = []
    page.on(
        "console",
        lambda message: blocked.append(message.text) if "Content Security" in message.text else None,
    )
    await page.goto(f"{page_server.url}{path}#key={KEY_A}")
    await page.wait_for_selector("#tenant-name:text-is('alpha')")
    fetched = await page.evaluate(
        """async (outside) => {
            document.body.style.background = `url(${outside}/style.png)`;
            const image = new Image(); image.src = `${outside}/image.png`; document.body.append(image);
            try { await fetch(`${outside}/fetch`); return "fetched"; } catch (e) { return "refused"; }
        }""",
        outside.url,
    )
    assert fetched == "refused"
    await page.wait_for_timeout(300)
    assert outside.seen == []
    assert blocked, "the browser reports what the policy refused"
    async with httpx.AsyncClient() as client:
        served = await client.get(f"{page_server.url}{path}")
    policy = served.headers["content-security-policy"]
    for directive in (
        "default-src 'none'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ):
        assert directive in policy
