"""Where the Dify plugins under test live, and how their modules are imported in-process.

By default the plugins are the source directories under ``app/``, run with this interpreter. The install
test (``tests/difypkg``) reruns the protocol tests against an unpacked ``.difypkg`` in a fresh venv by
setting ``KANAWA_DIFY_PLUGINS_ROOT`` (the directory holding the unpacked plugins) and
``KANAWA_DIFY_PLUGIN_PYTHON_<PLUGIN NAME>`` (each package's venv interpreter).

Both plugins have top-level packages with the same names (``internal``, ``provider`` …), as Dify's
layout wants; :func:`use_plugin_modules` puts one plugin first on ``sys.path`` and forgets the other's
modules, so each test folder imports its own plugin at collection time.

Importing ``dify_plugin`` monkey-patches the whole process with gevent (its ``_gevent`` module), which
would break asyncio in the rest of the test run. The plugins' modules are imported here only for unit
tests of their pure adapters, so :func:`use_plugin_modules` registers an inert ``dify_plugin._gevent``
first; every protocol test runs the plugin in its own process, patched exactly as in production.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
_SHARED = ("internal", "provider", "models", "strategies", "prompt", "main")


DIFY_SDK_SKIP = (
    "the Dify plugin SDK (dify-plugin 0.10) needs Python 3.12: the plugins under app/ are tested on 3.12"
)
NO_DIFY_SDK = sys.version_info < (3, 12)
"""This Python cannot install the Dify SDK the plugins are built on (``dify-plugin`` requires 3.12)."""


class _NeedsDifySdk(pytest.Module):
    """A test module that is reported skipped, with :data:`DIFY_SDK_SKIP`, instead of imported."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        pytest.skip(DIFY_SDK_SKIP)


def skipped_without_dify_sdk(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """A plugin test folder's ``pytest_pycollect_makemodule``: on Python 3.11 each test module there
    is a skip that says why (its imports need the SDK); on 3.12 pytest collects it as usual."""
    if not NO_DIFY_SDK:
        return None
    module: pytest.Module = _NeedsDifySdk.from_parent(parent, path=module_path)
    return module


def plugin_dir(name: str) -> Path:
    root = os.environ.get("KANAWA_DIFY_PLUGINS_ROOT")
    return Path(root) / name if root else REPO / "app" / name


def plugin_python(name: str) -> str:
    """The interpreter that runs plugin ``name``: ``KANAWA_DIFY_PLUGIN_PYTHON_<NAME>`` (the install
    test's venv for that package), else this test run's own."""
    return os.environ.get(f"KANAWA_DIFY_PLUGIN_PYTHON_{name.upper()}") or sys.executable


def use_plugin_modules(name: str) -> Path:
    if "dify_plugin" not in sys.modules:
        sys.modules.setdefault("dify_plugin._gevent", types.ModuleType("dify_plugin._gevent"))
    path = REPO / "app" / name
    for module in list(sys.modules):
        if module.split(".")[0] in _SHARED:
            del sys.modules[module]
    if str(path) in sys.path:
        sys.path.remove(str(path))
    sys.path.insert(0, str(path))
    return path


def plugin_modules(name: str, *modules: str) -> tuple[ModuleType, ...]:
    """Import ``modules`` of plugin ``name`` (its own ``internal`` …), whichever plugin was imported last."""
    use_plugin_modules(name)
    return tuple(importlib.import_module(module) for module in modules)
