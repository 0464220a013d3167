"""The runner: every case is a kanawa run with its trace; repeats, timeouts, budgets and concurrency."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from kanawa import Agent, FunctionLLM
from kanawa.agents.budget import TokenGuard
from kanawa.evals import Case, Dataset, EqualsExpected, ScorerSpec
from kanawa.evals.runner import Eval
from kanawa.evals.scorers import scorer
from kanawa.evals.scoring import ScoreContext
from kanawa.trace.records import read_trace
from tests.evals.agents import make_calculator


def sums(n: int, *, wrong: set[int] | None = None) -> Dataset[str, str]:
    wrong = wrong or set()
    return Dataset[str, str](
        name="sums",
        cases=[
            Case(
                name=f"sum-{i}",
                inputs=f"What is {i}+{i + 1}?{' (wrong)' if i in wrong else ''}",
                expected_output=f"The answer is {2 * i + 1}.",
            )
            for i in range(n)
        ],
        scorers=[
            ScorerSpec(type="equals_expected"),
            ScorerSpec.model_validate(
                {"type": "tool_calls", "expected": [{"name": "add", "args": {"a": {"gte": 0}}}]}
            ),
        ],
    )


async def test_each_case_is_a_traced_run_with_scores(tmp_path: Path) -> None:
    report = await Eval(sums(4, wrong={2}), make_calculator(), trace_dir=tmp_path / "traces").arun()
    assert [r.case for r in report.results] == ["sum-0", "sum-1", "sum-2", "sum-3"]
    verdicts = {r.case: {o.name: o for o in r.outcomes} for r in report.results}
    assert all(verdicts[c]["tool_calls"].passed for c in verdicts)  # type: ignore[union-attr]
    assert verdicts["sum-2"]["equals_expected"].passed is False  # type: ignore[union-attr]
    assert (
        "expected 'The answer is 5.', got 'The answer is 6.'" in verdicts["sum-2"]["equals_expected"].reason
    )
    assert report.pass_rate == 0.75
    first = report.results[0]
    assert first.usage.requests == 2
    assert first.run_id
    assert first.trace is not None
    assert next(r["event"] for r in first.trace) == "agent_start"
    assert first.trace_path is not None
    log = read_trace(first.trace_path)
    assert {r.run_id for r in log.records} == {first.run_id}
    assert [r.tool for r in log.records if r.event == "tool_start"] == ["add"]
    assert report.stopped_reason is None
    assert report.skipped == []


async def test_repeats_keep_their_index_and_pair_in_scores() -> None:
    report = await Eval(sums(2), make_calculator(), repeat=3, concurrency=4).arun()
    assert [(r.case, r.repeat) for r in report.results] == [
        (f"sum-{i}", k) for i in range(2) for k in range(3)
    ]
    assert report.per_case_scores()["equals_expected"] == {"sum-0": [1.0] * 3, "sum-1": [1.0] * 3}


async def test_a_slow_case_times_out_and_the_rest_finish() -> None:
    data = Dataset(name="t", cases=[Case(name="slow", inputs="slow 1+2"), Case(name="fast", inputs="1+2")])
    report = await Eval(data, make_calculator(), timeout=0.5, scorers=[ScorerSpec(type="no_error")]).arun()
    by_case = {r.case: r for r in report.results}
    assert by_case["slow"].error == "timed out after 0.5 s"
    assert by_case["slow"].outcomes[0].passed is False  # type: ignore[union-attr]
    assert by_case["fast"].error is None
    assert by_case["fast"].text == "The answer is 3."


async def test_the_budget_stops_the_eval_cleanly_and_the_report_says_where() -> None:
    # each case run takes two requests; a four-request budget lets two case runs finish
    report = await Eval(sums(6), make_calculator(), concurrency=1, max_requests=4).arun()
    assert len(report.results) == 2
    assert report.stopped_reason is not None
    assert report.stopped_reason.startswith("budget: 4 of 4 requests")
    assert report.skipped == [f"sum-{i}#0" for i in range(2, 6)]
    assert report.metadata["budget"]["spent_requests"] == 4


async def test_a_run_cut_short_by_the_budget_is_skipped_not_failed() -> None:
    guard = TokenGuard(max_requests=3, session="cut-short", warn_at=None)
    report = await Eval(sums(3), make_calculator(), concurrency=1, budget=guard).arun()
    # run 1 used requests 1–2; run 2 got request 3 and was stopped before its 4th
    assert [r.case for r in report.results] == ["sum-0"]
    assert report.skipped == ["sum-1#0", "sum-2#0"]
    assert report.stopped_reason is not None
    assert "budget" in report.stopped_reason


async def test_concurrency_is_limited() -> None:
    running = 0
    peak = 0
    gate = asyncio.Event()

    async def task(inputs: str) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        if running == 3:
            gate.set()
        await gate.wait()
        running -= 1
        return inputs

    data = Dataset(name="c", cases=[Case(name=str(i), inputs=str(i)) for i in range(12)])
    report = await Eval(data, task, concurrency=3).arun()
    assert peak == 3
    assert [r.output for r in report.results] == [str(i) for i in range(12)]


async def test_user_scorers_sync_and_async_see_the_run() -> None:
    seen: list[str] = []

    @scorer
    def short(ctx: ScoreContext) -> tuple[bool, str]:
        return len(ctx.text) < 40, f"{len(ctx.text)} chars"

    @scorer(name="tokens_used")
    async def tokens(ctx: ScoreContext) -> float:
        seen.append(ctx.run_id or "")
        await asyncio.sleep(0)
        return min(1.0, ctx.usage.total_tokens / 1000)

    def crashes(ctx: ScoreContext) -> Any:
        raise KeyError("nope")

    report = await Eval(sums(1), make_calculator(), scorers=[short, tokens, scorer(crashes)]).arun()
    outcomes = {o.name: o for o in report.results[0].outcomes}
    assert outcomes["short"].passed is True
    assert outcomes["short"].reason == "16 chars"
    assert 0 < outcomes["tokens_used"].value < 1  # type: ignore[union-attr]
    assert outcomes["crashes"].passed is False  # type: ignore[union-attr]
    assert "raised KeyError" in outcomes["crashes"].reason
    assert seen == [report.results[0].run_id]


def test_sync_run_and_report_json(tmp_path: Path) -> None:
    report = Eval(sums(2), make_calculator()).run()
    data = json.loads(report.to_json())
    assert data["results"][0]["trace"][0]["event"] == "agent_start"
    assert data["target"] == "agent calculator"


async def test_a_money_budget_stops_the_eval_and_costs_are_in_the_report() -> None:
    priced = Agent("priced", "Answer.", model=FunctionLLM(lambda request: "hello there", model="gpt-5-mini"))
    one_run = (await priced.arun("What is 0+1?")).cost
    assert one_run is not None
    assert one_run > 0
    budget = one_run * 3.5  # three runs fit, the fourth starts (spend below the limit) and the fifth does not
    report = await Eval(sums(8), priced, concurrency=1, max_cost_usd=budget).arun()
    assert [r.case for r in report.results] == ["sum-0", "sum-1", "sum-2", "sum-3"]
    assert report.skipped == [f"sum-{i}#0" for i in range(4, 8)]
    assert report.stopped_reason is not None
    assert report.stopped_reason.startswith("budget: $")
    assert report.stopped_reason.endswith("spent after 4 case run(s)")
    assert report.total_cost_usd == pytest.approx(4 * one_run)
    assert report.metadata["budget"]["spent_usd"] == pytest.approx(4 * one_run)


async def test_a_token_budget_stops_the_eval() -> None:
    first = await Eval(sums(1), make_calculator()).arun()
    per_run = first.results[0].usage.total_tokens
    report = await Eval(sums(5), make_calculator(), concurrency=1, max_tokens=per_run * 2).arun()
    assert len(report.results) == 2
    assert report.stopped_reason == f"budget: {per_run * 2} of {per_run * 2} tokens spent after 2 case run(s)"


def test_the_progress_bar_counts_every_case_run() -> None:
    """Updates reach the bar in batches; when the eval ends it shows every run done."""
    import io

    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    cases = [Case(name=f"q{i}", inputs=i, expected_output=i) for i in range(40)]
    report = Eval(
        Dataset(name="echo", cases=cases, scorers=[EqualsExpected()]),
        lambda x: x,
        repeat=2,
        concurrency=4,
        progress=True,
        console=console,
    ).run()
    assert report.pass_rate == 1.0
    text = out.getvalue()
    assert "80/80" in text
    assert "q39" in text  # the last case run finished is named
