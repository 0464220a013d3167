"""The pytest plugin as a user meets it: a test suite of their own, run by pytest in a fresh process
(the plugin loads through its ``pytest11`` entry point), recorded once against a live server and
replayed after with that server gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.openai_responses.wire import text_response
from tests.wire.server import WireServer

KEY = "sk-proj-Pl7uGinRec0rdOnce4Kanawa9xQ"

USER_TESTS = """
import asyncio
import os

import pytest

from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.types import UserMessage


async def ask(text):
    adapter = OpenAIResponsesAdapter(
        "gpt-5.2", api_key=os.environ["USER_KEY"], base_url=os.environ["USER_BASE_URL"], timeout=5.0
    )
    try:
        return (await adapter.chat([UserMessage(text)])).message.text
    finally:
        await adapter.aclose()


@pytest.mark.kanawa_cassette
def test_marked():
    assert asyncio.run(ask("first")) == "recorded answer"


def test_with_the_fixture(kanawa_cassette):
    assert asyncio.run(ask("second")) == "recorded answer"
    assert len(kanawa_cassette.exchanges) == 1
"""


def _pytest(folder: Path, base_url: str, *options: str) -> subprocess.CompletedProcess[str]:
    """pytest in a fresh process with only this plugin, loaded by its entry point's name."""
    env = {**os.environ, "USER_KEY": KEY, "USER_BASE_URL": base_url, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "kanawa", "-p", "no:cacheprovider", "test_user.py"]
    return subprocess.run(
        [*command, *options], cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.timeout(400)  # three pytest processes, each importing the three SDKs
def test_record_once_replay_without_the_server_and_fail_on_what_is_not_recorded(tmp_path: Path) -> None:
    suite = tmp_path / "test_user.py"
    suite.write_text(USER_TESTS, encoding="utf-8")
    with WireServer() as server:
        server.default = lambda _request: text_response("recorded answer").json()
        base_url = server.base_url
        recorded = _pytest(tmp_path, base_url, "--kanawa-record=once")
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        assert len(server.requests) == 2
    cassettes = sorted((tmp_path / "cassettes" / "test_user").glob("*.yaml"))
    assert [p.name for p in cassettes] == ["test_marked.yaml", "test_with_the_fixture.yaml"]
    assert KEY not in "".join(p.read_text(encoding="utf-8") for p in cassettes)

    replayed = _pytest(tmp_path, base_url)  # the default mode: replay only; the server is gone
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "2 passed" in replayed.stdout

    # a request the cassette has no recording for, and a test whose cassette is missing
    suite.write_text(
        USER_TESTS.replace(
            'assert asyncio.run(ask("first")) == "recorded answer"',
            'assert asyncio.run(ask("first")) == "recorded answer"\n    asyncio.run(ask("again"))',
        ),
        encoding="utf-8",
    )
    (tmp_path / "cassettes" / "test_user" / "test_with_the_fixture.yaml").unlink()
    failed = _pytest(tmp_path, base_url)
    assert failed.returncode == 1, failed.stdout
    assert "requests with no recording" in failed.stdout
    assert f"POST {base_url}/v1/responses" in failed.stdout
    assert "--kanawa-record=once" in failed.stdout
