"""Fixtures for the Gemini adapter tests: an adapter pointed at the loopback ``wire_server``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kanawa.llm.gemini.adapter import GeminiAdapter
from tests.llm.gemini.wire import API_KEY
from tests.wire.server import WireServer


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide the key themselves; a developer's own environment must not leak in."""
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def adapter(wire_server: WireServer) -> AsyncIterator[GeminiAdapter]:
    llm = GeminiAdapter("gemini-2.5-flash", api_key=API_KEY, base_url=wire_server.base_url, timeout=5.0)
    yield llm
    await llm.aclose()
