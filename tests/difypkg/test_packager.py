"""The .difypkg packager (tools/difypkg.py): Dify's zip format, .difyignore, limits, kanawa bundled."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from tests.wire.dify_paths import REPO

sys.path.insert(0, str(REPO / "tools"))
import difypkg

PLUGINS = ("openai_gpt5_responses", "gpt5_agent_strategies")


def _toy_plugin(root: Path, *, requirements: bool = True) -> Path:
    plugin = root / "toy"
    (plugin / "sub").mkdir(parents=True)
    (plugin / "manifest.yaml").write_text("name: toy\nversion: 1.2.3\n")
    (plugin / "main.py").write_text("print('hi')\n")
    (plugin / "sub" / "b.py").write_text("")
    (plugin / "sub" / "a.py").write_text("")
    (plugin / ".env").write_text("SECRET=1\n")
    (plugin / "notes.log").write_text("x")
    (plugin / "__pycache__").mkdir()
    (plugin / "__pycache__" / "main.cpython-312.pyc").write_bytes(b"\0")
    (plugin / ".difyignore").write_text("# comment\n.env\n*.log\n")
    if requirements:
        (plugin / "requirements.txt").write_text("dify-plugin==0.10.2\n")
    return plugin


def test_entries_are_sorted_forward_slashed_and_honour_difyignore(tmp_path: Path) -> None:
    target = difypkg.build(_toy_plugin(tmp_path), tmp_path / "out")
    assert target.name == "toy-1.2.3.difypkg"
    with zipfile.ZipFile(target) as archive:
        names = archive.namelist()
    assert names == sorted(names)
    assert all("\\" not in n and not n.startswith("/") for n in names)
    own = [n for n in names if not n.startswith("kanawa/")]
    assert own == [".difyignore", "main.py", "manifest.yaml", "requirements.txt", "sub/a.py", "sub/b.py"]
    assert "kanawa/__init__.py" in names
    assert "kanawa/llm/openai/responses_payload.py" in names
    assert not any("__pycache__" in n for n in names)


def test_the_same_sources_give_the_same_bytes(tmp_path: Path) -> None:
    plugin = _toy_plugin(tmp_path)
    first = difypkg.build(plugin, tmp_path / "a").read_bytes()
    assert difypkg.build(plugin, tmp_path / "b").read_bytes() == first


def test_a_plugin_without_requirements_is_refused(tmp_path: Path) -> None:
    with pytest.raises(difypkg.PackageError, match=r"requirements\.txt"):
        difypkg.build(_toy_plugin(tmp_path, requirements=False), tmp_path / "out")


def test_more_than_50_mb_uncompressed_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = _toy_plugin(tmp_path)
    monkeypatch.setattr(difypkg, "MAX_UNCOMPRESSED_BYTES", 1000)
    with pytest.raises(difypkg.PackageError, match="50 MB"):
        difypkg.build(plugin, tmp_path / "out")
    assert difypkg.MAX_UNCOMPRESSED_BYTES == 1000
    assert not (tmp_path / "out" / "toy-1.2.3.difypkg").exists()


def test_cli_builds_both_plugins_with_their_files(tmp_path: Path) -> None:
    assert difypkg.main([str(REPO / "app" / p) for p in PLUGINS] + ["--out", str(tmp_path)]) == 0
    for plugin in PLUGINS:
        with zipfile.ZipFile(tmp_path / f"{plugin}-0.1.0.difypkg") as archive:
            names = set(archive.namelist())
        assert {
            "manifest.yaml",
            "main.py",
            "requirements.txt",
            "README.md",
            "PRIVACY.md",
            "icon.svg",
        } <= names
        assert "_assets/icon.svg" in names
        assert ".env.example" in names
        assert "kanawa/loop/runner.py" in names
        assert not any(n.startswith("kanawa/apps/") or "node_modules" in n for n in names), (
            "the applications (and a textlint install) are never bundled into a plugin"
        )


def test_requirements_pin_the_versions_the_repository_tests_with() -> None:
    """A plugin's pinned requirements are the versions in uv.lock, so the install test and the dev
    suite exercise the same SDK and client."""
    import tomllib

    locked = {p["name"]: p["version"] for p in tomllib.loads((REPO / "uv.lock").read_text())["package"]}
    for plugin in PLUGINS:
        for line in (REPO / "app" / plugin / "requirements.txt").read_text().splitlines():
            if "==" in line:
                name, version = line.split("==")
                assert locked[name.strip()] == version.strip(), f"{plugin}: {line}"


def _package_requirements(tmp_path: Path) -> dict[str, list[str]]:
    """Each plugin's ``requirements.txt`` lines as the built package holds them (what the daemon reads)."""
    found = {}
    for plugin in PLUGINS:
        with zipfile.ZipFile(difypkg.build(REPO / "app" / plugin, tmp_path)) as archive:
            text = archive.read("requirements.txt").decode("utf-8")
        found[plugin] = [
            line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
        ]
    return found


def test_package_requirements_are_pypi_packages_with_versions(tmp_path: Path) -> None:
    """The daemon runs ``uv pip install -r requirements.txt`` against PyPI (or ``PIP_MIRROR_URL``): every
    line must be a plain PyPI name with a version — no options, URLs, paths or kanawa itself (bundled) —
    and each name is locked from PyPI in uv.lock, which the install test installs from."""
    import tomllib

    from packaging.requirements import Requirement

    locked = {
        p["name"]: p.get("source", {}) for p in tomllib.loads((REPO / "uv.lock").read_text())["package"]
    }
    for plugin, lines in _package_requirements(tmp_path).items():
        assert lines, plugin
        for line in lines:
            assert not line.startswith("-"), f"{plugin}: pip options are not for the daemon: {line}"
            requirement = Requirement(line)
            assert requirement.url is None, f"{plugin}: {line} is not from an index"
            assert str(requirement.specifier), f"{plugin}: {line} has no version"
            assert requirement.name != "kanawa", "kanawa is bundled in the package, it is not on PyPI"
            assert locked[requirement.name] == {"registry": "https://pypi.org/simple"}, f"{plugin}: {line}"


def test_packages_leave_the_daemon_requirements_txt_to_install(tmp_path: Path) -> None:
    """With a ``pyproject.toml`` at its root the daemon would ``uv sync`` that instead of installing
    ``requirements.txt`` (and a ``uv.lock`` would pin its index URLs): neither may be packaged."""
    for plugin in PLUGINS:
        with zipfile.ZipFile(difypkg.build(REPO / "app" / plugin, tmp_path)) as archive:
            names = set(archive.namelist())
        assert "requirements.txt" in names
        assert not names & {"pyproject.toml", "uv.lock"}, plugin
