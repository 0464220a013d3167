"""``KANAWA_GC_FREEZE``: once the server is up, what exists is frozen out of the garbage collector's
full passes; at shutdown it is handed back."""

from __future__ import annotations

import gc

import httpx
import pytest

from kanawa.server.app import create_app
from kanawa.server.settings import ServerSettings
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A


@pytest.mark.parametrize("freeze", [True, False])
async def test_the_server_freezes_its_startup_objects_while_it_serves(freeze: bool) -> None:
    gc.unfreeze()
    app = create_app(None, settings_for("embedded", None, gc_freeze=freeze))
    server = LiveServer(app).start()
    try:
        frozen = gc.get_freeze_count()
        async with httpx.AsyncClient(base_url=server.url, headers=AUTH_A) as http:
            assert (await http.get("/v1/agents")).status_code == 200
    finally:
        server.stop()
    if freeze:
        assert frozen > 10_000  # the modules, the app, the agents
        assert gc.get_freeze_count() == 0  # handed back at shutdown
    else:
        assert frozen == 0


@pytest.mark.parametrize(
    ("raw", "expected"), [("", True), ("1", True), ("true", True), ("0", False), ("off", False)]
)
def test_gc_freeze_comes_from_the_environment(
    raw: str, expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KANAWA_GC_FREEZE", raw)
    assert ServerSettings.from_env().gc_freeze is expected


def test_a_malformed_gc_freeze_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANAWA_GC_FREEZE", "maybe")
    with pytest.raises(ValueError, match="KANAWA_GC_FREEZE must be 1 or 0"):
        ServerSettings.from_env()
