"""API keys, tenant isolation, dev mode and rate limits (the service's §2 "App" edge).

A tenant never reads, resumes, cancels, approves or lists another tenant's run: every attempt answers
404, exactly like a run that does not exist.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest

from kanawa.server.http.app import create_app
from kanawa.server.http.auth import KeyConfigError, KeyRing, RateLimiter, bearer, is_loopback
from kanawa.server.settings import ServerSettings
from tests.server.agents import server_agents
from tests.server.sse import AUTH_A, AUTH_B, KEY_A, start_run


@pytest.fixture(scope="module", params=["embedded", "redis"])
def mode(request: pytest.FixtureRequest) -> str:
    """Both store modes (Celery mode reads the same Redis Streams; its API suite is test_api.py)."""
    return str(request.param)


async def test_a_missing_or_wrong_key_is_401(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/agents")).status_code == 401
    response = await client.get("/v1/agents", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    response = await client.get("/v1/agents", headers={"Authorization": f"Basic {KEY_A}"})
    assert response.status_code == 401


async def test_tenant_isolation_another_tenants_run_is_404_everywhere(client: httpx.AsyncClient) -> None:
    run_id, _ = await start_run(client, "echo", "private words", headers=AUTH_A)
    missing = "f" * 32
    for target in (run_id, missing):
        assert (await client.get(f"/v1/runs/{target}", headers=AUTH_B)).status_code == 404
        assert (await client.get(f"/v1/runs/{target}/events", headers=AUTH_B)).status_code == 404
        events = await client.get(f"/v1/runs/{target}/events", headers={**AUTH_B, "Last-Event-ID": "0"})
        assert events.status_code == 404
        assert (await client.post(f"/v1/runs/{target}/cancel", headers=AUTH_B)).status_code == 404
        approvals = await client.post(
            f"/v1/runs/{target}/approvals", json={"approved": ["x"]}, headers=AUTH_B
        )
        assert approvals.status_code == 404
    own = await client.get(f"/v1/runs/{run_id}", headers=AUTH_B)
    other = await client.get(f"/v1/runs/{missing}", headers=AUTH_B)
    assert own.json() == other.json()  # nothing tells a foreign run from a missing one
    listed = (await client.get("/v1/runs", headers=AUTH_B)).json()["runs"]
    assert run_id not in [run["id"] for run in listed]
    assert (await client.get(f"/v1/runs/{run_id}", headers=AUTH_A)).status_code == 200


async def test_run_ids_that_are_not_ids_are_refused(client: httpx.AsyncClient) -> None:
    for bad in ("..%2F..%2Fetc", "ABC", "0" * 33, "run:1"):
        assert (await client.get(f"/v1/runs/{bad}", headers=AUTH_A)).status_code in (404, 422)


async def test_approvals_for_a_run_not_waiting_are_409(client: httpx.AsyncClient) -> None:
    run_id, _ = await start_run(client, "echo", "hi")
    response = await client.post(
        f"/v1/runs/{run_id}/approvals", json={"approved": ["call_1"]}, headers=AUTH_A
    )
    assert response.status_code == 409


def test_keys_are_hashed_at_rest_and_map_to_tenants(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"file-key-2").hexdigest()
    keys = tmp_path / "keys"
    keys.write_text(f"# team keys\nfile-key-1:gamma\n\nsha256:{digest}:delta\n", encoding="utf-8")
    ring = KeyRing.parse("k-one:alpha, k-two:beta", file=keys)
    assert ring.tenant_for("k-one") == "alpha"
    assert ring.tenant_for("k-two") == "beta"
    assert ring.tenant_for("file-key-1") == "gamma"
    assert ring.tenant_for("file-key-2") == "delta"
    assert ring.tenant_for("") is None
    assert ring.tenant_for("k-three") is None
    held = repr(ring.tenants)
    assert "k-one" not in held
    assert "file-key-1" not in held


@pytest.mark.parametrize("spec", ["nocolon", ":tenant", "key:", "sha256:abc:tenant"])
def test_malformed_key_settings_are_clear_errors(spec: str) -> None:
    with pytest.raises(KeyConfigError) as caught:
        KeyRing.parse(spec)
    assert "KANAWA_API_KEYS entry 1" in str(caught.value)


def test_bearer_and_loopback_helpers() -> None:
    assert bearer("Bearer abc") == "abc"
    assert bearer("bearer  abc ") == "abc"
    assert bearer("Basic abc") == ""
    assert bearer(None) == ""
    assert is_loopback("127.0.0.1")
    assert is_loopback("::1")
    assert not is_loopback("10.1.2.3")
    assert not is_loopback(None)


async def test_without_keys_only_loopback_clients_with_the_dev_key_get_in() -> None:
    app = create_app(agents=server_agents(), settings=ServerSettings(dev_key="kw-dev-fixed-key"))
    auth = {"Authorization": "Bearer kw-dev-fixed-key"}
    local = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    remote = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
    async with httpx.AsyncClient(transport=local, base_url="http://t") as client:
        assert (await client.get("/v1/agents", headers=auth)).status_code == 200
        assert (await client.get("/v1/agents", headers={"Authorization": "Bearer other"})).status_code == 401
    async with httpx.AsyncClient(transport=remote, base_url="http://t") as client:
        assert (await client.get("/v1/agents", headers=auth)).status_code == 403


async def test_rate_limit_per_key_is_429_with_retry_after() -> None:
    app = create_app(
        agents=server_agents(), settings=ServerSettings(api_keys=f"{KEY_A}:alpha,other:beta", rate_limit=3)
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        codes = [(await client.get("/v1/agents", headers=AUTH_A)).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        limited = await client.get("/v1/agents", headers=AUTH_A)
        assert int(limited.headers["retry-after"]) >= 1
        assert (await client.get("/v1/agents", headers={"Authorization": "Bearer other"})).status_code == 200


def test_rate_limiter_refills() -> None:
    limiter = RateLimiter(60)
    assert all(limiter.check("k") == 0 for _ in range(60))
    assert limiter.check("k") > 0
    assert RateLimiter(0).check("k") == 0
