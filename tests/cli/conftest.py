"""CLI test helpers: a CliRunner with a wide terminal, run inside a temporary working directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cwd with tracing at its defaults (``./.kanawa/traces``) and no provider keys."""
    monkeypatch.chdir(tmp_path)
    for name in ("KANAWA_TRACE", "KANAWA_TRACE_DIR", "KANAWA_TRACE_REDACT", "KANAWA_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def traces(root: Path) -> list[Path]:
    return sorted((root / ".kanawa" / "traces").glob("*.jsonl"))
