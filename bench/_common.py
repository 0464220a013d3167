"""Shared helpers for the benchmark scripts: statistics, result files, subprocess orchestration."""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary_ms(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "median_ms": round(statistics.median(ms), 4),
        "p90_ms": round(percentile(ms, 90), 4),
        "p99_ms": round(percentile(ms, 99), 4),
        "n": len(ms),
    }


def run_child(script: Path, *args: str, timeout: float = 900) -> dict[str, Any]:
    """Run ``script`` in a fresh interpreter and parse the JSON object it prints last."""
    proc = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{script.name} {' '.join(args)} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def machine() -> dict[str, str]:
    return {"python": platform.python_version(), "machine": platform.machine(), "system": platform.system()}


def write_results(name: str, data: dict[str, Any], table: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    (RESULTS / f"{name}.md").write_text(table)
    print(table)
