"""Smaller findings of an attack on the service: security headers on the pages (framing tried in
Chromium from another origin), keys a client could never send, provider text in error chunks, the
OpenAPI spec's error responses, a key in a query string in the access log, and development mode on
any loopback address."""

from __future__ import annotations

import http.server
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from playwright.async_api import Page, async_playwright
from typer.testing import CliRunner

from kanawa.cli.app import app as cli_app
from kanawa.llm.errors import LLMConnectionError
from kanawa.loop.errors import LLMCallFailed
from kanawa.server.http.app import create_app
from kanawa.server.http.auth import KeyConfigError, KeyRing
from kanawa.server.runs.chunks import error_chunk
from kanawa.server.settings import ServerSettings
from kanawa.tools.errors import ToolError
from tests.server.agents import server_agents
from tests.server.conftest import LiveServer, free_port, settings_for
from tests.server.sse import AUTH_A, KEY_A, start_run

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = LiveServer(create_app(agents=server_agents(), settings=settings_for("embedded", None))).start()
    try:
        yield live
    finally:
        live.stop()


# ------------------------------------------------------------------------ page headers (#13)


async def test_every_page_sends_the_security_headers(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as client:
        run_id, _ = await start_run(client, "calc", "2+3?")
        for path in ("/runs", f"/runs/{run_id}", "/docs", "/openapi.json"):
            answer = await client.get(path)
            assert answer.status_code == 200, path
            csp = answer.headers.get("content-security-policy", "")
            assert "frame-ancestors 'none'" in csp, path
            assert answer.headers.get("x-frame-options") == "DENY", path
            assert answer.headers.get("x-content-type-options") == "nosniff", path
            assert answer.headers.get("referrer-policy") == "no-referrer", path


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = await browser.new_context()
            yield await context.new_page()
            await context.close()
        finally:
            await browser.close()


@pytest.fixture
def framing_site(server: LiveServer) -> Iterator[str]:
    """Another origin (another loopback port) whose page frames the service's ``/runs``."""
    html = f'<!doctype html><title>other</title><iframe id="f" src="{server.url}/runs"></iframe>'.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args: object) -> None:
            return

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}/"
    finally:
        site.shutdown()
        site.server_close()


async def test_another_origin_cannot_frame_the_runs_page_in_chromium(
    page: Page, framing_site: str, server: LiveServer
) -> None:
    await page.goto(framing_site)
    await page.wait_for_load_state("load")
    (frame,) = [f for f in page.frames if f is not page.main_frame]
    # a blocked frame is left on Chromium's error page: none of the timeline's document is in it
    for _ in range(50):
        if frame.url != "about:blank":
            break
        await page.wait_for_timeout(50)
    content = await frame.content()
    async with httpx.AsyncClient() as client:
        timeline = (await client.get(f"{server.url}/runs")).text
    title = re.search(r"<title>(.*?)</title>", timeline)
    assert title is not None
    assert title.group(1) not in content, "the runs page rendered inside another origin's frame"
    # the same page opened directly still runs its scripts under the policy
    await page.goto(f"{server.url}/runs")
    assert await page.title() == title.group(1)
    assert await page.evaluate("document.readyState") == "complete"


# -------------------------------------------------------------------- non-ASCII keys (#15)


@pytest.mark.parametrize(
    "spec", ["kä-secret-0123:acme", "kw-\u00e9t\u00e9-key:acme", "ok-key:acme,k\u3042y:globex"]
)
def test_a_key_no_client_can_send_is_refused_at_start_up(spec: str) -> None:
    with pytest.raises(KeyConfigError, match="printable ASCII"):
        KeyRing.parse(spec)
    with pytest.raises(KeyConfigError, match="printable ASCII"):
        create_app(agents=server_agents(), settings=ServerSettings(api_keys=spec))
    runner = CliRunner(env={"KANAWA_API_KEYS": spec, "KANAWA_REDIS_URL": "", "COLUMNS": "200"})
    result = runner.invoke(cli_app, ["serve"])
    assert result.exit_code == 2
    assert "printable ASCII" in result.output
    assert "secret" not in result.output.replace("KANAWA", ""), "the message never names the key"


# ------------------------------------------------------- provider text in error chunks (#14)


