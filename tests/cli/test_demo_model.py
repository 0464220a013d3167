"""The demo model drives the real loop: parallel tool calls first, a sandbox refusal, then a report
built from the tool results it actually received."""

from __future__ import annotations

import json
from pathlib import Path

from kanawa.agents.agent import Agent
from kanawa.cli.demo import demo_tools, prepare_files
from kanawa.cli.demo_model import EXPRESSION, QUESTION, DemoReport, demo_model
from kanawa.loop.steps import ToolCallStep, ToolResultStep


async def test_demo_model_asks_for_three_tools_in_parallel_then_reports_their_results(tmp_path: Path) -> None:
    sandbox = prepare_files(tmp_path / "files")
    model = demo_model()
    agent = Agent("demo", "x", demo_tools(sandbox), model, DemoReport)
    result = await agent.run(QUESTION)

    first = model.requests[0]
    assert {t.name for t in first.tools} == {"calculator", "current_time", "read_file"}
    calls = [s.call for s in result.steps if isinstance(s, ToolCallStep)]
    assert [c.name for c in calls[:3]] == ["calculator", "current_time", "read_file"]
    assert json.loads(calls[0].arguments) == {"expression": EXPRESSION}
    assert {s.step for s in result.steps if isinstance(s, ToolCallStep)} == {1, 2}

    results = [s.result for s in result.steps if isinstance(s, ToolResultStep)]
    assert [r.is_error for r in results] == [False, False, False, True]  # the sandbox refused the last one

    report = result.output
    assert isinstance(report, DemoReport)
    assert "403" in report.summary
    assert [f.tool for f in report.tool_results] == ["calculator", "current_time", "read_file", "read_file"]
    assert report.tool_results[0].value == "403.0"
    assert report.tool_results[3].ok is False
    assert 0.0 <= report.confidence <= 1.0
    assert model.requests[-1].response_schema is not None  # the report came from the final-output phase
    assert model.requests[-1].tools == ()


async def test_demo_model_without_tools_just_answers(tmp_path: Path) -> None:
    agent: Agent[str] = Agent("demo", "x", [], demo_model())
    result = await agent.run(QUESTION)
    assert result.output is not None
    assert result.output.startswith("Here is what I found.")


def test_prepare_files_creates_the_notes_file(tmp_path: Path) -> None:
    sandbox = prepare_files(tmp_path / "a" / "b")
    assert sandbox.read_text("notes.txt").startswith("kanawa demo notes")
