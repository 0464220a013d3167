"""Browser pages on other origins (:mod:`kanawa.server.http.cors`), against the app on loopback: with
``KANAWA_CORS_ORIGINS`` a preflight of an allowed origin passes for every route the app has (every
protocol's included), another origin gets no CORS header, and by default no response carries one;
and a key is never taken from a cookie, on any route. (A useChat page served from another loopback
origin, in Chromium: ``protocols/test_ai_sdk_clients.py``.)"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from starlette.routing import Route

from kanawa.server.http.app import create_app
from kanawa.server.http.cors import EXPOSED
from kanawa.server.settings import ServerSettings
from tests.server.agents import server_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A, KEY_A

ORIGIN = "http://127.0.0.1:5173"
"""The allowed page's origin (a Vite dev server's)."""
PROTOCOL_ROUTES = {
    ("POST", "/v1/runs"),
    ("GET", "/v1/runs/{run_id}/events"),
    ("POST", "/v1/responses"),
    ("POST", "/v1/chat/completions"),
    ("GET", "/v1/models"),
    ("POST", "/ag-ui/{agent}"),
    ("GET", "/ag-ui/{agent}/threads/{thread_id}/runs/{run_id}"),
    ("POST", "/ai-sdk/{agent}"),
    ("GET", "/ai-sdk/{agent}/{chat_id}/stream"),
    ("POST", "/a2a/{agent}"),
    ("GET", "/a2a/{agent}/.well-known/agent-card.json"),
    ("POST", "/mcp"),
    ("GET", "/mcp"),
    ("DELETE", "/mcp"),
}
"""Every protocol's routes: the app's route list must hold them (a route renamed fails here)."""
ASKED_HEADERS = "authorization,content-type,last-event-id,mcp-session-id,a2a-version,x-stainless-lang"


def _doors(server: LiveServer) -> list[tuple[str, str, str]]:
    """``(method, route path, a concrete path)`` for every route of the served app."""
    doors = []
    for route in server.app.router.routes:
        if not isinstance(route, Route):
            continue
        concrete = re.sub(r"\{run_id\}", "0" * 32, route.path)
        concrete = re.sub(r"\{[a-z_]+(:path)?\}", "calc", concrete)
        for method in sorted((route.methods or set()) - {"HEAD"}):
            doors.append((method, route.path, concrete))
    assert {(method, path) for method, path, _ in doors} >= PROTOCOL_ROUTES
    return doors


def _served(**overrides: object) -> LiveServer:
    return LiveServer(
        create_app(agents=server_agents(), settings=settings_for("embedded", None, **overrides))
    )


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, LiveServer]]:
    made = {"allowed": _served(cors_origins=(ORIGIN,)), "default": _served()}
    for server in made.values():
        server.start()
    try:
        yield made
    finally:
        for server in made.values():
            server.stop()


def _preflight(origin: str, method: str) -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": ASKED_HEADERS,
    }


async def test_a_preflight_of_an_allowed_origin_passes_for_every_route(
    servers: dict[str, LiveServer],
) -> None:
    server = servers["allowed"]
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
        for method, path, concrete in _doors(server):
            answer = await http.options(concrete, headers=_preflight(ORIGIN, method))
            assert answer.status_code == 200, (method, path, answer.text)
            assert answer.headers["access-control-allow-origin"] == ORIGIN, path
            assert method in answer.headers["access-control-allow-methods"], path
            assert answer.headers["access-control-allow-headers"] == ASKED_HEADERS, path
            assert "access-control-allow-credentials" not in answer.headers, path


async def test_an_allowed_origins_request_gets_the_headers_it_may_read(
    servers: dict[str, LiveServer],
) -> None:
    async with httpx.AsyncClient(base_url=servers["allowed"].url, timeout=20) as http:
        answer = await http.get("/v1/whoami", headers={**AUTH_A, "Origin": ORIGIN})
        refused = await http.get("/v1/whoami", headers={"Origin": ORIGIN})
    assert answer.json() == {"tenant": "alpha"}
    assert answer.headers["access-control-allow-origin"] == ORIGIN
    assert set(answer.headers["access-control-expose-headers"].split(", ")) == set(EXPOSED)
    assert "access-control-allow-credentials" not in answer.headers
    assert refused.status_code == 401  # a page reads why it was refused, too
    assert refused.headers["access-control-allow-origin"] == ORIGIN


async def test_another_origin_gets_no_cors_header(servers: dict[str, LiveServer]) -> None:
    async with httpx.AsyncClient(base_url=servers["allowed"].url, timeout=20) as http:
        for origin in ("http://127.0.0.1:5174", "http://evil.example", "null"):
            preflight = await http.options("/ai-sdk/calc", headers=_preflight(origin, "POST"))
            assert preflight.status_code == 400, origin
            assert "access-control-allow-origin" not in preflight.headers, origin
            answer = await http.get("/v1/whoami", headers={**AUTH_A, "Origin": origin})
            assert "access-control-allow-origin" not in answer.headers, origin


async def test_by_default_no_response_carries_a_cors_header(servers: dict[str, LiveServer]) -> None:
    server = servers["default"]
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
        for method, path, concrete in _doors(server):
            answer = await http.options(concrete, headers=_preflight(ORIGIN, method))
            assert answer.status_code in (401, 405), (method, path)
            assert not any(name.startswith("access-control-") for name in answer.headers), path
        answer = await http.get("/v1/whoami", headers={**AUTH_A, "Origin": ORIGIN})
    assert answer.status_code == 200
    assert not any(name.startswith("access-control-") for name in answer.headers)


@pytest.mark.parametrize("kind", ["allowed", "default"])
async def test_a_key_in_a_cookie_is_never_accepted(servers: dict[str, LiveServer], kind: str) -> None:
    """On every route that needs a key, a request whose key is only in a cookie (under any of the
    names a framework might read) is refused exactly like one without a key."""
    server = servers[kind]
    cookie = "; ".join(
        f"{name}={KEY_A}" for name in ("kanawa-key", "key", "api_key", "access_token", "token")
    )
    needing = set()
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
        for method, path, concrete in _doors(server):
            headers = {"Content-Type": "application/json", "Origin": ORIGIN}
            bare = await http.request(method, concrete, headers=headers, content=b"{}")
            if bare.status_code != 401:
                continue
            needing.add((method, path))
            jar = {**headers, "Cookie": cookie, "Authorization": f"Cookie {KEY_A}"}
            with_cookie = await http.request(method, concrete, headers=jar, content=b"{}")
            assert with_cookie.status_code == 401, (method, path)
    assert PROTOCOL_ROUTES - {("GET", "/a2a/{agent}/.well-known/agent-card.json")} <= needing


def test_the_origins_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANAWA_CORS_ORIGINS", " http://127.0.0.1:5173, HTTPS://App.Example/ ")
    assert ServerSettings.from_env().cors_origins == ("http://127.0.0.1:5173", "https://app.example")
    monkeypatch.setenv("KANAWA_CORS_ORIGINS", "*")
    assert ServerSettings.from_env().cors_origins == ("*",)
    for bad in ("127.0.0.1:5173", "https://app.example/path", "ftp://x.example", "https://u:p@x.example"):
        monkeypatch.setenv("KANAWA_CORS_ORIGINS", bad)
        with pytest.raises(ValueError, match="KANAWA_CORS_ORIGINS"):
            ServerSettings.from_env()
