"""``kanawa run`` exporting to an OTLP collector that is down, or that never answers, still exits at once
after the run: closing the tracer waits at most ``KANAWA_TRACE_OTLP_CLOSE_TIMEOUT`` (1 s), not the
exporter's retry schedule (about 7 s) or the SDK's 30 s shutdown wait."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trace.otlp_receiver import OtlpReceiver

KANAWA = Path(sys.executable).parent / "kanawa"

pytestmark = pytest.mark.skipif(not KANAWA.exists(), reason="the kanawa console script is not installed")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _run_exporting_to(endpoint: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The export's deadline is 600 s (the SDK's variable too), so only the close bound can end the wait;
    the process must be done well inside 25 s — the SDK's shutdown alone would wait 30 s."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KANAWA_", "OTEL_"))}
    env.update(
        COLUMNS="160",
        NO_COLOR="1",
        TRACE_OTLP_ENDPOINT=endpoint,
        KANAWA_TRACE_OTLP_TIMEOUT="600",
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="600",
    )
    return subprocess.run(
        [str(KANAWA), "run", "--model", "test", "--no-tools", "hi"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=25,
        check=False,
    )


def test_run_exits_promptly_when_the_collector_port_is_closed(tmp_path: Path) -> None:
    proc = _run_exporting_to(f"http://127.0.0.1:{_closed_port()}", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Final answer" in proc.stdout


def test_run_exits_promptly_when_the_collector_never_answers(tmp_path: Path) -> None:
    with OtlpReceiver() as collector:
        collector.gate.clear()  # accepts each export, then hangs for 30 s
        proc = _run_exporting_to(collector.endpoint, tmp_path)
        assert collector.requests == 0
    assert proc.returncode == 0, proc.stderr
    assert "Final answer" in proc.stdout
