"""Fixtures for the ``gpt5_agent_strategies`` plugin: its modules in-process and one plugin process per
test module, answered as Dify answers backwards invocations (:mod:`tests.gpt5_agent_strategies.dify`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.wire.dify_paths import plugin_dir, plugin_python, skipped_without_dify_sdk, use_plugin_modules
from tests.wire.dify_plugin import DifyPluginProcess

pytest_pycollect_makemodule = skipped_without_dify_sdk  # on Python 3.11 (see its docstring)
PLUGIN = "gpt5_agent_strategies"
PLUGIN_DIR = use_plugin_modules(PLUGIN)


@pytest.fixture(scope="module")
def files_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin's ``/files`` for this module (``KANAWA_FILES_ROOT``)."""
    return tmp_path_factory.mktemp("files")


@pytest.fixture(scope="module")
def agent_plugin(files_root: Path) -> Iterator[DifyPluginProcess]:
    with DifyPluginProcess(
        plugin_dir(PLUGIN), python=plugin_python(PLUGIN), env={"KANAWA_FILES_ROOT": str(files_root)}
    ) as process:
        yield process
