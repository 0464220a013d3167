"""kanawa logs through ``logging`` but never prints on its own: the application decides (a library must
not write retry warnings to the stderr of every program that uses it)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import asyncio
from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.retry import RetryingLLM, RetryPolicy
from kanawa.llm.testing import ScriptedLLM
from kanawa.types import UserMessage

model = ScriptedLLM([LLMConnectionError("502", status_code=502), "ok"])
llm = RetryingLLM(model, policy=RetryPolicy(initial_delay=0, max_delay=0))
print(asyncio.run(llm.chat([UserMessage("hi")])).message.text)
"""


def test_retry_warnings_are_not_printed_without_logging_configuration() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == "ok"
    assert proc.stderr == ""


def test_retry_warnings_reach_a_configured_handler() -> None:
    script = "import logging; logging.basicConfig(level=logging.WARNING)\n" + SCRIPT
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "retrying" in proc.stderr
