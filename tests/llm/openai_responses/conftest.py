"""Fixtures for the OpenAI Responses adapter tests: adapters pointed at the loopback ``wire_server``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from tests.wire.server import WireServer

API_KEY = "sk-test-SECRETKEY-7f3a9c"

MakeAdapter = Callable[..., OpenAIResponsesAdapter]


@pytest.fixture
def make_adapter(wire_server: WireServer) -> MakeAdapter:
    def make(model: str = "gpt-5", **kwargs: Any) -> OpenAIResponsesAdapter:
        kwargs.setdefault("api_key", API_KEY)
        kwargs.setdefault("base_url", wire_server.base_url)
        kwargs.setdefault("timeout", 5.0)
        return OpenAIResponsesAdapter(model, **kwargs)

    return make


@pytest.fixture
def adapter(make_adapter: MakeAdapter) -> OpenAIResponsesAdapter:
    return make_adapter()


@pytest.fixture(autouse=True)
def _no_ambient_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide about keys, base URLs and the audit switch themselves."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_GPT5_AUDIT_LOG"):
        monkeypatch.delenv(name, raising=False)
