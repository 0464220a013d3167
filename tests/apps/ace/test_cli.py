"""``kanawa ace import|search|generate|adapt|export|demo`` from a user's point of view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kanawa.cli.app import app
from tests.apps.ace.search_fixture import PLAYBOOK_PATH

runner = CliRunner()


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "240")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    location = tmp_path / "playbooks"
    monkeypatch.setenv("KANAWA_ACE_STORE", str(location))
    monkeypatch.delenv("KANAWA_DATABASE_URL", raising=False)
    return location


def test_import_search_export_round_trip_with_bm25_only(store: Path) -> None:
    imported = runner.invoke(
        app, ["ace", "import", str(PLAYBOOK_PATH), "--dataset", "appworld", "--no-dense"]
    )
    assert imported.exit_code == 0, imported.output
    assert "imported 45 bullets in 9 sections into appworld" in imported.output

    found = runner.invoke(
        app, ["ace", "search", "APIのレート制限", "--dataset", "appworld", "--no-dense", "-k", "3"]
    )
    assert found.exit_code == 0, found.output
    assert "aup-00036" in found.output
    assert "lexical" in found.output  # why it matched: the lexical score and the terms it found
    assert "レート" in found.output

    exported = runner.invoke(app, ["ace", "export", "--dataset", "appworld"])
    assert exported.exit_code == 0
    assert exported.stdout == PLAYBOOK_PATH.read_text(encoding="utf-8")


def test_import_embeds_once_then_reuses_the_cache(store: Path, tmp_path: Path) -> None:
    small = tmp_path / "small.txt"
    small.write_text(
        "## S\n[shr-00001] 支払いの前に金額を確認する。\n[shr-00002] Page until empty.\n", encoding="utf-8"
    )
    first = runner.invoke(app, ["ace", "import", str(small), "--dataset", "tiny"])
    assert first.exit_code == 0, first.output
    assert "embedded 2 new bullets (0 from cache)" in first.output
    again = runner.invoke(app, ["ace", "import", str(small), "--dataset", "tiny"])
    assert "embedded 0 new bullets (2 from cache)" in again.output


def test_import_of_a_malformed_playbook_is_one_line_and_exit_1(store: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("## S\n[shr-1] oops\n", encoding="utf-8")
    result = runner.invoke(app, ["ace", "import", str(bad), "--dataset", "x", "--no-dense"])
    assert result.exit_code == 1
    assert "line 2: 'shr-1' is not a bullet id" in result.output
    assert "Traceback" not in result.output


def test_generate_prints_the_trajectory_json(store: Path) -> None:
    runner.invoke(app, ["ace", "import", str(PLAYBOOK_PATH), "--dataset", "appworld", "--no-dense"])
    result = runner.invoke(
        app, ["ace", "generate", "APIのレート制限", "--dataset", "appworld", "--model", "test", "--no-dense"]
    )
    assert result.exit_code == 0, result.output
    trajectory = json.loads(result.stdout)
    assert trajectory["status"] == "success"
    assert trajectory["dataset"] == "appworld"
    assert trajectory["reasoning_steps"][0] == "Loaded the 'appworld' playbook (45 bullets)"


def test_generate_with_an_unusable_model_is_exit_2_without_traceback(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = runner.invoke(app, ["ace", "generate", "t", "--dataset", "x", "--model", "nope:model"])
    assert result.exit_code == 2
    assert "cannot use model 'nope:model'" in result.output
    assert "Traceback" not in result.output


def test_adapt_runs_the_loop_over_jsonl(store: Path, tmp_path: Path) -> None:
    train = tmp_path / "train.jsonl"
    train.write_text('{"question": "What is 2+2?", "answer": "4"}\n', encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "ace",
            "adapt",
            str(train),
            "--dataset",
            "finance",
            "--epochs",
            "2",
            "--model",
            "test",
            "--no-dense",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "offline adaptation of finance" in result.output
    assert "adapting" in result.output
    assert "2/2" in result.output


def test_demo_runs_offline_and_the_playbook_learns(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ace", "demo", "--store", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    assert "3/6 (50%)" in result.output
    assert "6/6 (100%)" in result.output
    assert "playbook: 2 → 5 bullets" in result.output
    assert "helpful=3 harmful=0 :: Distance conversion" in result.output


def test_search_of_an_unknown_dataset_is_one_line_and_exit_2(store: Path) -> None:
    empty = runner.invoke(app, ["ace", "search", "レート制限", "--dataset", "nope", "--no-dense"])
    assert empty.exit_code == 2
    assert empty.stdout == ""
    assert empty.stderr.strip() == (
        "kanawa: no playbook named 'nope' (the store holds no playbooks yet); "
        "import one with: kanawa ace import FILE --dataset nope"
    )
    runner.invoke(app, ["ace", "import", str(PLAYBOOK_PATH), "--dataset", "appworld", "--no-dense"])
    result = runner.invoke(app, ["ace", "search", "レート制限", "--dataset", "nope", "--no-dense"])
    assert result.exit_code == 2
    assert "no playbook named 'nope' (the store holds appworld)" in result.stderr
    assert "Traceback" not in result.output


def test_export_of_an_unknown_dataset_is_exit_2_and_prints_no_playbook(store: Path) -> None:
    result = runner.invoke(app, ["ace", "export", "--dataset", "nope"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "no playbook named 'nope'" in result.stderr
