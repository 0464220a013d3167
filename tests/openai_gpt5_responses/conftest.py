"""Fixtures for the ``openai_gpt5_responses`` plugin: its modules in-process, one plugin process per
test module speaking the daemon protocol, and a module-wide Responses wire server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.wire.dify_paths import plugin_dir, plugin_python, skipped_without_dify_sdk, use_plugin_modules
from tests.wire.dify_plugin import DifyPluginProcess
from tests.wire.server import WireServer

pytest_pycollect_makemodule = skipped_without_dify_sdk  # on Python 3.11 (see its docstring)
PLUGIN = "openai_gpt5_responses"
PLUGIN_DIR = use_plugin_modules(PLUGIN)
API_KEY = "sk-test-PLUGINKEY-42c9e1"


@pytest.fixture(scope="module")
def responses_server() -> Iterator[WireServer]:
    with WireServer() as server:
        yield server


@pytest.fixture
def server(responses_server: WireServer) -> WireServer:
    """The module's wire server with an empty queue and request log for this test."""
    responses_server.requests.clear()
    responses_server._queue.clear()
    return responses_server


@pytest.fixture(scope="module")
def model_plugin() -> Iterator[DifyPluginProcess]:
    with DifyPluginProcess(
        plugin_dir(PLUGIN), python=plugin_python(PLUGIN), env={"OPENAI_GPT5_AUDIT_LOG": "true"}
    ) as process:
        yield process


def credentials(server: WireServer, **extra: str) -> dict[str, str]:
    return {"openai_api_key": API_KEY, "openai_api_base": server.base_url, "max_retries": "0", **extra}
