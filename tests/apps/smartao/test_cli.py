"""``kanawa smartao coach``: one coaching run from the shell, offline (demo model), with the shipped
samples; bad input gets one line and an exit code, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kanawa.apps.smartao.session import sample_text
from kanawa.cli import app


def test_coach_prints_the_report_as_json_and_the_rubric_as_text(tmp_path: Path) -> None:
    essay = tmp_path / "essay.txt"
    essay.write_text(sample_text("shoronbun.txt"), encoding="utf-8")
    policy = tmp_path / "policy.txt"
    policy.write_text(sample_text("admission_policy.txt"), encoding="utf-8")
    db = tmp_path / "evals.sqlite3"
    runner = CliRunner()
    result = runner.invoke(
        app, ["smartao", "coach", str(essay), "--policy", str(policy), "--db", str(db), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["demo"] is True
    assert report["patch"]["new_text"]
    assert len(report["rubric"]["scores"]) == 7
    text = runner.invoke(app, ["smartao", "coach", str(essay), "--db", str(db)])
    assert text.exit_code == 0, text.output
    assert "［デモ出力］" in text.output
    assert "表記・形式" in text.output


def test_coach_refuses_a_missing_or_empty_essay(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["smartao", "coach", str(tmp_path / "none.txt")])
    assert missing.exit_code == 1
    assert "cannot read" in missing.output
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    result = runner.invoke(app, ["smartao", "coach", str(empty)])
    assert result.exit_code == 1
    assert "empty" in result.output
    assert "Traceback" not in result.output