def test_a_provider_errors_text_does_not_reach_the_client() -> None:
    provider_text = "upstream could not read /srv/app/conf/providers.yaml (token ghp_" + "a" * 36 + ")"
    failure = LLMCallFailed(
        LLMConnectionError(provider_text, provider="openai", model="gpt-5", status_code=502), step=2
    )
    chunk = error_chunk(failure, agent="a", now=0)
    data = json.dumps(chunk.data)
    assert chunk.data["code"] == "LLMCallFailed"  # type: ignore[call-overload,index]
    message = chunk.data["message"]  # type: ignore[call-overload,index]
    assert message == "model request at step 2 failed: LLMConnectionError from openai:gpt-5 (HTTP 502)"
    for leak in ("/srv/app", "providers.yaml", "ghp_", "upstream could not read"):
        assert leak not in data
    tool = error_chunk(ToolError("cannot open /home/svc/.ssh/id_rsa or C:\\keys\\a.pem"), agent="a", now=0)
    text = tool.data["message"]  # type: ignore[call-overload,index]
    assert "/home/svc" not in text
    assert "id_rsa" not in text
    assert "a.pem" not in text
    assert "[path]" in text


async def test_a_provider_failure_in_a_run_shows_the_code_and_a_safe_message(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as client:
        _, events = await start_run(client, "boom", "x")
    error = next(e.chunk for e in events if e.chunk["type"] == "error")
    assert error["data"]["code"] == "LLMCallFailed"
    assert "upstream refused" not in error["data"]["message"], "the provider's own text stays out"
    assert "LLMConnectionError" in error["data"]["message"]


# ------------------------------------------------------------------ the OpenAPI spec's errors


async def test_the_openapi_spec_lists_the_errors_the_server_gives(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as client:
        spec = (await client.get("/openapi.json")).json()
        assert (await client.get("/v1/runs")).status_code == 401
        too_big = await client.post("/v1/runs", content=b"x" * 70_000, headers=AUTH_A)
        assert too_big.status_code == 413
    operations = {
        (path, method): op
        for path, item in spec["paths"].items()
        if path.startswith("/v1/")
        for method, op in item.items()
    }
    assert operations
    for (path, method), op in operations.items():
        codes = set(op["responses"])
        assert {"401", "429"} <= codes, (path, method, codes)
        if "requestBody" in op:
            assert {"400", "413", "422"} <= codes, (path, method, codes)
    assert "400" in operations[("/v1/runs/{run_id}/events", "get")]["responses"]


# ------------------------------------------------------------- a key in the access log (query)


def test_a_key_in_a_query_string_is_masked_in_the_access_log() -> None:
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    app = create_app(agents=server_agents(), settings=settings_for("embedded", None))
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="info", lifespan="on", ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    access = logging.getLogger("uvicorn.access")
    handler = Keep()
    handler.setFormatter(access.handlers[0].formatter if access.handlers else logging.Formatter())
    try:
        for _ in range(400):
            if server.started:
                break
            time.sleep(0.01)
        access.addHandler(handler)
        httpx.get(f"http://127.0.0.1:{port}/healthz", params={"key": KEY_A})
        httpx.get(f"http://127.0.0.1:{port}/v1/agents", params={"api_key": KEY_A, "x": "1"})
        for _ in range(100):
            if len(records) >= 2:
                break
            time.sleep(0.01)
    finally:
        access.removeHandler(handler)
        server.should_exit = True
        thread.join(timeout=15)
    assert len(records) >= 2, records
    assert all(KEY_A not in line for line in records), records
    assert any("/healthz?key=" in line for line in records), "the request is still logged"


# ------------------------------------------------------------- dev mode on any loopback address


@pytest.mark.parametrize("host", ["127.0.0.2", "::1"])
def test_development_mode_serves_any_loopback_address(host: str) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(PYTHONPATH=str(ROOT), COLUMNS="200", NO_COLOR="1")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "kanawa"), "serve", "--host", host, "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        key = ""
        for _ in range(50):
            line = proc.stdout.readline()
            found = re.search(r"development key (kw-dev-\S+)", line)
            if found or not line:
                key = found.group(1) if found else ""
                break
        assert key, proc.stderr.read() if proc.poll() is not None and proc.stderr else "no key printed"
        url = f"http://{'[::1]' if ':' in host else host}:{port}"
        response = None
        for _ in range(200):
            try:
                response = httpx.get(f"{url}/v1/agents", headers={"Authorization": f"Bearer {key}"})
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        assert response is not None
        assert response.status_code == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
