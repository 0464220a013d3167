"""``make demo`` installs only what the demo needs (issue 19, part 3): kanawa's base dependencies from
``uv.lock``, without the development, benchmark or documentation groups and without extras, in its own
environment (here a temporary one, through the Makefile's ``DEMO_VENV``) — and the demo runs there.
Like any ``make demo`` it leaves its sandbox in the repository's ``.kanawa/demo-files`` (gitignored);
its trace goes to the test's temporary folder."""

from __future__ import annotations

from pathlib import Path

from tests.packaging.support import ONCE, REPO, SLOW, run, uv_env

pytestmark = [ONCE, SLOW]


def test_make_demo_runs_with_the_base_dependencies_only(tmp_path: Path, uv: Path) -> None:
    venv = tmp_path / "demo-venv"
    proc = run(
        ["make", "-s", "-C", REPO, "demo", f"DEMO_VENV={venv}", f"UV={uv}"], env=uv_env(), cwd=tmp_path
    )
    assert "Final answer" in proc.stdout
    assert "tokens:" in proc.stdout
    python = venv / "bin" / "python"
    packages = run([python, "-c", "import importlib.metadata as m; print(sorted(d.metadata['Name'].lower() "
                    "for d in m.distributions()))"]).stdout  # fmt: skip
    for absent in ("pytest", "mypy", "ruff", "numpy", "fastapi", "openai", "mkdocs", "psutil"):
        assert f"'{absent}'" not in packages
    assert "'kanawa'" in packages
    assert "'pydantic'" in packages
