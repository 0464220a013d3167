"""The runnable examples the README and docs/guide.md link to keep working (the documented blocks
themselves run in tests/docs/test_doc_blocks.py)."""

from __future__ import annotations

import os
import shutil
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


def test_readme_opens_with_the_two_commands() -> None:
    head = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:8]
    assert any(line.startswith("make demo") for line in head)
    assert any(line.startswith("make test") for line in head)


def test_memory_example_recalls_notes_offline() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KANAWA_DATABASE_URL"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "memory.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "When is the deadline? -> The application deadline is 15 September.",
        "What is my essay about? -> Hanako's essay is about volunteering at a library in Kobe.",
        "session window: 4 messages",
    ]


def test_run_context_example_serves_two_customers_apart() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "run_context.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "You help aiko with their orders only. -> Your order: shipped.",
        "You help ken with their orders only. -> Your order: no order A-1 for this customer.",
        "run: Your order: packing. (2 requests)",
    ]


def test_mypy_strict_accepts_the_typed_example_and_catches_misused_deps(tmp_path: Path) -> None:
    example = (ROOT / "examples" / "run_context.py").read_text(encoding="utf-8")
    misuse = tmp_path / "misuse.py"
    misuse.write_text(
        example
        + "\n\nagent.run('q', deps='ken')\n\n\n"
        + "@tool\ndef wrong(ctx: RunContext[Deps]) -> str:\n    return ctx.deps.name\n",
        encoding="utf-8",
    )
    # `make typecheck` (before the suites in `make test`) left its cache for this Python: start from a
    # copy of it, not cold (36 s of checking kanawa again); mypy rechecks whatever the copy does not match
    cache = tmp_path / "cache"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if (ROOT / ".mypy_cache" / version).is_dir():
        shutil.copytree(ROOT / ".mypy_cache" / version, cache / version)
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache)]
    good = subprocess.run(
        [*command, str(ROOT / "examples" / "run_context.py")], capture_output=True, text=True, check=False
    )
    assert good.returncode == 0, good.stdout
    bad = subprocess.run([*command, str(misuse)], capture_output=True, text=True, check=False)
    assert bad.returncode == 1
    assert (
        'Argument "deps" to "run" of "Agent" has incompatible type "str"; expected "Deps | None"'
        in bad.stdout
    )
    assert '"Deps" has no attribute "name"' in bad.stdout
    assert bad.stdout.count("error:") == 3  # the third: returning Any from the unknown attribute


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


def test_multi_agent_example_routes_hands_off_and_waits_for_approval() -> None:
    out = _run_example("multi_agent.py")
    assert "Draft hands off to Eval" in out
    assert "route: ('Draft', 'Style')" in out
    assert "Draft: 深掘り案" in out
    assert "評価: 7/10" in out
    assert "mailer: approval_required ['send_to_teacher']" in out
    assert "mailer: Done: sent essay 42" in out


def test_ace_learning_example_learns_offline_and_writes_its_reports(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "ace_learning.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "epoch 1 learned from amount-train-1: equals_expected: expected '¥1,350', got '1350 yen'"
        in proc.stdout
    )
    assert "held-out: 0.00 -> 1.00" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["learning.html", "learning.json", "learning.md"]
