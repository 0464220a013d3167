"""The wheel and sdist as users get them (issue 19, part 2).

``make dist`` builds both; the wheel goes into fresh Python 3.11 and 3.12 venvs with its base
dependencies only. There the README's quickstart runs, and ``mypy --strict`` checks a user's file
against the installed package: it must see kanawa's annotations (``py.typed``), so a misuse of a typed
API is reported and ``result.output`` has the agent's output type, not ``Any``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.packaging.support import ONCE, REPO, SLOW, Dist, WheelEnv, run

pytestmark = [ONCE, SLOW]

LOCAL_ARTEFACTS = {
    ".venv",
    ".venv-demo",
    ".venv311",
    ".cache",
    ".kanawa",
    "node_modules",
    "test-artifacts",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "dist",
    "site",
}


def _tracked(under: str) -> list[str]:
    out = run(["git", "-C", REPO, "ls-files", "-z", under]).stdout
    return [name for name in out.split("\0") if name]


def test_sdist_ships_the_sources_and_no_local_artefacts(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as sdist:
        names = [name.split("/", 1)[1] for name in sdist.getnames() if "/" in name]
    leaked = sorted(name for name in names if LOCAL_ARTEFACTS & set(name.split("/")))
    assert leaked == []
    for required in (
        "LICENSE",
        "CHANGELOG.md",
        "README.md",
        "pyproject.toml",
        "uv.lock",
        "src/kanawa/py.typed",
    ):
        assert required in names
    missing = sorted(set(_tracked("src")) - set(names))
    assert missing == []


def test_wheel_ships_every_file_under_src_kanawa_the_license_and_py_typed(dist: Dist) -> None:
    """Package data the code reads at run time (the SmartAO page, samples and rubric, the textlint
    sidecar's package files, the ACE prompts, the timeline page, the model catalogue) is in the wheel."""
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = set(wheel.namelist())
    shipped = {name.removeprefix("src/") for name in _tracked("src/kanawa")}
    assert sorted(shipped - names) == []
    assert "kanawa/py.typed" in names
    for data in (
        "kanawa/apps/smartao/rubric.json",
        "kanawa/apps/smartao/web/index.html",
        "kanawa/apps/smartao/textlint/package.json",
        "kanawa/apps/smartao/textlint/package-lock.json",
        "kanawa/apps/smartao/textlint/sidecar.js",
        "kanawa/server/http/page/timeline.html",
        "kanawa/llm/catalogue/models.json",
    ):
        assert data in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert not any("node_modules" in name or "__pycache__" in name for name in names)


def _metadata(wheel: Path) -> dict[str, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        meta_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(archive.read(meta_name).decode())
    fields: dict[str, list[str]] = {}
    for key, value in message.items():
        fields.setdefault(key, []).append(value)
    return fields


def test_metadata_has_the_license_project_urls_and_every_extra(dist: Dist) -> None:
    meta = _metadata(dist.wheel)
    assert meta["License-Expression"] == ["MIT"]
    assert meta["License-File"] == ["LICENSE"]
    urls = dict(entry.split(", ", 1) for entry in meta["Project-URL"])
    assert set(urls) == {"Homepage", "Documentation", "Changelog", "Issues"}
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert set(meta["Provides-Extra"]) == set(project["optional-dependencies"])
    assert "Typing :: Typed" in meta["Classifier"]


def test_the_repository_url_is_the_same_everywhere() -> None:
    """One project URL: every link to a repository host in the packaging files is the Homepage."""
    homepage = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Homepage"]
    for name in ("pyproject.toml", "CHANGELOG.md", "docs/install.md"):
        repos = set(re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", (REPO / name).read_text()))
        assert repos == {homepage}, name
    assert "kanawa maintainers" in (REPO / "LICENSE").read_text()


def _readme_quickstart() -> str:
    """The README's quickstart: the first ``python`` block of its Quickstart section when it has one,
    else the script the README names as its tour (``examples/quickstart.py``)."""
    readme = (REPO / "README.md").read_text()
    section = re.search(r"^##+ [^\n]*quickstart[^\n]*\n(.*?)(?=^## |\Z)", readme, re.I | re.M | re.S)
    block = re.search(r"```python\n(.*?)```", section.group(1), re.S) if section else None
    if block is not None:
        return block.group(1)
    assert "examples/quickstart.py" in readme
    return (REPO / "examples/quickstart.py").read_text()


def test_readme_quickstart_runs_from_the_wheel(wheel_env: WheelEnv, tmp_path: Path) -> None:
    script = tmp_path / "quickstart.py"
    script.write_text(_readme_quickstart())
    proc = run([wheel_env.python, "-I", script], cwd=tmp_path, timeout=120)
    assert proc.stdout.strip()
    assert "Traceback" not in proc.stderr
    where = run([wheel_env.python, "-I", "-c", "import kanawa; print(kanawa.__file__)"], cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(wheel_env.root)


USER_FILE = """\
from pydantic import BaseModel

from kanawa import Agent


class Answer(BaseModel):
    value: int
    explanation: str


agent = Agent("calc", instructions="Answer with arithmetic.", model="test", output_type=Answer)
result = agent.run("What is 2 + 3?")
reveal_type(result.output)
if result.output is not None:
    reveal_type(result.output.value)
    shown: str = result.output.value
counter = Agent("count", model="test", output_type=int)
reveal_type(counter.run("How many?").output)
agent.run(42)
"""


def test_mypy_strict_checks_user_code_against_the_wheel_types(wheel_env: WheelEnv, tmp_path: Path) -> None:
    """mypy runs from the development environment; ``--python-executable`` makes it read the installed
    wheel (and nothing else) from the fresh venv, as a user's mypy would."""
    (tmp_path / "user.py").write_text(USER_FILE)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", wheel_env.version,
         "--python-executable", str(wheel_env.python), "--cache-dir", str(tmp_path / ".mypy_cache"),
         "user.py"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
    )  # fmt: skip
    out = proc.stdout
    assert "py.typed" not in out
    assert 'user.py:13: note: Revealed type is "user.Answer | None"' in out
    assert re.search(r'^user\.py:15: note: Revealed type is "(builtins\.)?int"$', out, re.M), out
    assert re.search(r'^user\.py:18: note: Revealed type is "(builtins\.)?int \| None"$', out, re.M), out
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 2, out
    assert errors[0].startswith("user.py:16: error: Incompatible types in assignment")
    assert errors[1].startswith('user.py:19: error: Argument 1 to "run" of "Agent" has incompatible type')
    assert proc.returncode == 1


@pytest.mark.parametrize("python", ["3.11", "3.12"])
def test_wheel_envs_hold_only_the_base_dependencies(wheel_envs: dict[str, WheelEnv], python: str) -> None:
    """The venvs the wheel tests use are base-only: no extra's package is importable there."""
    env = wheel_envs[python]
    extras = ("fastapi", "uvicorn", "numpy", "openai", "celery")
    probe = f"import importlib.util as u; print([m for m in {extras!r} if u.find_spec(m)])"
    assert run([env.python, "-I", "-c", probe]).stdout.strip() == "[]"
    version = run([env.python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]).stdout.strip()
    assert version == python
