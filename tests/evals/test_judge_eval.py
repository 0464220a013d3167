"""Judges inside an eval: their cost lands in the report, apart from the runs' — and two versions of
an agent, judged and compared, give the verdict the scripted models were built to give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kanawa.agents import Agent
from kanawa.evals.cases import Case, Dataset
from kanawa.evals.compare import Verdict, compare
from kanawa.evals.judges import LLMJudge
from kanawa.evals.render import to_markdown
from kanawa.evals.report import EvalReport
from kanawa.evals.runner import Eval
from kanawa.evals.scorers import FunctionScorer
from kanawa.evals.scoring import ScoreContext, build_scorer
from kanawa.llm.errors import LLMConnectionError
from kanawa.llm.pricing import cost_of
from kanawa.llm.retry import RetryPolicy
from kanawa.llm.testing.models import FunctionLLM, ModelRequest

CAPITALS = {
    "Japan": "Tokyo",
    "France": "Paris",
    "Italy": "Rome",
    "Spain": "Madrid",
    "Egypt": "Cairo",
    "Peru": "Lima",
    "Kenya": "Nairobi",
    "Chile": "Santiago",
    "Cuba": "Havana",
    "Iran": "Tehran",
    "Iraq": "Baghdad",
    "Nepal": "Kathmandu",
}


def _dataset() -> Dataset[str, str]:
    cases = [
        Case(name=c, inputs=f"What is the capital of {c}?", expected_output=city)
        for c, city in CAPITALS.items()
    ]
    return Dataset(name="capitals", cases=cases)


def _agent(wrong_from: int) -> Agent[str, None]:
    """Answers correctly for the first ``wrong_from`` countries, then names the wrong city."""
    names = list(CAPITALS)

    def answer(request: ModelRequest) -> str:
        country = request.last_user_text.removeprefix("What is the capital of ").rstrip("?")
        right = names.index(country) < wrong_from
        return f"The capital of {country} is {CAPITALS[country] if right else 'Springfield'}."

    return Agent("capitals", "Answer briefly.", model=FunctionLLM(answer, model="gpt-4o-mini"))


def fair_judge(request: ModelRequest) -> str:
    """Passes an answer when it contains the reference answer it was shown."""
    user = request.last_user_text
    expected = user.split("A reference answer:\n", 1)[1].split("\n", 2)[1]
    answer = user.split("The answer:\n", 1)[1].split("\n", 2)[1]
    ok = expected in answer
    return json.dumps(
        {"reason": "matches the reference" if ok else "wrong city", "score": float(ok), "passed": ok}
    )


def _judge() -> LLMJudge:
    return LLMJudge(
        "Pass when the answer names the same city as the reference answer.",
        model=FunctionLLM(fair_judge, model="gpt-4o-mini"),
        include_expected=True,
    )


def test_judge_cost_is_in_the_report_apart_from_the_runs() -> None:
    judge = _judge()
    report = Eval(_dataset(), _agent(wrong_from=12), scorers=[judge], progress=False).run()
    assert report.pass_rate == 1.0
    assert judge.ledger.calls == len(CAPITALS)
    expected = cost_of("gpt-4o-mini", judge.ledger.usage)
    assert expected is not None
    assert report.judge_cost_usd == pytest.approx(expected)
    runs = sum(r.cost_usd or 0.0 for r in report.results)
    assert runs > 0
    assert report.total_cost_usd == pytest.approx(runs + report.judge_cost_usd)


def test_a_judged_regression_is_found_by_compare_and_noise_is_not() -> None:
    baseline = Eval(_dataset(), _agent(wrong_from=12), scorers=[_judge()], repeat=2, progress=False).run()
    broken = Eval(_dataset(), _agent(wrong_from=2), scorers=[_judge()], repeat=2, progress=False).run()
    same = Eval(_dataset(), _agent(wrong_from=12), scorers=[_judge()], repeat=2, progress=False).run()
    regression = compare(baseline, broken)
    verdicts = {s.scorer: s.verdict for s in regression.scorers}
    assert verdicts == {"llm_judge": Verdict.WORSE, "llm_judge.score": Verdict.WORSE}
    assert regression.regressed
    assert not compare(baseline, same).regressed


def test_judges_can_be_named_in_a_dataset_file() -> None:
    judge = build_scorer("llm_judge", {"rubric": "Names the capital.", "model": "test", "threshold": 0.5})
    assert isinstance(judge, LLMJudge)
    assert judge.threshold == 0.5
    assert "llm_judge" in json.dumps(Dataset.json_schema())


def test_a_judge_whose_provider_fails_errors_the_case_and_compare_leaves_it_out(tmp_path: Path) -> None:
    """The candidate is the same agent, but its judge's provider is down for most cases: read as
    failed checks that would be a "worse" verdict; they are errored cases, listed apart."""
    down = set(list(CAPITALS)[:8])

    def outage(request: ModelRequest) -> str:
        if any(f"capital of {country}?" in request.last_user_text for country in down):
            raise LLMConnectionError("upstream unavailable", status_code=503)
        return fair_judge(request)

    judge = LLMJudge(
        "Pass when the answer names the same city as the reference answer.",
        model=FunctionLLM(outage, model="gpt-4o-mini"),
        include_expected=True,
        include_input=True,
        retry_policy=RetryPolicy(max_attempts=2, initial_delay=0.0),
    )
    baseline = Eval(_dataset(), _agent(wrong_from=12), scorers=[_judge()], progress=False).run()
    candidate = Eval(_dataset(), _agent(wrong_from=12), scorers=[judge], progress=False).run()

    errored = [r for r in candidate.results if r.errored]
    assert {r.case for r in errored} == down
    for result in errored:
        assert result.error is None  # the run itself was fine
        assert not result.passed
        assert result.outcomes == []  # no invented verdict
        assert "upstream unavailable" in result.scorer_errors["llm_judge"]
    assert all(r.passed for r in candidate.results if r.case not in down)

    saved = EvalReport.load(candidate.save(tmp_path / "candidate.json"))  # what the CLI compares
    assert saved.unjudged() == {"llm_judge": down}
    result = compare(baseline, saved)
    assert not result.regressed
    for row in result.scorers:
        assert row.errored_cases == tuple(sorted(down))
        assert row.n_cases == len(CAPITALS) - len(down)
        assert row.verdict is Verdict.NO_REAL_CHANGE
    assert result.only_in_baseline == ()  # errored, not missing
    assert "errored case(s) left out of the paired test" in result.markdown()
    assert "(+8 a scorer could not judge)" in to_markdown(candidate)


def test_a_broken_scorer_still_fails_its_case() -> None:
    """Only a missing verdict (NoVerdictError) errors a case; a scorer that crashes is a failed check."""

    def broken(ctx: ScoreContext) -> bool:
        raise KeyError("oops")

    report = Eval(
        _dataset(), _agent(wrong_from=12), scorers=[FunctionScorer(broken, name="broken")], progress=False
    ).run()
    assert all(not r.passed and not r.errored for r in report.results)
    assert all("KeyError" in r.outcomes[0].reason for r in report.results)
