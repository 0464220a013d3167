"""``kanawa smartao setup`` and where SmartAO finds textlint (issue 31 part 4).

The install that works (npm ci from the packaged lock into a fresh cache, then the docs block) is run
from the wheel in ``tests/packaging/test_smartao_docs.py``. Here: what a user sees when it cannot
work — no Node.js, an old one, a registry npm cannot reach — and that nothing half-made is ever used,
and the Sudachi rules with a one-line notice when Node.js is absent.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import kanawa.apps.smartao.textlint as textlint
from kanawa.apps.smartao.textlint import INSTALLED_MARK, TextlintError, start_textlint, textlint_home
from kanawa.apps.smartao.textlint_setup import locked_packages, required_node, where_textlint_runs_from

KANAWA = Path(sys.executable).parent / "kanawa"
SAMPLE = Path(textlint.__file__).with_name("samples") / "shibou_riyusho.txt"


def _env(path: str, cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(PATH=path, KANAWA_CACHE_DIR=str(cache), NO_COLOR="1", COLUMNS="200", **extra)
    return env


def _kanawa(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KANAWA), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_lock_pins_what_setup_installs() -> None:
    assert len(locked_packages()) > 300
    assert "node_modules/textlint" in locked_packages()
    assert required_node() == (18, 14)


def test_setup_without_node_says_what_to_install_and_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _kanawa(["smartao", "setup"], _env(str(empty), tmp_path / "cache"), tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "kanawa smartao setup: Node.js and npm are not on the PATH: install Node.js 18.14 or newer with npm "
        "from https://nodejs.org/ (or your system's packages, e.g. `apt-get install nodejs npm`); then run "
        "`kanawa smartao setup` again. Until then StyleAgent uses the Sudachi rules."
    ]
    assert not (tmp_path / "cache").exists()


def _fake(directory: Path, name: str, says: str) -> None:
    script = directory / name
    script.write_text(f"#!/bin/sh\necho '{says}'\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_setup_with_an_old_node_names_the_version_it_needs(tmp_path: Path) -> None:
    old = tmp_path / "bin"
    old.mkdir()
    _fake(old, "node", "v16.20.2")
    _fake(old, "npm", "8.19.4")
    done = _kanawa(["smartao", "setup"], _env(f"{old}:/usr/bin:/bin", tmp_path / "cache"), tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "kanawa smartao setup: textlint needs Node.js 18.14 or newer; `node --version` says v16.20.2; "
        "then run `kanawa smartao setup` again."
    )


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_registry_npm_cannot_reach_fails_with_what_to_do_and_leaves_nothing(tmp_path: Path) -> None:
    registry = f"http://127.0.0.1:{_closed_port()}/"
    env = _env(
        os.environ["PATH"],
        tmp_path / "cache",
        npm_config_cache=str(tmp_path / "npm-cache"),  # empty: nothing to fall back on
        npm_config_fetch_retries="0",
    )
    done = _kanawa(["smartao", "setup", "--registry", registry], env, tmp_path, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    message = done.stderr.splitlines()[-1]
    assert message.startswith(f"kanawa smartao setup: npm ci failed (exit 1) installing from {registry}: ")
    assert message.endswith(
        "— check the network or proxy, or name a registry this machine reaches: "
        "`kanawa smartao setup --registry <url>` (or `npm config set registry <url>`)"
    )
    leftovers = list((tmp_path / "cache" / "textlint").iterdir())
    assert leftovers == []  # no half-made directory, no staging directory


def test_a_half_finished_install_is_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textlint, "SIDECAR_DIR", tmp_path / "package")  # a wheel: no node_modules beside it
    monkeypatch.setenv("KANAWA_CACHE_DIR", str(tmp_path / "cache"))
    home = tmp_path / "cache" / "textlint" / textlint.lock_digest()
    (home / "node_modules" / "textlint").mkdir(parents=True)
    assert textlint_home() is None
    assert textlint.missing_reason() in (
        "textlint is not installed: run `kanawa smartao setup` (it needs Node.js 18.14 or newer and npm)",
        "Node.js is not on the PATH: install Node.js, then run `kanawa smartao setup` "
        "(it needs Node.js 18.14 or newer and npm)",
    )
    (home / "node_modules" / INSTALLED_MARK).touch()
    assert textlint_home() == home


def test_the_cache_follows_the_platform_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KANAWA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/tmp/xdg-cache")
    if sys.platform.startswith("linux"):
        assert textlint.user_textlint_dir() == Path("/tmp/xdg-cache/kanawa/textlint") / textlint.lock_digest()
    monkeypatch.setenv("KANAWA_CACHE_DIR", "~/elsewhere")
    assert textlint.cache_root() == Path("~/elsewhere").expanduser()


def test_without_node_an_application_takes_the_sudachi_rules_with_a_notice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(textlint.shutil, "which", lambda name: None)
    assert start_textlint() == (
        None,
        "StyleAgent uses the Sudachi rules: Node.js is not on the PATH: install Node.js, then run "
        "`kanawa smartao setup` (it needs Node.js 18.14 or newer and npm)",
    )
    assert start_textlint(False) == (None, None)
    with pytest.raises(TextlintError, match="kanawa smartao setup"):
        start_textlint(True)
    assert (
        where_textlint_runs_from()
        == "Sudachi rules (no Node.js on the PATH for textlint: see kanawa smartao setup)"
    )


def test_coach_without_node_says_so_in_one_line_and_coaches_with_the_sudachi_rules(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = _env(str(empty), tmp_path / "cache")
    done = _kanawa(
        ["smartao", "coach", str(SAMPLE), "--db", str(tmp_path / "e.sqlite3")], env, tmp_path, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "kanawa: StyleAgent uses the Sudachi rules: Node.js is not on the PATH: install Node.js, then run "
        "`kanawa smartao setup` (it needs Node.js 18.14 or newer and npm)"
    )
    assert "style issues: " in done.stdout
