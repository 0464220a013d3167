"""Extras that match the commands (issue 19, part 3).

In the base-only venvs (the wheel without extras, Python 3.11 and 3.12) each command that needs an
extra prints one line naming it and exits 2, with no traceback; the commands of the base install run
there. ``[smartao]`` alone runs ``kanawa smartao serve`` and ``coach`` from a fresh venv, and
``[all]`` is every extra. The extras' contents are read from ``pyproject.toml``.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
import tomllib
import urllib.request
from pathlib import Path

import click
import pytest
import typer.main

from kanawa.cli import app
from kanawa.cli.extras import EXTRA_DISTRIBUTIONS
from tests.packaging.support import ONCE, PYTHONS, REPO, SLOW, Dist, WheelEnv, find_python, install_wheel, run

pytestmark = [ONCE, SLOW]

NEEDS_EXTRA: dict[str, tuple[str, list[str]]] = {
    "serve": ("server", ["serve"]),
    "mcp": ("mcp", ["mcp"]),
    "trace view": ("server", ["trace", "view", "run.jsonl"]),
    "worker": ("celery", ["worker"]),
    "ace import": ("ace", ["ace", "import", "playbook.txt", "--dataset", "demo"]),
    "ace search": ("ace", ["ace", "search", "retry", "--dataset", "demo"]),
    "ace generate": ("ace", ["ace", "generate", "Add 2 and 3", "--dataset", "demo", "--model", "test"]),
    "ace adapt": ("ace", ["ace", "adapt", "train.jsonl", "--dataset", "demo", "--model", "test"]),
    "ace export": ("ace", ["ace", "export", "--dataset", "demo"]),
    "ace demo": ("ace", ["ace", "demo"]),
    "ace learn": ("ace", ["ace", "learn", "--demo"]),
    "eval run": ("evals", ["eval", "run", "dataset.yaml", "--agent", "app:agent"]),
    "smartao coach": ("smartao", ["smartao", "coach", "essay.txt"]),
    "smartao serve": ("smartao", ["smartao", "serve"]),
    "smartao setup": ("smartao", ["smartao", "setup"]),
}
"""Every command that needs an extra: the extra, and the command line a user would type."""

BASE: dict[str, list[str]] = {
    "demo": ["demo", "--no-trace"],
    "run": ["run", "What is 2 + 3?", "--model", "test", "--no-trace"],
    "trace show": ["trace", "show", "run.jsonl"],
    "models": ["models"],
    "smartao reflexion": ["smartao", "reflexion", "--db", "missing.sqlite3"],
    "eval compare": ["eval", "compare", "base.json", "candidate.json"],
}
"""The commands of the base install, with the exit code each ends with here."""
BASE_EXIT = {"demo": 0, "run": 0, "models": 0, "trace show": 1, "smartao reflexion": 1, "eval compare": 2}


def _leaf_commands(group: click.Command, prefix: str = "") -> set[str]:
    names: set[str] = set()
    for name, command in getattr(group, "commands", {}).items():
        path = f"{prefix}{name}"
        if hasattr(command, "commands"):
            names |= _leaf_commands(command, f"{path} ")
        else:
            names.add(path)
    return names


def test_every_command_is_either_base_or_names_its_extra() -> None:
    """A new command must be added to one of the two tables (and so be tested in the base venv)."""
    assert _leaf_commands(typer.main.get_command(app)) == set(NEEDS_EXTRA) | set(BASE)
    assert set(NEEDS_EXTRA).isdisjoint(BASE)


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("command", sorted(NEEDS_EXTRA))
def test_command_without_its_extra_prints_one_line_and_exits_2(
    wheel_envs: dict[str, WheelEnv], python: str, command: str, tmp_path: Path
) -> None:
    extra, argv = NEEDS_EXTRA[command]
    (tmp_path / "essay.txt").write_text("私は大学で学びたい。\n", encoding="utf-8")
    proc = subprocess.run(
        [str(wheel_envs[python].kanawa), *argv], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    pattern = (
        rf"kanawa {command} needs the '{extra}' extra \(([\w.-]+) is not installed\): "
        rf"pip install 'kanawa\[{extra}\]'"
    )
    match = re.fullmatch(pattern, lines[0])
    assert match is not None, lines[0]
    assert match.group(1) in EXTRA_DISTRIBUTIONS[extra]
    assert proc.stdout == ""
    assert proc.returncode == 2


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("command", sorted(BASE))
def test_base_commands_run_without_extras(
    wheel_envs: dict[str, WheelEnv], python: str, command: str, tmp_path: Path
) -> None:
    (tmp_path / "run.jsonl").write_text("")
    kanawa = str(wheel_envs[python].kanawa)
    proc = subprocess.run([kanawa, *BASE[command]], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "Traceback" not in proc.stderr
    assert "extra" not in proc.stderr
    assert proc.returncode == BASE_EXIT[command], proc.stdout + proc.stderr


def _extras() -> dict[str, set[str]]:
    """Each extra's distributions with the ``kanawa[...]`` self-references expanded."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]

    def expand(extra: str) -> set[str]:
        found: set[str] = set()
        for requirement in declared[extra]:
            name = re.match(r"[A-Za-z0-9._-]+", requirement)
            assert name is not None
            if name.group(0) == "kanawa":
                inner = re.search(r"\[(.*?)\]", requirement)
                assert inner is not None
                for part in inner.group(1).split(","):
                    found |= expand(part.strip())
            else:
                found.add(name.group(0).lower().replace("_", "-"))
        return found

    return {extra: expand(extra) for extra in declared}


