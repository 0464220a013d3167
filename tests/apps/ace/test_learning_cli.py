"""``kanawa ace learn`` from a user's point of view: the built-in demo offline, reports written,
bad input and unusable models as one line with exit 1 or 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kanawa.apps.ace.learning import LearningReport
from kanawa.cli.app import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("KANAWA_MODEL", raising=False)


def test_demo_learns_offline_and_writes_every_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = runner.invoke(app, ["ace", "learn", "--demo", "--epochs", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "ACE learning curve" in result.stdout
    assert "0 (baseline)" in result.stdout
    assert "demo-reflector" in result.stdout  # the cost table names each role's model
    assert sorted(p.name for p in out.iterdir()) == [
        "evals",
        "learning.html",
        "learning.json",
        "learning.md",
        "playbook.txt",
    ]
    assert "kanawa eval compare" in result.stdout
    assert "improved" in result.stdout  # the held-out verdict table
    # the per-epoch held-out reports are what `kanawa eval compare` reads: a real gain, and the
    # reverse direction is a real regression (exit 1)
    before, after = str(out / "evals" / "held-out-epoch-0.json"), str(out / "evals" / "held-out-epoch-2.json")
    gained = runner.invoke(app, ["eval", "compare", before, after])
    assert gained.exit_code == 0, gained.output
    assert "improved" in gained.stdout
    assert runner.invoke(app, ["eval", "compare", after, before]).exit_code == 1
    report = LearningReport.load(out / "learning.json")
    assert [p.held_out for p in report.curve] == [0.0, 1.0, 1.0]
    assert "## Learning curve" in (out / "learning.md").read_text(encoding="utf-8")
    assert (out / "playbook.txt").read_text(encoding="utf-8") == report.final_playbook
    assert "<script" not in (out / "learning.html").read_text(encoding="utf-8")


def test_agent_option_loads_the_roles_and_store_keeps_the_playbook(tmp_path: Path) -> None:
    store = tmp_path / "playbooks"
    result = runner.invoke(
        app,
        [
            "ace", "learn", "--demo", "--epochs", "1",
            "--agent", "kanawa.apps.ace.learning.demo:models",
            "--store", str(store), "--playbook-name", "formats",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    exported = runner.invoke(app, ["ace", "export", "--dataset", "formats", "--store", str(store)])
    assert exported.exit_code == 0, exported.output
    assert "YYYY-MM-DD" in exported.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--epochs", "1"], 1, "give --dataset FILE or --demo"),
        (["--dataset", "missing.yaml"], 1, "missing.yaml"),
        (["--demo", "--agent", "kanawa.apps.ace.learning.demo:nothing"], 2, "has no nothing"),
        (["--demo", "--agent", "no_such_module_here:x"], 2, "cannot import"),
        (["--demo", "--agent", "kanawa.apps.ace.learning.demo:AMOUNT_RULE"], 2, "expected a model"),
        (["--demo", "--model", "nosuchprovider:model-x"], 2, "nosuchprovider"),
    ],
)
def test_bad_input_is_one_line_without_traceback(args: list[str], code: int, message: str) -> None:
    result = runner.invoke(app, ["ace", "learn", *args])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_out_that_is_a_file_is_exit_1(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("x", encoding="utf-8")
    result = runner.invoke(app, ["ace", "learn", "--demo", "--out", str(target)])
    assert result.exit_code == 1
    assert "not a directory" in result.output


def test_help_lists_learn_under_ace() -> None:
    result = runner.invoke(app, ["ace", "--help"])
    assert result.exit_code == 0
    assert "learn" in result.stdout
    listed = runner.invoke(app, ["ace", "learn", "--help"])
    assert "--held-out" in listed.stdout
    assert json.dumps("--demo")[1:-1] in listed.stdout


def test_a_dataset_file_with_agent_roles_learns(tmp_path: Path) -> None:
    from kanawa.apps.ace.learning.demo import demo_dataset

    path = demo_dataset().to_file(tmp_path / "formats.yaml")
    result = runner.invoke(
        app,
        [
            "ace", "learn", "--dataset", str(path), "--epochs", "1",
            "--agent", "kanawa.apps.ace.learning.demo:demo_models", "--out", str(tmp_path / "out"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = LearningReport.load(tmp_path / "out" / "learning.json")
    assert report.dataset == "ace-format-demo"
    assert len(report.held_out_cases) == 6
    assert [p.held_out for p in report.curve] == [0.0, 1.0]


def test_a_yaml_dataset_without_pyyaml_names_the_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kanawa ace learn` reads YAML datasets with PyYAML, which an install with only the ace extra
    may lack: the one-line error says which extra brings it, never a traceback."""
    import sys

    from kanawa.apps.ace.learning.demo import demo_dataset

    path = demo_dataset().to_file(tmp_path / "formats.yaml")
    monkeypatch.setitem(sys.modules, "yaml", None)  # `import yaml` now fails as when it is absent
    result = runner.invoke(app, ["ace", "learn", "--dataset", str(path), "--epochs", "1"])
    assert result.exit_code == 1, result.output
    assert "YAML datasets need PyYAML" in result.output
    assert "pip install 'kanawa[evals]'" in result.output
    assert ".json" in result.output
    assert "Traceback" not in result.output
