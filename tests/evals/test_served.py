"""An eval against a served agent (``kanawa serve``, ``POST /v1/runs``) gives the in-process report,
and a served run's history becomes a dataset."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kanawa.evals import Dataset, EvalReport
from kanawa.evals.runner import Eval
from kanawa.evals.sources import MissingInputsError
from kanawa.evals.targets import ServedRunError, ServedTarget
from kanawa.server.http.app import create_app
from tests.evals.agents import make_calculator
from tests.evals.test_runner import sums
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import KEY_A


@pytest.fixture(scope="module")
def served() -> Iterator[LiveServer]:
    app = create_app(agents={"calculator": make_calculator()}, settings=settings_for("memory", None))
    server = LiveServer(app).start()
    yield server
    server.stop()


def comparable(report: EvalReport) -> list[tuple[Any, ...]]:
    """What must match between the two ways of running: everything but ids, times and traces."""
    return [
        (r.case, r.repeat, r.output, r.text, r.outcomes, r.usage, r.cost_usd, r.error, r.passed)
        for r in report.results
    ]


async def test_a_served_eval_gives_the_in_process_report(served: LiveServer) -> None:
    dataset = sums(5, wrong={1, 3})
    local = await Eval(dataset, make_calculator(), repeat=2).arun()
    remote = await Eval(dataset, ServedTarget(served.url, "calculator", api_key=KEY_A), repeat=2).arun()
    assert comparable(remote) == comparable(local)
    assert remote.per_case_scores() == local.per_case_scores()
    assert remote.pass_rate == local.pass_rate == 0.6
    assert remote.target == f"calculator at {served.url}"
    # each served case run has its own trace, from the run's trace chunks
    first = remote.results[0]
    assert first.trace is not None
    assert {r["event"] for r in first.trace} >= {"agent_start", "tool_start", "agent_end"}
    assert {r["run_id"] for r in first.trace} == {first.run_id}


async def test_a_refused_served_run_is_a_case_error(served: LiveServer) -> None:
    report = await Eval(sums(1), ServedTarget(served.url, "calculator", api_key="sk-wrong-key")).arun()
    assert report.results[0].error is not None
    assert report.results[0].error.startswith("ServedRunError: POST /v1/runs answered 401")
    missing = await Eval(sums(1), ServedTarget(served.url, "nobody", api_key=KEY_A)).arun()
    assert missing.results[0].error is not None
    assert "404" in missing.results[0].error
    assert issubclass(ServedRunError, RuntimeError)


async def test_served_runs_become_cases(served: LiveServer) -> None:
    report = await Eval(sums(3, wrong={2}), ServedTarget(served.url, "calculator", api_key=KEY_A)).arun()
    ids = {r.run_id: r.case for r in report.results}
    inputs = {run_id: f"replayed {case}" for run_id, case in ids.items()}
    headers = {"Authorization": f"Bearer {KEY_A}"}
    data = await Dataset.afrom_served_runs(
        served.url, list(ids), headers=headers, inputs=inputs, keep_output=True, pin_trajectory=True
    )
    assert [c.inputs for c in data.cases] == [inputs[i] for i in ids]
    last = data.cases[-1]
    assert last.expected_output == "The answer is 6."  # what the served run answered (wrong: 2+3)
    assert last.metadata["tools"] == ["add"]
    assert last.metadata["termination_reason"] == "completed"
    assert last.scorers[0].build().name == "tool_calls"  # type: ignore[union-attr]
    with pytest.raises(MissingInputsError, match="no input for 3 run"):
        await Dataset.afrom_served_runs(served.url, list(ids), headers=headers)
    with pytest.raises(LookupError, match="no run 'nope'"):
        await Dataset.afrom_served_runs(served.url, ["nope"], headers=headers, inputs={"nope": "x"})
