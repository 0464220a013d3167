"""Fixtures for the packaging tests: the wheel and sdist as ``make dist`` builds them, and fresh
virtual environments for Python 3.11 and 3.12 with the wheel and its base dependencies only.

Everything is built once per session in a temporary directory; nothing is written to the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging.support import (
    PYTHONS,
    REPO,
    Dist,
    WheelEnv,
    find_python,
    find_uv,
    install_wheel,
    run,
    uv_env,
)


@pytest.fixture(scope="session")
def uv() -> Path:
    return find_uv()


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory, uv: Path) -> Dist:
    """``make dist`` into a temporary folder (the recipe users run, not a copy of it)."""
    out = tmp_path_factory.mktemp("dist")
    run(["make", "-s", "-C", REPO, "dist", f"DIST={out}", f"UV={uv}"], env=uv_env())
    wheels, sdists = sorted(out.glob("kanawa-*.whl")), sorted(out.glob("kanawa-*.tar.gz"))
    names = sorted(p.name for p in out.iterdir())
    assert len(wheels) == 1, names
    assert len(sdists) == 1, names
    return Dist(wheel=wheels[0], sdist=sdists[0])


@pytest.fixture(scope="session")
def lock_constraints(tmp_path_factory: pytest.TempPathFactory, uv: Path) -> Path:
    """The versions ``uv.lock`` pins, as a constraints file for ``uv pip install``."""
    path = tmp_path_factory.mktemp("constraints") / "constraints.txt"
    run(
        [uv, "export", "--frozen", "--all-extras", "--no-default-groups", "--no-emit-project",
         "--no-hashes", "--no-header", "--no-annotate", "-o", path],
        env=uv_env(), cwd=REPO,
    )  # fmt: skip
    return path


@pytest.fixture(scope="session")
def wheel_envs(
    tmp_path_factory: pytest.TempPathFactory, uv: Path, dist: Dist, lock_constraints: Path
) -> dict[str, WheelEnv]:
    """Python 3.11 and 3.12 venvs with the wheel and its base dependencies only (no extras)."""
    envs: dict[str, WheelEnv] = {}
    for version in PYTHONS:
        root = tmp_path_factory.mktemp(f"wheel-{version}") / "venv"
        install_wheel(uv, root, find_python(version), str(dist.wheel), lock_constraints)
        envs[version] = WheelEnv(version=version, root=root)
    return envs


@pytest.fixture(scope="session")
def smartao_env(
    tmp_path_factory: pytest.TempPathFactory, uv: Path, dist: Dist, lock_constraints: Path
) -> WheelEnv:
    """A fresh Python 3.12 venv with ``kanawa[smartao]`` from the wheel and nothing else: what
    ``pip install 'kanawa[smartao]'`` gives a user."""
    root = tmp_path_factory.mktemp("smartao") / "venv"
    install_wheel(uv, root, find_python("3.12"), f"kanawa[smartao] @ {dist.wheel.as_uri()}", lock_constraints)
    return WheelEnv(version="3.12", root=root)


@pytest.fixture(params=PYTHONS)
def wheel_env(request: pytest.FixtureRequest, wheel_envs: dict[str, WheelEnv]) -> WheelEnv:
    return wheel_envs[request.param]
