"""Every page kanawa serves, found from the app's own routes — so a page added later is tested too.

Issue 30 #5 and #11 as rules for every page: each page handles the API key with the one shared
script (``/page/key.js``; a ``#key=`` in a link never silently replaces the tab's key, the page asks
first) and is sent with the pages' ``Content-Security-Policy`` (what an agent's output might make it
fetch reaches no other host). The app is the one ``kanawa serve`` runs, with every application kanawa
ships mounted (SmartAO's page). :func:`html_routes` walks its routes, and
:func:`test_every_html_route_is_a_page_with_the_key_script_and_the_policy` asks each GET route for
what it answers: a route that answers HTML and is not one of :data:`PAGES` fails it. The browser tests
(headless Chromium) run over :data:`PAGES`."""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Page
from starlette.responses import HTMLResponse

from kanawa.apps.smartao.web import smartao_extension
from kanawa.server.http.app import create_app
from kanawa.server.http.page import KEY_SCRIPT_PATH
from kanawa.server.http.trace_view import create_trace_app
from tests.server.conftest import LiveServer, free_port, settings_for
from tests.server.protocols.agui_agents import agents
from tests.server.sse import AUTH_A, KEY_A, KEY_B
from tests.server.test_page import page

__all__ = ["page"]  # the timeline tests' Chromium fixture

WAIT_MS = 30_000


def served_app(directory: Path) -> FastAPI:
    """The service with every application kanawa ships mounted (SmartAO, its stores in ``directory``)."""
    extension = smartao_extension(directory, textlint=False)
    return create_app(agents=agents(), settings=settings_for("embedded", None), extensions=[extension])


def html_routes(routes: list[object], prefix: str = "") -> Iterator[tuple[str, bool]]:
    """Every GET route's path under ``routes`` (included routers and mounts walked into), with whether
    it declares an HTML answer (its ``response_class``)."""
    for route in routes:
        included = getattr(route, "original_router", None)  # an extension's router, included
        if included is not None:
            yield from html_routes(included.routes, prefix + route.include_context.prefix)  # type: ignore[attr-defined]
            continue
        if hasattr(route, "routes") and not hasattr(route, "methods"):  # a Mount
            yield from html_routes(route.routes, prefix + route.path)  # type: ignore[attr-defined]
            continue
        if "GET" in (getattr(route, "methods", None) or ()):
            answer = getattr(route, "response_class", None)
            declared = isinstance(answer, type) and issubclass(answer, HTMLResponse)
            yield prefix + route.path, declared  # type: ignore[attr-defined]


PAGES = sorted(path for path, declared in html_routes(served_app(Path("/nonexistent")).routes) if declared)
"""The pages: every GET route of the app declared to answer HTML."""

API_REFERENCE = {"/docs", "/docs/oauth2-redirect", "/redoc"}
"""FastAPI's API reference (Swagger UI, ReDoc). It takes no key of ours and shows no agent's output,
and its scripts come from a CDN: it has the headers every page outside ``/v1`` gets (no framing,
nosniff), not the pages' policy."""

PATH_VALUES = {
    "agent": "teller",
    "model": "teller",
    "thread_id": "thread-1",
    "chat_id": "chat-1",
    "response_id": "resp_0123456789abcdef",
    "name": "smartao.js",
}
"""What a path parameter is given when every route is asked (``run_id``: a run of tenant alpha)."""


@pytest.fixture(scope="module")
def page_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(served_app(tmp_path_factory.mktemp("every-page"))).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def run_id(page_server: LiveServer) -> str:
    """A finished run of tenant alpha (the live run page's)."""
    with httpx.Client(base_url=page_server.url, timeout=30) as client:
        answer = client.post("/v1/runs", json={"agent": "teller", "input": "a story"}, headers=AUTH_A)
    assert answer.status_code == 200, answer.text
    return answer.headers["x-run-id"]


def _url(path: str, run_id: str) -> str:
    values = {**PATH_VALUES, "run_id": run_id}
    missing = set(re.findall(r"{(\w+)}", path)) - set(values)
    assert not missing, f"{path}: give {missing} a value in PATH_VALUES"
    return re.sub(r"{(\w+)}", lambda m: values[m.group(1)], path)


def test_the_pages_are_found_from_the_routes() -> None:
    """The walk reaches kanawa's own pages and an extension's (a walk that found none would pass the
    tests below for nothing)."""
    assert {"/runs", "/runs/{run_id}", "/ag-ui/{agent}/page", "/smartao/"} <= set(PAGES), PAGES


POLICY = (
    "default-src 'none'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "base-uri 'none'",
)


async def _check_page(client: httpx.AsyncClient, path: str, answer: httpx.Response) -> None:
    """``answer`` (a page) loads ``/page/key.js`` once, before any other script, and none of its own
    scripts (inline or of this origin) reads a ``#key=`` or stores a key; it has the pages' policy."""
    policy = answer.headers["content-security-policy"]
    for directive in POLICY:
        assert directive in policy, (path, policy)
    script_src = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    assert "'unsafe-inline'" not in script_src, (path, script_src)
    assert "*" not in script_src, (path, script_src)
    html = answer.text
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.DOTALL)
    sources = [re.search(r'\ssrc="([^"]+)"', attributes) for attributes, _ in scripts]
    first = sources[0] if sources else None
    assert first is not None, (path, scripts[:1])
    assert first.group(1) == KEY_SCRIPT_PATH, (path, scripts[:1])
    assert [s.group(1) for s in sources if s is not None].count(KEY_SCRIPT_PATH) == 1, path
    for source, (_, body) in zip(sources, scripts, strict=True):
        if source is not None and source.group(1) == KEY_SCRIPT_PATH:
            continue
        code = body if source is None else (await client.get(source.group(1))).text
        for own_key_handling in ("location.hash", "kanawa-key"):
            assert own_key_handling not in code, (path, source and source.group(1), own_key_handling)


