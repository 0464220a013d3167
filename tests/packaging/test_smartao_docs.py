"""SmartAO for a pip user (issue 31 part 4): docs/smartao.md's first blocks, as written, from the wheel.

A fresh venv gets ``kanawa[smartao]`` from the wheel (``pip install 'kanawa[smartao]'``); ``kanawa
smartao setup`` installs textlint's node modules from the packaged lock into a per-user cache
(``KANAWA_CACHE_DIR``, a temporary directory here, so the machine's own cache is never touched), from
the npm registry this machine's npm uses; then the page's Python block runs in an empty directory and
lints with that textlint. The wheel and the venv are built once per session (:mod:`tests.packaging.conftest`).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.docs.blocks import blocks_in
from tests.packaging.support import ONCE, REPO, SLOW, WheelEnv

pytestmark = [ONCE, SLOW]

PAGE = REPO / "docs" / "smartao.md"
PAGE_JA = REPO / "docs" / "smartao.ja.md"
LOCK = REPO / "src" / "kanawa" / "apps" / "smartao" / "textlint" / "package-lock.json"
DOCUMENTED = ["pip install 'kanawa[smartao]'", "kanawa smartao setup"]


def _commands(code: str) -> list[str]:
    return [line.split("  #")[0].strip() for line in code.splitlines() if line.strip()]


def test_the_page_opens_with_the_two_commands_then_the_program() -> None:
    first, second = list(blocks_in(PAGE))[:2]
    assert first.lang == "bash"
    assert _commands(first.code) == DOCUMENTED
    assert second.is_python
    assert second.marker is None  # a complete program
    ja = _commands(next(iter(blocks_in(PAGE_JA))).code)
    assert ja[:2] == DOCUMENTED


def _environment(cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KANAWA_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(KANAWA_CACHE_DIR=str(cache), NO_COLOR="1", **extra)
    return env


@pytest.fixture(scope="module")
def textlint_cache(smartao_env: WheelEnv, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``kanawa smartao setup`` in the pip user's venv, into a fresh cache: its output is checked here."""
    cache = tmp_path_factory.mktemp("user-cache")
    done = subprocess.run(
        [str(smartao_env.kanawa), "smartao", "setup"],
        cwd=tmp_path_factory.mktemp("anywhere"),
        env=_environment(cache),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    home = cache / "textlint" / hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    assert re.fullmatch(
        rf"textlint is ready: \d+ packages in {re.escape(str(home))} \(\d+ s\)\n", done.stdout
    )
    assert re.search(r"installing textlint .* (\d+)/\1 packages", done.stderr), (
        done.stderr
    )  # the progress line
    assert (home / "node_modules" / "textlint" / "package.json").is_file()
    assert (home / "node_modules" / ".installed").is_file()
    assert [p.name for p in (cache / "textlint").iterdir()] == [home.name]  # no staging directory left
    return cache


def test_setup_again_finds_the_install(smartao_env: WheelEnv, textlint_cache: Path, tmp_path: Path) -> None:
    again = subprocess.run(
        [str(smartao_env.kanawa), "smartao", "setup"],
        cwd=tmp_path,
        env=_environment(textlint_cache),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("textlint is already installed in ")


def test_the_first_python_block_runs_as_written_after_the_two_commands(
    smartao_env: WheelEnv, textlint_cache: Path, tmp_path: Path
) -> None:
    block = next(b for b in blocks_in(PAGE) if b.is_python)
    (tmp_path / "coach.py").write_text(block.code, encoding="utf-8")
    done = subprocess.run(
        [str(smartao_env.python), "coach.py"],
        cwd=tmp_path,
        env=_environment(textlint_cache),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    kinds = done.stdout.splitlines()
    assert kinds[0] == "route"
    assert "final_response" in kinds
    assert {"findings", "patch", "rubric"} <= set(kinds)
    assert "scores=" in done.stdout  # the rubric printed with the patched text


def test_the_block_without_setup_says_what_to_run(smartao_env: WheelEnv, tmp_path: Path) -> None:
    """The same block before ``kanawa smartao setup``: one error that names the command."""
    block = next(b for b in blocks_in(PAGE) if b.is_python)
    (tmp_path / "coach.py").write_text(block.code, encoding="utf-8")
    done = subprocess.run(
        [str(smartao_env.python), "coach.py"],
        cwd=tmp_path,
        env=_environment(tmp_path / "empty-cache"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1
    assert "TextlintError: textlint is not installed: run `kanawa smartao setup`" in done.stderr


def test_textlint_from_the_cache_lints_with_the_packaged_rules(
    smartao_env: WheelEnv, textlint_cache: Path, tmp_path: Path
) -> None:
    """The sidecar and its configuration come from the wheel, the modules from the cache: a です/である
    mix is found by the rule the configuration turns on."""
    code = (
        "from kanawa.apps.smartao.textlint import TextlintSidecar, textlint_home\n"
        "print(textlint_home())\n"
        "with TextlintSidecar() as lint:\n"
        "    print(sorted({issue.rule for issue in lint.lint('これは準備です。準備である。')}))\n"
    )
    done = subprocess.run(
        [str(smartao_env.python), "-c", code],
        cwd=tmp_path,
        env=_environment(textlint_cache),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    home, rules = done.stdout.splitlines()
    assert Path(home).parent == textlint_cache / "textlint"
    assert "japanese/no-mix-dearu-desumasu" in rules
