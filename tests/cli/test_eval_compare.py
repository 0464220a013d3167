"""``kanawa eval compare``: verdicts, output formats, and an exit code that fails CI only on a real
regression (not on noise, not on an improvement)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kanawa.cli.app import app
from kanawa.evals.report import CaseResult, EvalReport
from kanawa.evals.scoring import Assertion, Score


def _report(path: Path, name: str, passes: list[list[bool]], quality: float = 0.5) -> Path:
    report = EvalReport(name=name, target="myapp:agent", repeat=len(passes[0]))
    for i, repeats in enumerate(passes):
        for r, passed in enumerate(repeats):
            report.results.append(
                CaseResult(
                    case=f"case-{i}",
                    repeat=r,
                    output="x",
                    text="x",
                    outcomes=[Assertion("correct", passed, "r"), Score("quality", quality, "q")],
                )
            )
    return report.save(path)


GOOD = [[True, True]] * 20
BAD = [[False, True]] * 16 + [[False, False]] * 4
NOISY = [[False, True]] + [[True, True]] * 19  # one repeat of one case fails


@pytest.fixture
def reports(tmp_path: Path) -> dict[str, Path]:
    return {
        "good": _report(tmp_path / "good.json", "v1", GOOD),
        "bad": _report(tmp_path / "bad.json", "v2", BAD),
        "noisy": _report(tmp_path / "noisy.json", "v3", NOISY),
    }


def test_a_real_regression_exits_1_and_says_worse(runner: CliRunner, reports: dict[str, Path]) -> None:
    result = runner.invoke(app, ["eval", "compare", str(reports["good"]), str(reports["bad"])])
    assert result.exit_code == 1, result.output
    assert "worse" in result.output
    assert "regression" in result.output


def test_noise_exits_0(runner: CliRunner, reports: dict[str, Path]) -> None:
    result = runner.invoke(app, ["eval", "compare", str(reports["good"]), str(reports["noisy"])])
    assert result.exit_code == 0, result.output
    assert "no-real-change" in result.output


def test_an_improvement_exits_0(runner: CliRunner, reports: dict[str, Path]) -> None:
    result = runner.invoke(app, ["eval", "compare", str(reports["bad"]), str(reports["good"])])
    assert result.exit_code == 0, result.output
    assert "improved" in result.output


def test_json_output_and_file(runner: CliRunner, reports: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    args = ["eval", "compare", str(reports["good"]), str(reports["bad"]), "--format", "json", "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert json.loads(out.read_text()) == data
    verdicts = {s["scorer"]: s["verdict"] for s in data["scorers"]}
    assert verdicts == {"correct": "worse", "quality": "no-real-change"}
    assert data["regressed"] is True


def test_markdown_output(runner: CliRunner, reports: dict[str, Path]) -> None:
    result = runner.invoke(
        app, ["eval", "compare", str(reports["good"]), str(reports["bad"]), "--format", "markdown"]
    )
    assert result.exit_code == 1
    assert "| correct | 20 |" in result.stdout
    assert "**Overall: regression.**" in result.stdout


def test_min_effect_and_lower_is_better_options(runner: CliRunner, reports: dict[str, Path]) -> None:
    tolerant = ["--min-effect", "0.9"]
    result = runner.invoke(app, ["eval", "compare", str(reports["good"]), str(reports["bad"]), *tolerant])
    assert result.exit_code == 0, result.output
    flipped = ["--lower-is-better", "correct"]
    result = runner.invoke(app, ["eval", "compare", str(reports["good"]), str(reports["bad"]), *flipped])
    assert result.exit_code == 0, result.output
    assert "improved" in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read"), ("{not json", "report"), ('{"name": "x"}', "not a kanawa eval report")],
)
def test_unreadable_reports_exit_2_with_one_line(
    runner: CliRunner, reports: dict[str, Path], tmp_path: Path, content: str | None, message: str
) -> None:
    broken = tmp_path / "broken.json"
    if content is not None:
        broken.write_text(content)
    result = runner.invoke(app, ["eval", "compare", str(reports["good"]), str(broken)])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_bad_alpha_exits_2(runner: CliRunner, reports: dict[str, Path]) -> None:
    result = runner.invoke(
        app, ["eval", "compare", str(reports["good"]), str(reports["bad"]), "--alpha", "2"]
    )
    assert result.exit_code == 2
    assert "alpha" in result.output


def test_the_installed_command_gates_a_ci_step(reports: dict[str, Path]) -> None:
    """As CI runs it: a real process whose exit status is the gate."""
    kanawa = Path(sys.executable).parent / "kanawa"
    if not kanawa.exists():
        pytest.skip("the kanawa console script is not installed")
    ok = subprocess.run(
        [str(kanawa), "eval", "compare", str(reports["good"]), str(reports["noisy"]), "-f", "markdown"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(
        [str(kanawa), "eval", "compare", str(reports["good"]), str(reports["bad"]), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["regressed"] is True
