"""The runnable examples the README links to keep working (they are the five-minute tour)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quickstart_runs_offline_and_prints_the_structured_answer() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        '→ add({"a": 2, "b": 3})',
        "← add: 5",
        '→ multiply({"a": 4, "b": 5})',
        "← multiply: 20",
    ]
    assert "answer: value=25" in proc.stdout
    assert "3 requests, 7 messages, completed" in proc.stdout


def test_import_kanawa_loads_no_provider_sdk_and_no_pydantic() -> None:
    code = (
        "import sys, kanawa; "
        "heavy = [m for m in ('openai', 'anthropic', 'google.genai', 'pydantic', 'typer', 'rich') "
        "if m in sys.modules]; print(heavy)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_readme_code_blocks_are_valid_python() -> None:
    import ast
    import re

    for name in ("README.md", "README.ja.md", "docs/providers.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
        assert blocks, name
        for block in blocks:
            compile(block, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def test_readme_opens_with_the_two_commands() -> None:
    head = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:8]
    assert any(line.startswith("make demo") for line in head)
    assert any(line.startswith("make test") for line in head)


def _run_example(name: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_mcp_example_uses_the_time_server_over_stdio() -> None:
    out = _run_example("mcp_tools.py").splitlines()
    assert out[0] == "tools: get_current_time, convert_time"
    assert '"datetime": "' in out[1]
    assert "T21:00:00+09:00" in out[1]
    assert out[2] == "answer: Noon UTC is 21:00 in Tokyo."


def test_otel_example_prints_the_span_tree() -> None:
    assert _run_example("otel_export.py").splitlines() == [
        "invoke_agent coordinator",
        "  chat big-model",
        "  execute_tool ask_expert",
        "    invoke_agent expert",
        "      chat small-model",
        "  chat big-model",
    ]
