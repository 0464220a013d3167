"""Recorded traces become cases: a production failure turned into a regression case."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanawa.evals import Case, Dataset
from kanawa.evals.runner import Eval
from kanawa.evals.sources import MissingInputsError, parse_sse_chunks
from tests.evals.agents import make_calculator


async def test_traces_become_cases_and_failures_can_be_picked(tmp_path: Path) -> None:
    data = Dataset(
        name="mixed", cases=[Case(name="ok", inputs="What is 1+2?"), Case(name="bad", inputs="slow 1+2")]
    )
    report = await Eval(data, make_calculator(), timeout=0.3, trace_dir=tmp_path).arun()
    paths = [r.trace_path for r in report.results if r.trace_path]
    assert len(paths) == 2
    ok, bad = report.results
    inputs = {ok.run_id: "What is 1+2?", bad.run_id: "slow 1+2"}
    everything = Dataset.from_traces(paths, inputs=inputs, pin_trajectory=True)
    assert [c.metadata["run_id"] for c in everything.cases] == [ok.run_id, bad.run_id]
    assert everything.cases[0].metadata["tools"] == ["add"]
    assert everything.cases[0].metadata["termination_reason"] == "completed"
    pinned = everything.cases[0].scorers[0]
    assert pinned.model_dump() == {"type": "tool_calls", "expected": ["add"], "mode": "exact"}  # type: ignore[union-attr]
    # the timed-out run never wrote agent_end: it is unfinished, hence a failure to keep
    failures = Dataset.from_traces(paths, inputs=inputs, failed_only=True)
    assert [c.metadata["run_id"] for c in failures.cases] == [bad.run_id]
    saved = failures.to_file(tmp_path / "regressions.yaml")
    assert Dataset.from_file(saved).cases[0].inputs == "slow 1+2"
    with pytest.raises(MissingInputsError, match="traces do not keep prompts"):
        Dataset.from_traces(paths)
    assert len(Dataset.from_traces(paths, inputs={ok.run_id: "x"}, skip_missing=True).cases) == 1


def test_sse_bodies_parse_with_pings_and_crlf() -> None:
    body = ': ping\r\n\r\nid: 1\r\ndata: {"type": "final", "data": {"output": 1}}\r\n\r\ndata: not json\n\n'
    assert parse_sse_chunks(body) == [{"type": "final", "data": {"output": 1}}]
