"""Install test: each built .difypkg, unpacked into an empty directory with a fresh Python 3.12 venv
that has only the package's ``requirements.txt``, passes the plugin's protocol tests.

The venv is cached under ``.cache/difypkg-venvs/<hash of the requirements and Python version>``, so a
repeated run only unpacks and runs the tests; a change to ``requirements.txt`` makes a new one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.wire.dify_paths import DIFY_SDK_SKIP, NO_DIFY_SDK, REPO

sys.path.insert(0, str(REPO / "tools"))
import difypkg

pytestmark = pytest.mark.skipif(NO_DIFY_SDK, reason=DIFY_SDK_SKIP)  # the venvs get this Python
VENV_CACHE = REPO / ".cache" / "difypkg-venvs"


def plugin_venv(requirements: bytes) -> Path:
    """A venv with exactly ``requirements`` installed by pip (cached by their hash)."""
    key = hashlib.sha256(requirements + sys.version.encode()).hexdigest()[:16]
    target = VENV_CACHE / key
    python = target / "bin" / "python"
    if (target / ".ready").is_file():
        return python
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    (target.parent / f"{key}.requirements.txt").write_bytes(requirements)
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, timeout=300)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-r", str(target.parent / f"{key}.requirements.txt")],
        check=True,
        timeout=900,
    )
    (target / ".ready").write_text("ok\n")
    return python


PLUGINS = ("openai_gpt5_responses", "gpt5_agent_strategies")
PROTOCOL_TESTS = (
    "tests/openai_gpt5_responses/test_protocol.py",
    "tests/gpt5_agent_strategies/test_protocol.py",
    "tests/gpt5_agent_strategies/test_end_to_end.py",
)


@pytest.mark.timeout(1800)
def test_packaged_plugins_pass_the_protocol_tests_in_fresh_venvs(tmp_path: Path) -> None:
    # the inner run gets its own temporary root: a shared --basetemp (PYTEST_ADDOPTS) would be wiped
    # by it, unpacked plugins included
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["KANAWA_DIFY_PLUGINS_ROOT"] = str(tmp_path / "plugins")
    for plugin in PLUGINS:
        package = difypkg.build(REPO / "app" / plugin, tmp_path / "dist")
        unpacked = tmp_path / "plugins" / plugin
        unpacked.mkdir(parents=True)
        with zipfile.ZipFile(package) as archive:
            archive.extractall(unpacked)
        python = plugin_venv((unpacked / "requirements.txt").read_bytes())
        outside = subprocess.run(
            [str(python), "-c", "import kanawa"], cwd=tmp_path, capture_output=True, check=False
        )
        assert outside.returncode != 0, "the venv must not have kanawa: the package bundles it"
        env[f"KANAWA_DIFY_PLUGIN_PYTHON_{plugin.upper()}"] = str(python)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'inner'}",
            *PROTOCOL_TESTS,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
    assert " skipped" not in run.stdout
