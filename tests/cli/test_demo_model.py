"""The scripted demo model (``kanawa demo --model scripted``) drives the real loop: parallel tool calls
first, a sandbox refusal, then a report built from the tool results it actually received."""

from __future__ import annotations

import json
from pathlib import Path

from kanawa.agents.agent import Agent
from kanawa.cli.demo import demo_tools, prepare_files
from kanawa.cli.demo_model import EXPRESSION, QUESTION, DemoReport, scripted_model
from kanawa.loop.events import ToolCallStep, ToolResultStep


async def test_scripted_model_asks_for_three_tools_in_parallel_then_reports_their_results(
    tmp_path: Path,
) -> None:
    sandbox = prepare_files(tmp_path / "files")
    model = scripted_model()
    agent = Agent("demo", "x", tools=demo_tools(sandbox), model=model, output_type=DemoReport)
    result = await agent.arun(QUESTION)

    first = model.requests[0]
    assert {t.name for t in first.tools} == {"calculator", "current_time", "read_file"}
    calls = [s.call for s in result.steps if isinstance(s, ToolCallStep)]
    assert [c.name for c in calls[:3]] == ["calculator", "current_time", "read_file"]
    assert json.loads(calls[0].arguments) == {"expression": EXPRESSION}
    assert json.loads(calls[3].arguments) == {"path": "../secrets.env"}
    assert {s.step for s in result.steps if isinstance(s, ToolCallStep)} == {1, 2}

    results = [s.result for s in result.steps if isinstance(s, ToolResultStep)]
    assert [r.is_error for r in results] == [False, False, False, True]  # the sandbox refused the last one

    report = result.output
    assert isinstance(report, DemoReport)
    assert report.summary.startswith("(17 × 23) + √144 = 403.0; in Tokyo it is ")
    assert report.summary.endswith("1 call was refused by the sandbox or the tool.")
    assert report.confidence == 1.0
    assert model.requests[-1].response_schema is not None  # the report came from the final-output phase
    assert model.requests[-1].tools == ()


async def test_scripted_model_without_tools_just_answers() -> None:
    agent: Agent[str] = Agent("demo", "x", tools=[], model=scripted_model())
    result = await agent.arun(QUESTION)
    assert result.output is not None
    assert result.output.startswith("Here is what I found.")


def test_prepare_files_creates_the_notes_file(tmp_path: Path) -> None:
    sandbox = prepare_files(tmp_path / "a" / "b")
    assert sandbox.read_text("notes.txt").startswith("kanawa demo notes")
