"""The ``kanawa ace import`` / ``search`` lines of the ACE pages (English and Japanese; the READMEs link
to them) run as written, from the repository root, with the sample playbook they name
(``examples/ace/playbook.txt``)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kanawa.apps.ace.playbook import Playbook

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "docs" / "ace.md", ROOT / "docs" / "ace.ja.md"]
SAMPLE = ROOT / "examples" / "ace" / "playbook.txt"
KANAWA = Path(sys.executable).parent / "kanawa"


def _documented(prefix: str) -> list[str]:
    """Every line of a fenced block in the docs that starts with ``prefix``, as written."""
    lines = []
    for doc in DOCS:
        for block in re.findall(r"^```[^\n]*\n(.*?)^```", doc.read_text(encoding="utf-8"), re.M | re.S):
            lines += [line for line in block.splitlines() if line.startswith(prefix)]
    return lines


def test_the_sample_is_a_valid_playbook_in_the_ace_text_format() -> None:
    text = SAMPLE.read_text(encoding="utf-8")
    playbook = Playbook.from_text(text)
    assert len(playbook) == 11
    assert playbook.to_text() == text  # the canonical form: export gives it back unchanged


@pytest.mark.skipif(not KANAWA.exists(), reason="the kanawa console script is not installed")
def test_the_documented_import_and_search_commands_run_as_written(tmp_path: Path) -> None:
    imports, searches = _documented("kanawa ace import "), _documented("kanawa ace search ")
    assert len(imports) == len(DOCS)  # each document shows the import
    assert searches
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(COLUMNS="240", NO_COLOR="1", KANAWA_ACE_STORE=str(tmp_path / "playbooks"))
    for command in dict.fromkeys([*imports, *searches]):  # each distinct line once, imports first
        argv = shlex.split(command, comments=True)
        proc = subprocess.run(
            [str(KANAWA), *argv[1:]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
        if argv[2] == "import":
            assert "imported 11 bullets in 4 sections into appworld" in proc.stdout
        else:
            assert "api-00005" in proc.stdout  # the bullet about API rate limits (レート制限)


def _documented_yaml() -> list[str]:
    blocks = []
    for doc in DOCS:
        blocks += re.findall(r"^```yaml\n(.*?)^```", doc.read_text(encoding="utf-8"), re.M | re.S)
    return blocks


def test_the_documented_dataset_file_loads_and_teaches_the_demo_roles(tmp_path: Path) -> None:
    """The ``invoices.yaml`` of "ACE learns from an eval" is a valid dataset whose split and scorer
    work: with the demo's scripted roles its held-out case passes only after learning."""
    from kanawa.apps.ace.learning import learn
    from kanawa.apps.ace.learning.demo import demo_models

    blocks = _documented_yaml()
    assert len(blocks) == len(DOCS)
    assert blocks[0] == blocks[1]  # the Japanese page shows the same file
    path = tmp_path / "invoices.yaml"
    path.write_text(blocks[0], encoding="utf-8")
    from kanawa.evals import Dataset

    generator, reflector, curator = demo_models()
    report = learn(
        Dataset.from_file(path),
        generator_model=generator,
        reflector_model=reflector,
        curator_model=curator,
        epochs=1,
    )
    assert [p.held_out for p in report.curve] == [0.0, 1.0]


@pytest.mark.skipif(not KANAWA.exists(), reason="the kanawa console script is not installed")
def test_the_documented_offline_learn_commands_run_as_written(tmp_path: Path) -> None:
    lines = [line for line in _documented("kanawa ace learn ") if "--demo" in line]
    assert len(lines) >= len(DOCS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(COLUMNS="200", NO_COLOR="1")
    for command in dict.fromkeys(lines):
        argv = shlex.split(command, comments=True)
        proc = subprocess.run(
            [str(KANAWA), *argv[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
        assert "ACE learning curve" in proc.stdout
    assert (tmp_path / "learn-report" / "learning.html").is_file()
