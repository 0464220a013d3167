"""Fixtures for the Anthropic adapter tests: an adapter pointed at the loopback ``wire_server``."""

from __future__ import annotations

import pytest

from kanawa.llm.anthropic.adapter import AnthropicAdapter
from tests.wire.server import WireServer

API_KEY = "sk-ant-test-key-123"


@pytest.fixture
def adapter(wire_server: WireServer) -> AnthropicAdapter:
    return AnthropicAdapter("claude-sonnet-5", api_key=API_KEY, base_url=wire_server.base_url, timeout=5.0)
