"""``kanawa demo``'s default: the built-in TestLLM, unchanged, drives the demo agent — the tools' schema
examples become real calls, and the structured answer summarises what the tools returned."""

from __future__ import annotations

import json
from pathlib import Path

from kanawa.agents.agent import Agent
from kanawa.cli.demo import DEMO_MODEL, INSTRUCTIONS, demo_tools, prepare_files
from kanawa.cli.demo_model import QUESTION, DemoReport
from kanawa.llm.models import resolve_model
from kanawa.llm.testing import TestLLM
from kanawa.loop.events import ToolCallStep, ToolResultStep


async def test_default_demo_model_is_test_llm_calling_each_tool_with_its_example(tmp_path: Path) -> None:
    model = resolve_model(DEMO_MODEL)
    assert isinstance(model, TestLLM)
    agent = Agent(
        "demo",
        INSTRUCTIONS,
        tools=demo_tools(prepare_files(tmp_path / "files")),
        model=model,
        output_type=DemoReport,
    )
    result = await agent.arun(QUESTION)

    calls = [s.call for s in result.steps if isinstance(s, ToolCallStep)]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("calculator", {"expression": "(17 * 23) + sqrt(144)"}),
        ("current_time", {"timezone": "Asia/Tokyo"}),
        ("read_file", {"path": "notes.txt"}),
    ]
    assert {s.step for s in result.steps if isinstance(s, ToolCallStep)} == {1}  # all in parallel
    results = [s.result for s in result.steps if isinstance(s, ToolResultStep)]
    assert [r.is_error for r in results] == [False, False, False]

    report = result.output
    assert isinstance(report, DemoReport)
    assert report.summary.startswith("Done. Tool results: calculator → 403.0; current_time → ")
    assert "+09:00; read_file → kanawa demo notes - Tools run in parallel" in report.summary
    assert 0.0 <= report.confidence <= 1.0
