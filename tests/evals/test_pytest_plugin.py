"""The pytest plugin as a user meets it: a ``*.eval.yaml`` beside their tests becomes one test per
case (run by pytest in a fresh process, the plugin loaded by its entry point), and the
``kanawa_eval`` fixture runs a whole dataset."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

AGENTS = """
from kanawa import Agent, FunctionLLM


def answer(request):
    question = request.messages[-1].parts[0].text
    return {"Japan": "Tokyo", "France": "Paris"}.get(question.split()[-1].rstrip("?"), "Lyon")


geo = Agent("geo", "Capitals.", model=FunctionLLM(answer))
"""

DATASET = """
name: capitals
target: user_agents:geo
scorers:
  - type: equals_expected
cases:
  - name: japan
    inputs: Capital of Japan?
    expected_output: Tokyo
  - name: france
    inputs: Capital of France?
    expected_output: Paris
  - name: peru
    inputs: Capital of Peru?
    expected_output: Lima
"""

WHOLE = """
def test_the_whole_dataset(kanawa_eval):
    report = kanawa_eval("capitals.eval.yaml", repeat=2)
    assert len(report.results) == 6
    assert report.pass_rate == 4 / 6
"""


def _pytest(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(folder)}
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "kanawa_evals", "-p", "no:cacheprovider", "-rA"]
    return subprocess.run(
        [*command, *options], cwd=folder, env=env, capture_output=True, text=True, timeout=180, check=False
    )


def test_a_dataset_file_becomes_one_test_per_case(tmp_path: Path) -> None:
    (tmp_path / "user_agents.py").write_text(AGENTS, encoding="utf-8")
    (tmp_path / "capitals.eval.yaml").write_text(DATASET, encoding="utf-8")
    (tmp_path / "test_whole.py").write_text(WHOLE, encoding="utf-8")
    run = _pytest(tmp_path)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert "PASSED capitals.eval.yaml::japan" in out
    assert "PASSED capitals.eval.yaml::france" in out
    assert "FAILED capitals.eval.yaml::peru" in out
    assert "PASSED test_whole.py::test_the_whole_dataset" in out
    assert "equals_expected: expected 'Lima', got 'Lyon'" in out
    assert "Traceback" not in out
    assert "1 failed, 3 passed" in out


def test_a_file_without_a_target_is_a_collection_error(tmp_path: Path) -> None:
    (tmp_path / "x.eval.json").write_text('{"name": "x", "cases": [{"name": "a", "inputs": "q"}]}')
    run = _pytest(tmp_path)
    assert run.returncode != 0
    assert "x.eval.json: an eval file needs target: module:attribute" in run.stdout
