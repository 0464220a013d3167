"""Helpers for the packaging tests: finding uv and both Pythons, running commands, installing the
wheel into a fresh venv.

Installs go through uv with the versions pinned in ``uv.lock`` as constraints, offline first (the uv
cache ``make`` filled) and from the registry only when the cache misses.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHONS = ("3.11", "3.12")

ONCE = pytest.mark.skipif(
    sys.version_info < (3, 12), reason="builds and installs for 3.11 and 3.12 itself: runs in the 3.12 suite"
)
"""Mark for every packaging test module: the 3.11 suite would only repeat the same builds."""

SLOW = pytest.mark.timeout(600)
"""Builds and installs take tens of seconds, more on a busy machine: above the suite's 120 s default."""


def find_uv() -> Path:
    """uv as ``make`` finds it: ``$UV``, then the ``PATH``, then the Makefile's bootstrap."""
    for candidate in (os.environ.get("UV"), shutil.which("uv"), REPO / ".cache/uv-bootstrap/bin/uv"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    pytest.fail("uv not found: run `make demo` or `make test` first (they bootstrap it)")


def _version(python: Path) -> str:
    out = subprocess.run(
        [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip()


def find_python(version: str) -> Path:
    """An interpreter of ``version``: ``pythonX.Y`` on the PATH, pyenv's build, or ``python3``."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [shutil.which(f"python{version}"), *sorted(pyenv.glob(f"{version}.*/bin/python{version}"))]
    candidates += [sys.executable, shutil.which("python3"), "/usr/bin/python3"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and _version(Path(candidate)) == version:
            return Path(candidate)
    pytest.fail(f"no Python {version} on this machine (kanawa supports 3.11 and 3.12)")


def uv_env(**extra: str) -> dict[str, str]:
    """The environment for uv and make: no interpreter downloads, nothing from an enclosing ``make`` or
    virtual environment."""
    skip = (
        "UV_PROJECT_ENVIRONMENT",
        "VIRTUAL_ENV",
        "MAKEFLAGS",
        "MFLAGS",
        "MAKELEVEL",
    )  # a `make pytest` run's
    env = {k: v for k, v in os.environ.items() if k not in skip}
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.update(extra)
    return env


def run(args: list[str | Path], *, env: Mapping[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run a command; fail the test with its output when it exits non-zero."""
    proc = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path


@dataclass(frozen=True)
class WheelEnv:
    """A fresh virtual environment with the wheel installed (and whatever ``extras`` it was given)."""

    version: str
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def kanawa(self) -> Path:
        return self.root / "bin" / "kanawa"


def install_wheel(uv: Path, root: Path, python: Path, requirement: str, constraints: Path) -> None:
    """A fresh venv at ``root`` with ``requirement`` installed (offline first, then from the registry)."""
    run([uv, "venv", "--quiet", "--python", python, root], env=uv_env())
    args: list[str | Path] = [uv, "pip", "install", "--quiet", "--python", root / "bin" / "python"]
    args += ["--constraints", constraints, requirement]
    offline = subprocess.run(
        [str(a) for a in [*args[:3], "--offline", *args[3:]]],
        capture_output=True,
        text=True,
        env=uv_env(),
        check=False,
        timeout=300,
    )
    if offline.returncode != 0:
        run(args, env=uv_env())
