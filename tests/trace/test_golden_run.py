"""Seed 002 §8: trace completeness against a golden JSONL file — this one written by a *real* run (an
``Agent`` with tools and a scripted model through the JSONL sink), not by hand-made events.

Only what changes from run to run or machine to machine is normalised: timestamps, durations, run and
session ids, and token counts (checked separately to be positive integers).
To regenerate after an intended change: ``KANAWA_REGENERATE_GOLDEN=1 pytest tests/trace/test_golden_run.py``
and review the diff of ``tests/trace/golden/scripted_run.jsonl``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kanawa import Agent, tool
from kanawa.llm.testing import ScriptedLLM
from kanawa.trace.config import TraceSettings, jsonl_path, tracer_from_env
from kanawa.types import AssistantMessage, ToolCall

GOLDEN = Path(__file__).parent / "golden" / "scripted_run.jsonl"
VOLATILE = {
    "time": "<time>",
    "duration_ms": "<ms>",
    "run_id": "<run>",
    "session": "<session>",
    # counted offline: exact with a cached tiktoken encoding, estimated without one (machine-dependent)
    "tok_prompt": "<tokens>",
    "tok_completion": "<tokens>",
}


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


@tool
def fail(reason: str) -> str:
    """A tool that raises.

    Args:
        reason: why
    """
    raise RuntimeError(reason)


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: VOLATILE.get(k, _normalise(v)) if k in VOLATILE else _normalise(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    return value


async def test_a_scripted_run_writes_the_golden_trace(tmp_path: Path) -> None:
    tracer = tracer_from_env(session="golden", settings=TraceSettings(directory=tmp_path))
    calls = (ToolCall("c1", "add", '{"a": 2, "b": 3}'), ToolCall("c2", "fail", '{"reason": "boom"}'))
    model = ScriptedLLM([AssistantMessage(tool_calls=calls), "2 + 3 = 5"], model="gpt-5")
    agent = Agent("DraftAgent", "Add.", tools=[add, fail], model=model, tracer=tracer)
    result = await agent.arun("What is 2 + 3?")
    await tracer.aclose()
    assert result.output == "2 + 3 = 5"
    path = jsonl_path(tracer)
    assert path is not None
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    counts = [line[k] for line in raw for k in ("tok_prompt", "tok_completion") if k in line]
    assert counts
    assert all(isinstance(n, int) and n > 0 for n in counts)
    lines = [_normalise(line) for line in raw]
    rendered = "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines)
    if os.environ.get("KANAWA_REGENERATE_GOLDEN"):
        GOLDEN.write_text(rendered, encoding="utf-8")
    assert rendered == GOLDEN.read_text(encoding="utf-8")
    assert lines[0]["event"] == "agent_start"
    assert lines[-1]["event"] == "agent_end"