def test_the_distributions_a_command_checks_belong_to_its_extra() -> None:
    extras = _extras()
    for extra, distributions in EXTRA_DISTRIBUTIONS.items():
        assert set(distributions) <= extras[extra], extra


def test_smartao_extra_brings_the_server() -> None:
    extras = _extras()
    assert extras["server"] <= extras["smartao"]
    assert extras["memory"] <= extras["smartao"]


def test_all_extra_is_every_extra() -> None:
    extras = _extras()
    others = set().union(*(deps for name, deps in extras.items() if name != "all"))
    assert extras["all"] == others


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read().decode()


def test_smartao_extra_alone_runs_smartao_serve_and_coach(
    smartao_env: WheelEnv, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A fresh venv with ``kanawa[smartao]`` and nothing else serves the coaching page (and the API and
    timeline page beside it) and coaches a shipped sample essay — reading the rubric, the samples and
    the page from the installed wheel."""
    root = smartao_env.root
    work = tmp_path_factory.mktemp("smartao-work")
    kanawa = root / "bin" / "kanawa"
    port = _free_port()
    server = subprocess.Popen(
        [str(kanawa), "smartao", "serve", "--port", str(port), "--data", str(work / "data")],
        cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                status, page = _get(f"http://127.0.0.1:{port}/smartao/")
                break
            except OSError:
                assert server.poll() is None, server.communicate()
                assert time.monotonic() < deadline, "kanawa smartao serve did not answer"
                time.sleep(0.2)
        assert status == 200
        assert "smartao.js" in page
        assert _get(f"http://127.0.0.1:{port}/smartao/smartao.js")[0] == 200
        assert _get(f"http://127.0.0.1:{port}/runs")[0] == 200
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    assert "Traceback" not in err
    assert "SmartAO" in out

    locate = "import kanawa.apps.smartao as m, pathlib; print(pathlib.Path(m.__file__).parent / 'samples')"
    sample = Path(run([root / "bin" / "python", "-c", locate]).stdout.strip()) / "shibou_riyusho.txt"
    coached = run([kanawa, "smartao", "coach", sample, "--db", work / "evaluations.sqlite3"], cwd=work)
    assert re.search(r"^style issues: \d+; changes in the patch: \d+$", coached.stdout, re.M), coached.stdout
    assert "similarity:" in coached.stdout


def test_ace_extra_runs_the_demo_and_names_postgres_for_a_postgres_store(
    tmp_path_factory: pytest.TempPathFactory, uv: Path, dist: Dist, lock_constraints: Path
) -> None:
    """With ``kanawa[ace]`` alone (Python 3.11), ``ace demo`` runs from the wheel (its shipped prompts);
    a PostgreSQL store, by ``--store`` or ``KANAWA_DATABASE_URL``, needs the ``postgres`` extra too."""
    root = tmp_path_factory.mktemp("ace") / "venv"
    install_wheel(uv, root, find_python("3.11"), f"kanawa[ace] @ {dist.wheel.as_uri()}", lock_constraints)
    work, kanawa = root.parent, str(root / "bin" / "kanawa")
    demo = run([kanawa, "ace", "demo", "--epochs", "1"], cwd=work)
    assert "helpful=" in demo.stdout
    url = "postgresql://127.0.0.1:9/playbooks"
    for argv, env in (
        (["ace", "export", "--dataset", "demo", "--store", url], {}),
        (["ace", "search", "retry", "--dataset", "demo"], {"KANAWA_DATABASE_URL": url}),
    ):
        proc = subprocess.run(
            [kanawa, *argv], capture_output=True, text=True, cwd=work, env={**os.environ, **env}, timeout=60
        )
        command = " ".join(argv[:2])
        assert proc.stderr.splitlines() == [
            f"kanawa {command} needs the 'postgres' extra (asyncpg is not installed): "
            "pip install 'kanawa[postgres]'"
        ]
        assert proc.returncode == 2


@pytest.mark.parametrize(
    ("model", "extra"),
    [
        ("openai:gpt-5", "openai"),
        ("anthropic:claude-sonnet-4-5", "anthropic"),
        ("gemini:gemini-2.5-flash", "gemini"),
        ("azure:gpt-5-deployment", "openai"),
        ("bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock"),
        ("vertex:gemini-2.5-flash", "vertex"),
    ],
)
def test_run_with_a_provider_whose_sdk_is_missing_names_its_extra(
    wheel_envs: dict[str, WheelEnv], model: str, extra: str, tmp_path: Path
) -> None:
    """``kanawa run`` and ``demo`` with a provider's model string: one line naming the provider's extra."""
    for argv in (["run", "What is 2 + 3?", "--model", model, "--no-trace"], ["demo", "--model", model]):
        proc = subprocess.run(
            [str(wheel_envs["3.11"].kanawa), *argv], capture_output=True, text=True, cwd=tmp_path, timeout=60
        )
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, proc.stderr
        assert f"pip install 'kanawa[{extra}]'" in lines[0]
        assert proc.returncode == 2
