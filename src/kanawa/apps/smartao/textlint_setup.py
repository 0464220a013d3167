"""``kanawa smartao setup``: textlint's node modules for an installed kanawa (no checkout, no Makefile).

A wheel ships the sidecar script, its configuration and the committed ``package-lock.json``, never
``node_modules``. :func:`install` runs ``npm ci`` over that lock into the per-user cache, one
directory per lock (:func:`~kanawa.apps.smartao.textlint.user_textlint_dir`), from whatever npm
registry this machine's npm is configured for (a mirror or proxy in ``.npmrc`` works as it does for
npm itself; ``--prefer-offline`` takes packages from npm's own cache first). The story:

1. :func:`node_problem` — Node.js and npm on the PATH, Node new enough for the locked textlint;
   otherwise a sentence that says what to install.
2. The lock is copied into a staging directory next to the target and ``npm ci`` runs there; the
   caller's ``progress(done, total)`` sees the packages arrive (``total`` counted from the lock).
3. Only a finished install is moved into place (with ``node_modules/.installed``), so a cut run
   leaves nothing :func:`~kanawa.apps.smartao.textlint.textlint_home` would pick up; running it
   again resumes from npm's cache.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kanawa.apps.smartao.textlint import (
    INSTALLED_MARK,
    LOCK_FILE,
    SIDECAR_DIR,
    textlint_home,
    user_textlint_dir,
)

Progress = Callable[[int, int], None]
"""``progress(packages_installed, packages_in_the_lock)``."""

NODE_DOWNLOAD = "https://nodejs.org/ (or your system's packages, e.g. `apt-get install nodejs npm`)"
POLL_SECONDS = 0.25


class SetupError(RuntimeError):
    """The modules could not be installed; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class SetupResult:
    """Where textlint is, how many packages it has, whether this call installed them, and how long
    the install took (seconds; 0 when they were there already)."""

    home: Path
    packages: int
    installed: bool
    seconds: float


def _lock() -> dict[str, dict[str, object]]:
    packages = json.loads(LOCK_FILE.read_text(encoding="utf-8"))["packages"]
    assert isinstance(packages, dict)
    return packages


def locked_packages() -> list[str]:
    """The lock's package paths ``npm ci`` installs on every platform (``node_modules/...``)."""
    return [path for path, entry in _lock().items() if path and not entry.get("optional")]


def required_node() -> tuple[int, int]:
    """The oldest Node.js the locked textlint runs on (its ``engines.node``, ``>=18.14.0``)."""
    engines = _lock().get("node_modules/textlint", {}).get("engines")
    wanted = engines.get("node", "") if isinstance(engines, dict) else ""
    found = re.search(r">=\s*(\d+)(?:\.(\d+))?", str(wanted))
    return (int(found.group(1)), int(found.group(2) or 0)) if found else (18, 0)


def node_problem() -> str | None:
    """Why textlint cannot be installed here, as one sentence saying what to do (``None``: it can)."""
    major, minor = required_node()
    wanted = f"Node.js {major}.{minor} or newer"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = (
            "Node.js and npm are"
            if node is None and npm is None
            else f"{'Node.js' if node is None else 'npm'} is"
        )
        return f"{missing} not on the PATH: install {wanted} with npm from {NODE_DOWNLOAD}"
    answer = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False)
    version = re.match(r"v?(\d+)\.(\d+)", answer.stdout.strip())
    if version is None or (int(version.group(1)), int(version.group(2))) < (major, minor):
        return f"textlint needs {wanted}; `node --version` says {answer.stdout.strip() or 'nothing'}"
    return None


def is_installed() -> bool:
    """Whether the per-user cache holds a finished install of this lock."""
    return (user_textlint_dir() / "node_modules" / INSTALLED_MARK).is_file()


def install(
    *, force: bool = False, progress: Progress | None = None, npm_options: Sequence[str] = ()
) -> SetupResult:
    """Install the locked textlint into the per-user cache (nothing to do when it is there, unless
    ``force``). ``npm_options`` go to ``npm ci`` (``--registry=<url>``). Raises :class:`SetupError`."""
    problem = node_problem()
    if problem is not None:
        raise SetupError(problem)
    target = user_textlint_dir()
    packages = locked_packages()
    if not force and is_installed():
        return SetupResult(target, len(packages), installed=False, seconds=0.0)
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(SIDECAR_DIR / name, staging / name)
        _npm_ci(staging, packages, progress, npm_options)
        (staging / "node_modules" / INSTALLED_MARK).touch()
        _move_into_place(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return SetupResult(target, len(packages), installed=True, seconds=time.monotonic() - started)


def _npm_ci(directory: Path, packages: list[str], progress: Progress | None, options: Sequence[str]) -> None:
    npm = shutil.which("npm")
    assert npm is not None  # node_problem() checked
    command = [npm, "ci", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", *options]
    log = directory / "npm.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=directory, stdout=sink, stderr=subprocess.STDOUT)
        while process.poll() is None:  # the progress line, refreshed while npm works
            if progress is not None:
                progress(
                    sum((directory / path / "package.json").is_file() for path in packages), len(packages)
                )
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(POLL_SECONDS)
    if process.returncode != 0:
        said = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-6:]
        raise SetupError(
            f"npm ci failed (exit {process.returncode}) installing from {_registry(npm, options)}: "
            + " / ".join(said)
            + " — check the network or proxy, or name a registry this machine reaches: "
            "`kanawa smartao setup --registry <url>` (or `npm config set registry <url>`)"
        )
    if progress is not None:
        progress(len(packages), len(packages))


def _registry(npm: str, options: Sequence[str]) -> str:
    """The registry ``npm ci`` used (``--registry=`` among ``options``, else npm's configured one)."""
    command = [npm, "config", "get", "registry", *options]
    answer = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    return answer.stdout.strip() or "npm's registry"


def _move_into_place(staging: Path, target: Path) -> None:
    """``staging`` becomes ``target``; an older ``target`` (``force``) is set aside first and removed."""
    (staging / "npm.log").unlink(missing_ok=True)
    old = target.with_name(f".{target.name}-old-{os.getpid()}")
    if target.exists():
        target.rename(old)
    try:
        staging.rename(target)
    except OSError:
        if not (target / "node_modules" / INSTALLED_MARK).is_file():  # not another setup's finished one
            raise
    shutil.rmtree(old, ignore_errors=True)


def where_textlint_runs_from() -> str:
    """One line for a banner: where StyleAgent's textlint comes from, or why the Sudachi rules."""
    if shutil.which("node") is None:
        return "Sudachi rules (no Node.js on the PATH for textlint: see kanawa smartao setup)"
    home = textlint_home()
    if home is None:
        return "Sudachi rules (textlint is not set up: kanawa smartao setup)"
    return "textlint (source checkout)" if home == SIDECAR_DIR else f"textlint ({home})"


__all__ = [
    "SetupError",
    "SetupResult",
    "install",
    "is_installed",
    "locked_packages",
    "node_problem",
    "required_node",
    "where_textlint_runs_from",
]
