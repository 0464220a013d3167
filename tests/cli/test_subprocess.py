"""The installed ``kanawa`` console script, run as a real process in a temporary directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KANAWA = Path(sys.executable).parent / "kanawa"

pytestmark = pytest.mark.skipif(not KANAWA.exists(), reason="the kanawa console script is not installed")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("KANAWA_")}
    env.update(COLUMNS="160", NO_COLOR="1", **extra)
    return env


def _kanawa(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KANAWA), *args],
        cwd=cwd,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_kanawa_demo_process_exits_0_writes_a_trace_and_prints_the_answer(tmp_path: Path) -> None:
    proc = _kanawa(tmp_path, "demo")
    assert proc.returncode == 0, proc.stderr
    assert "test:test" in proc.stdout  # driven by the built-in TestLLM
    assert 'calculator(expression="(17 * 23) + sqrt(144)")' in proc.stdout
    assert 'current_time(timezone="Asia/Tokyo")' in proc.stdout
    assert 'read_file(path="notes.txt")' in proc.stdout
    assert "✓ calculator" in proc.stdout
    assert "403" in proc.stdout
    assert "Final answer · DemoReport" in proc.stdout
    traces = list((tmp_path / ".kanawa" / "traces").glob("*.jsonl"))
    assert len(traces) == 1
    assert f"trace: {traces[0].relative_to(tmp_path)}" in proc.stdout
    lines = [json.loads(line) for line in traces[0].read_text(encoding="utf-8").splitlines()]
    assert lines[-1]["event"] == "agent_end"
    assert lines[-1]["data"]["termination_reason"] == "completed"

    shown = _kanawa(tmp_path, "trace", "show", str(traces[0]))
    assert shown.returncode == 0, shown.stderr
    assert "Trace timeline" in shown.stdout
    assert "calculator" in shown.stdout
    assert "3 model calls · 3 tool calls" in shown.stdout


def test_kanawa_run_openai_without_a_key_exits_2_with_one_line(tmp_path: Path) -> None:
    proc = _kanawa(tmp_path, "run", "--model", "openai:gpt-5", "hi")
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "OPENAI_API_KEY" in lines[0]
    assert "Traceback" not in proc.stderr


def test_kanawa_run_test_model_works(tmp_path: Path) -> None:
    proc = _kanawa(tmp_path, "run", "--model", "test", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "Final answer" in proc.stdout


def test_import_kanawa_does_not_load_typer_or_rich() -> None:
    code = (
        "import sys, kanawa, kanawa.trace; kanawa.Agent; kanawa.trace.JsonlTraceSink; "
        "print(sorted(m for m in ('typer', 'rich', 'click') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == "[]"