async def test_every_html_route_is_a_page_with_the_key_script_and_the_policy(
    page_server: LiveServer, run_id: str
) -> None:
    """Every GET route of the app is asked (with a key); each that answers HTML is one of
    :data:`PAGES` (or the API reference) and passes :func:`_check_page`."""
    html: set[str] = set()
    async with httpx.AsyncClient(base_url=page_server.url, headers=AUTH_A, timeout=30) as client:
        for path, _ in html_routes(page_server.app.routes):
            async with client.stream("GET", _url(path, run_id)) as answer:  # /mcp's GET is a stream
                if not answer.headers.get("content-type", "").startswith("text/html"):
                    continue
                await answer.aread()
            html.add(path)
            assert answer.status_code == 200, (path, answer.status_code)
            if path in API_REFERENCE:
                assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
                continue
            assert path in PAGES, f"{path} answers HTML but does not declare it (response_class)"
            await _check_page(client, path, answer)
    assert html == set(PAGES) | API_REFERENCE


async def test_the_trace_views_page_too(tmp_path: Path) -> None:
    """``kanawa trace view``'s app: its one page is the timeline, with the same script and policy."""
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        '{"event":"agent_start","run_id":"r1","agent":"a","time":"2026-01-01T00:00:00Z","step":0}\n',
        encoding="utf-8",
    )
    app = create_trace_app(trace)
    server = LiveServer(app).start()
    try:
        async with httpx.AsyncClient(base_url=server.url) as client:
            for path, declared in html_routes(app.routes):
                answer = await client.get(path)
                is_html = answer.headers.get("content-type", "").startswith("text/html")
                assert is_html == declared, path
                if is_html:
                    await _check_page(client, path, answer)
    finally:
        server.stop()


# -- in the browser: the key a link brings, and what a page may fetch -----------------------------


class Outside:
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
def outside() -> Iterator[Outside]:
    made = Outside()
    try:
        yield made
    finally:
        made.close()


async def _go_on(page: Page, path: str) -> None:
    """Make the page use its key beyond showing the tenant, where it does not on its own."""
    if path.startswith("/ag-ui/"):
        await page.fill("#text", "a story, please")
        await page.click("button[type=submit]")
        await page.locator("#status", has_text="done").wait_for(timeout=WAIT_MS)


@pytest.mark.parametrize("path", PAGES)
async def test_a_key_in_a_link_never_silently_replaces_the_key_on_any_page(
    page: Page, page_server: LiveServer, run_id: str, path: str
) -> None:
    """Key fixation (issue 30 #5) on every page: a tab holding key A opened at ``#key=B`` asks, naming
    both tenants, shows A's tenant, sends nothing with either key before the answer (its form cannot
    be sent), and keeps A or switches to B as told."""
    url = page_server.url + _url(path, run_id)
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
    await page.goto(f"{url}#key={KEY_A}")
    await page.wait_for_selector("#tenant-name:text-is('alpha')")
    for choice in ("#switch-keep", "#switch-yes"):
        await page.goto("about:blank")
        keyed.clear()
        await page.goto(f"{url}#key={KEY_B}")
        await page.wait_for_selector("#switchbox:not([hidden])")
        text = await page.inner_text("#switch-text")
        assert "beta" in text, text  # both tenants named, in the page's language
        assert "alpha" in text, text
        assert "#key" not in page.url
        assert await page.evaluate(held) == KEY_A  # nothing replaced while the page asks
        assert await page.inner_text("#tenant-name") == "alpha"  # the tenant in use, shown throughout
        for submit in await page.locator("button[type=submit]").all():
            assert await submit.is_disabled()
        assert keyed == []  # nor anything sent with either key
        await page.click(choice)
        await page.wait_for_selector("#switchbox", state="hidden")
        tenant, key = ("alpha", KEY_A) if choice == "#switch-keep" else ("beta", KEY_B)
        await page.wait_for_selector(f"#tenant-name:text-is('{tenant}')")
        assert await page.evaluate(held) == key
        await _go_on(page, path)
        assert keyed, "the page went on with the key chosen"
        assert {auth for _, auth in keyed} == {f"Bearer {key}"}


@pytest.mark.parametrize("path", PAGES)
async def test_the_pages_policy_stops_any_fetch_to_another_host(
    page: Page, page_server: LiveServer, outside: Outside, run_id: str, path: str
) -> None:
    """Issue 30 #11's policy alone, on every page: a style's ``url()``, an image and a ``fetch`` aimed
    at another origin never leave the page."""
    outside.seen.clear()
    blocked: list[str] = []
    page.on(
        "console",
        lambda message: blocked.append(message.text) if "Content Security" in message.text else None,
    )
    await page.goto(f"{page_server.url}{_url(path, run_id)}#key={KEY_A}")
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
    await page.wait_for_timeout(300)  # a request the page had started would have arrived by now
    assert outside.seen == []
    assert blocked, "the browser reports what the policy refused"
