"""Every command in docs/install.md, run as written (issue 19, part 2).

Each ```bash block runs in order as one ``bash -euo pipefail`` script, in a scratch ``HOME`` with uv and
the system ``python3`` on the ``PATH``. The one change to the text is the repository URL: GitHub is
out of reach here, so ``https://github.com/kanawa-dev/kanawa`` points at this checkout
(``file://localhost/…``: pip refuses a ``git+file:///`` URL without a host); ``git clone`` and the
``git+`` installs then clone it exactly as they would clone the real one. uv projects run on Python
3.12 (``UV_PYTHON``), the pip venv on the system ``python3``.

After each install block the environment it installed into is checked: ``kanawa --version`` printed
the version, the ``server`` extra is importable, and kanawa came from the source the block named
(``direct_url.json``: the wheel, an editable path, or git).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.packaging.support import ONCE, REPO, SLOW, find_python, run, uv_env

pytestmark = [ONCE, SLOW]

DOC = REPO / "docs" / "install.md"
REPO_URL = "https://github.com/kanawa-dev/kanawa"


def _blocks() -> list[str]:
    return re.findall(r"^```bash\n(.*?)^```", DOC.read_text(), re.M | re.S)


def _source(block: str) -> str | None:
    """Which source an install block names: ``wheel``, ``editable``, ``git`` (``None``: no install)."""
    if "uv add" not in block and "pip install" not in block:
        return None
    if "git+" in block:
        return "git"
    if ".whl" in block:
        return "wheel"
    assert "--editable" in block or "install -e" in block, block
    return "editable"


def _check_env(venv: Path, source: str) -> None:
    python = venv / "bin" / "python"
    run([python, "-c", "import fastapi, sse_starlette, uvicorn, kanawa"])
    info = run([python, "-c", "from importlib.metadata import distribution as d; "
                "print(d('kanawa').read_text('direct_url.json'))"]).stdout  # fmt: skip
    direct = json.loads(info)
    if source == "wheel":
        assert direct["url"].endswith("/dist/kanawa-0.1.0-py3-none-any.whl"), direct
    elif source == "editable":
        assert direct.get("dir_info", {}).get("editable") is True, direct
    else:
        assert direct["vcs_info"]["vcs"] == "git", direct


def test_install_doc_commands_run_as_written(tmp_path: Path, uv: Path) -> None:
    blocks = _blocks()
    assert len(blocks) >= 7
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Homepage"] == REPO_URL
    home = tmp_path / "home"
    bindir = tmp_path / "bin"
    home.mkdir()
    bindir.mkdir()
    (bindir / "uv").symlink_to(uv)
    caches = {
        "UV_CACHE_DIR": run([uv, "cache", "dir"], env=uv_env()).stdout.strip(),
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
    }
    env = uv_env(
        HOME=str(home),
        PATH=f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        UV_PYTHON=str(find_python("3.12")),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        **caches,
    )
    env.pop("UV", None)
    for block in blocks:
        script = block.replace(REPO_URL, f"file://localhost{REPO}")
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            capture_output=True, text=True, env=env, cwd=home, timeout=300, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, f"{block}\n{proc.stdout}\n{proc.stderr}"
        if "--version" in block:
            assert "kanawa 0.1.0" in proc.stdout, block
        if "make dist" in block:
            assert {"kanawa-0.1.0-py3-none-any.whl", "kanawa-0.1.0.tar.gz"} <= set(proc.stdout.split())
        source = _source(block)
        if source is not None:
            venv = home / ("myapp" if "uv add" in block else "myapp-pip") / ".venv"
            _check_env(venv, source)


@pytest.mark.parametrize("source", ["wheel", "editable", "git"])
def test_install_doc_shows_each_source_with_uv_and_pip(source: str) -> None:
    tools = {("uv" if "uv add" in block else "pip") for block in _blocks() if _source(block) == source}
    assert tools == {"uv", "pip"}


def test_readme_install_commands_are_the_tested_ones() -> None:
    """The README's Install section shows only commands that docs/install.md runs (and this file tests)."""
    readme = (REPO / "README.md").read_text()
    section = re.search(r"^## Install\n(.*?)(?=^## )", readme, re.M | re.S)
    assert section is not None
    shown = [line for block in re.findall(r"```bash\n(.*?)```", section.group(1), re.S)
             for line in block.splitlines() if line.strip()]  # fmt: skip
    tested = {line for block in _blocks() for line in block.splitlines()}
    assert shown
    assert [line for line in shown if line not in tested] == []
    assert set(re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", section.group(1))) == {REPO_URL}
