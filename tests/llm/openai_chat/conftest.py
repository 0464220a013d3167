"""Fixtures for the OpenAI-compatible Chat Completions adapter: an adapter aimed at ``wire_server``."""

from __future__ import annotations

import pytest

from kanawa.llm.openai.chat import OpenAIChatAdapter
from tests.wire.server import WireServer

API_KEY = "sk-local-test-key-456"


@pytest.fixture(autouse=True)
def _no_ambient_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def adapter(wire_server: WireServer) -> OpenAIChatAdapter:
    return OpenAIChatAdapter(
        "qwen2.5-7b-instruct", api_key=API_KEY, base_url=f"{wire_server.base_url}/v1", timeout=5.0
    )
