"""``kanawa eval run``: a dataset file against an agent, reports in every format, exit codes for CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kanawa.cli.app import app
from kanawa.evals import EvalReport

DATASET = """\
name: sums
target: tests.evals.agents:calculator
scorers:
  - type: equals_expected
  - type: tool_calls
    expected:
      - name: add
        args: {a: {gte: 0}}
cases:
  - name: one
    inputs: What is 1+2?
    expected_output: The answer is 3.
  - name: two
    inputs: What is 2+3? (wrong)
    expected_output: The answer is 5.
"""


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "sums.yaml"
    path.write_text(DATASET, encoding="utf-8")
    return path


def test_run_writes_every_report_and_exits_0(runner: CliRunner, dataset: Path, tmp_path: Path) -> None:
    out, md, page = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.html"
    args = ["eval", "run", str(dataset), "--agent", "tests.evals.agents:calculator", "--repeat", "2"]
    result = runner.invoke(app, [*args, "-o", str(out), "--markdown", str(md), "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert "equals_expected" in result.stdout
    assert "50%" in result.stdout
    report = EvalReport.load(out)
    assert report.per_case_scores()["equals_expected"] == {"one": [1.0, 1.0], "two": [0.0, 0.0]}
    assert "| equals_expected | assertion | 4 | 50% |" in md.read_text()
    assert 'id="case-two-1"' in page.read_text()


def test_the_dataset_target_is_the_default_agent_and_fail_under_gates(
    runner: CliRunner, dataset: Path
) -> None:
    result = runner.invoke(app, ["eval", "run", str(dataset), "--fail-under", "0.9", "--no-cases"])
    assert result.exit_code == 1, result.output
    assert "pass rate 50.0% is below 90.0%" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "tests.evals.nowhere:agent"], "cannot import 'tests.evals.nowhere'"),
        (["--agent", "tests.evals.agents"], "is not 'module:attribute'"),
        (["--agent", "tests.evals.agents:nobody"], "has no attribute 'nobody'"),
        (["--served", "http://127.0.0.1:9"], "--served needs --served-agent"),
        (["--cassette", "/nonexistent/c.yaml"], "no cassette at /nonexistent/c.yaml"),
    ],
)
def test_unusable_options_exit_2_with_one_line(
    runner: CliRunner, dataset: Path, args: list[str], message: str
) -> None:
    result = runner.invoke(app, ["eval", "run", str(dataset), *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_a_bad_dataset_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "cases": [{"name": "a"}]}))
    result = runner.invoke(app, ["eval", "run", str(bad), "--agent", "tests.evals.agents:calculator"])
    assert result.exit_code == 2
    assert "cases.0.inputs: Field required" in result.stderr
