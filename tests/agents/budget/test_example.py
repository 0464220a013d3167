"""The budgets example (examples/budgets.py, linked from docs/guide.md) runs offline, in memory and on
Redis, and prints what it promises."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.agents.budget.conftest import delete_keys

ROOT = Path(__file__).resolve().parents[3]
EXPECTED = [
    "[warn] the session has used 50% of its money budget ($0.010000 of $0.020000)",
    "[warn] the session has reached its money budget ($0.020000 of $0.020000); "
    "further model requests will be blocked",
    "session u-42: 2 requests, 9,000 tokens, $0.0200",
    "stopped before the model call: the session's money budget is spent ($0.020000 of $0.020000)",
    "session u-7 is separate: They hold by shape alone. (cost $0.0200)",
]


def _run_example(env: dict[str, str]) -> list[str]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "budgets.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_budgets_example_in_memory() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KANAWA_REDIS_URL"}
    assert _run_example(env) == EXPECTED


@pytest.fixture
async def example_redis_url(redis_url: str) -> AsyncIterator[str]:
    """The example's keys are fixed (``kanawa:budget:u-42``): a database other than the shared 0,
    emptied of them before and after."""
    url = f"{redis_url.rsplit('/', 1)[0]}/{random.randint(8, 15)}"
    await delete_keys(url, "kanawa:budget:u-")
    yield url
    await delete_keys(url, "kanawa:budget:u-")


def test_budgets_example_on_redis(example_redis_url: str) -> None:
    assert _run_example({**os.environ, "KANAWA_REDIS_URL": example_redis_url}) == EXPECTED
