"""The garbage collector while the server is up: ``KANAWA_GC_FREEZE`` (what exists at startup is
frozen out of the full passes) and ``KANAWA_GC_THRESHOLD`` (the young generation's threshold); both
are handed back at shutdown."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TypeVar

import httpx
import pytest

from kanawa.server.http.app import create_app
from kanawa.server.settings import ServerSettings
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A

T = TypeVar("T")


def _while_serving(settings: ServerSettings, measure: Callable[[], T]) -> T:
    """``measure()`` taken while an app with ``settings`` serves (after one request), then the
    server is stopped."""
    server = LiveServer(create_app(agents=None, settings=settings)).start()
    try:
        value = measure()
        assert httpx.get(f"{server.url}/v1/agents", headers=AUTH_A).status_code == 200
    finally:
        server.stop()
    return value


@pytest.mark.parametrize("freeze", [True, False])
def test_the_server_freezes_its_startup_objects_while_it_serves(freeze: bool) -> None:
    gc.unfreeze()
    frozen = _while_serving(settings_for("embedded", None, gc_freeze=freeze), gc.get_freeze_count)
    if freeze:
        assert frozen > 10_000  # the modules, the app, the agents
        assert gc.get_freeze_count() == 0  # handed back at shutdown
    else:
        assert frozen == 0


@pytest.mark.parametrize("threshold", [25_000, 0])
def test_the_young_generations_threshold_holds_while_the_server_serves(threshold: int) -> None:
    before = gc.get_threshold()
    serving = _while_serving(settings_for("embedded", None, gc_threshold=threshold), gc.get_threshold)
    assert serving == ((threshold, *before[1:]) if threshold else before)  # the older ones kept
    assert gc.get_threshold() == before  # handed back at shutdown


def test_the_gc_defaults_are_the_measured_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KANAWA_GC_FREEZE", raising=False)
    monkeypatch.delenv("KANAWA_GC_THRESHOLD", raising=False)
    settings = ServerSettings.from_env()
    assert (settings.gc_freeze, settings.gc_threshold) == (True, 10_000)


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


@pytest.mark.parametrize(
    ("raw", "error"),
    [("lots", "KANAWA_GC_THRESHOLD must be an integer, not 'lots'"), ("-5", "must be at least 0, not -5")],
)
def test_a_malformed_gc_threshold_names_the_variable(
    raw: str, error: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KANAWA_GC_THRESHOLD", raw)
    with pytest.raises(ValueError, match=error):
        ServerSettings.from_env()
