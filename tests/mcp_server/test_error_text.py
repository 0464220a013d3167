"""A failed run's MCP error text is one text (issue 34, item 5): the same over stdio (``kanawa mcp``)
and over HTTP (``/mcp`` of ``kanawa serve``, embedded and Redis runs), the tool rules' wording with
the cause every protocol tells a client — and never the provider's own text, which here carries a
key. docs/mcp-server.md shows that text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import types

from kanawa.server.http.app import create_app
from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE
from tests.mcp_server.agents import SECRET
from tests.mcp_server.test_http import served_agents, session_of
from tests.mcp_server.test_stdio import _session as stdio_session
from tests.server.conftest import LiveServer, redis_url, settings_for
from tests.server.sse import KEY_A

__all__ = ["redis_url"]  # the Redis fixture, for the redis mode

ROOT = Path(__file__).resolve().parents[2]
FAILED = (
    f"{EXECUTION_ERROR_MESSAGE} (LLMCallFailed: model request at step 1 failed: LLMConnectionError from test)"
)
"""The ``broken`` agent's failure: its model's provider refused (``upstream refused key <SECRET>``)."""


@pytest.fixture(scope="module", params=["embedded", "redis"])
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    live = LiveServer(create_app(agents=served_agents(), settings=settings_for(request.param, redis))).start()
    try:
        yield live
    finally:
        live.stop()


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_a_failed_run_reads_the_same_over_stdio_and_http(server: LiveServer, tmp_path: Path) -> None:
    async with stdio_session(tmp_path / "marker", tmp_path / "stderr") as stdio:
        over_stdio = await stdio.call_tool("broken", {"input": "anything"})
    async with session_of(server.url, KEY_A) as http:
        over_http = await http.call_tool("broken", {"input": "anything"})
    assert over_stdio.is_error
    assert over_http.is_error
    assert _text(over_stdio) == _text(over_http) == FAILED
    for result in (over_stdio, over_http):
        sent = result.model_dump_json()
        assert SECRET not in sent
        assert "upstream refused" not in sent  # the provider's words stay in the server's log


def test_the_page_shows_that_text() -> None:
    for page in ("mcp-server.md", "mcp-server.ja.md"):
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        shown = re.findall(r"`(tool invoke error: failed to execute tool[^`]*)`", text)
        assert FAILED.replace("from test)", "from openai:gpt-5 (HTTP 401))") in shown, page
