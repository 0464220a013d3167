"""`compare_scores` on hand-made runs whose right verdicts are known."""

from __future__ import annotations

import json

import pytest

from kanawa.evals.compare import CompareSettings, Verdict, compare_scores


def _run(scores: list[list[float]]) -> dict[str, list[float]]:
    return {f"case-{i}": s for i, s in enumerate(scores)}


BASE = _run([[1.0, 1.0, 1.0]] * 15 + [[1.0, 0.0, 1.0]] * 5)
DROPPED = _run([[0.0, 0.0, 1.0]] * 15 + [[0.0, 0.0, 0.0]] * 5)


def test_a_clear_drop_on_every_case_is_worse_and_a_regression() -> None:
    result = compare_scores({"correct": BASE}, {"correct": DROPPED})
    (row,) = result.scorers
    assert row.verdict is Verdict.WORSE
    assert result.regressed
    assert not result.improved
    assert row.ci_high < 0 < row.ci_low + 1
    assert row.mean_diff == pytest.approx((15 * (1 / 3 - 1) + 5 * (0 - 2 / 3)) / 20)
    assert row.method == "exact"


def test_the_same_drop_read_backwards_is_an_improvement() -> None:
    result = compare_scores({"correct": DROPPED}, {"correct": BASE})
    assert result.scorers[0].verdict is Verdict.IMPROVED
    assert result.improved
    assert not result.regressed


def test_identical_runs_are_no_real_change() -> None:
    result = compare_scores({"correct": BASE}, {"correct": BASE})
    assert result.scorers[0].verdict is Verdict.NO_REAL_CHANGE
    assert result.scorers[0].p_value == 1.0
    assert not result.regressed


def test_one_case_flipping_is_noise_not_a_regression() -> None:
    candidate = dict(BASE)
    candidate["case-0"] = [0.0, 0.0, 0.0]
    result = compare_scores({"correct": BASE}, {"correct": candidate})
    assert result.scorers[0].mean_diff < 0
    assert result.scorers[0].verdict is Verdict.NO_REAL_CHANGE


def test_lower_is_better_scorers_read_a_rise_as_worse() -> None:
    cheap = _run([[0.1]] * 12)
    dear = _run([[0.5]] * 12)
    settings = CompareSettings(lower_is_better=frozenset({"cost"}))
    result = compare_scores({"cost": cheap}, {"cost": dear}, settings=settings)
    assert result.scorers[0].verdict is Verdict.WORSE
    assert compare_scores({"cost": cheap}, {"cost": dear}).scorers[0].verdict is Verdict.IMPROVED


def test_min_effect_keeps_a_real_but_tiny_change_from_failing() -> None:
    base = _run([[1.0]] * 40)
    slightly = _run([[1.0]] * 32 + [[0.9]] * 8)  # real (8 of 40 cases down) but 0.02 on average
    assert compare_scores({"s": base}, {"s": slightly}).scorers[0].verdict is Verdict.WORSE
    tolerant = CompareSettings(min_effect=0.05)
    assert (
        compare_scores({"s": base}, {"s": slightly}, settings=tolerant).scorers[0].verdict
        is Verdict.NO_REAL_CHANGE
    )


def test_holm_adjustment_applies_across_scorers() -> None:
    base = _run([[1.0]] * 6 + [[0.0]] * 6)
    cand = _run([[0.0]] * 6 + [[0.0]] * 6)  # six cases drop: exact p = 2/64
    single = compare_scores({"a": base}, {"a": cand})
    assert single.scorers[0].p_value == pytest.approx(2 / 64)
    assert single.regressed
    family = compare_scores({"a": base, "b": base}, {"a": cand, "b": cand})
    assert family.scorers[0].p_adjusted == pytest.approx(4 / 64)
    assert not family.regressed
    unadjusted = compare_scores(
        {"a": base, "b": base}, {"a": cand, "b": cand}, settings=CompareSettings(adjust=False)
    )
    assert unadjusted.regressed


def test_cases_and_scorers_in_one_run_only_are_listed_not_guessed() -> None:
    base = {"s": {"a": [1.0], "b": [1.0], "old": [1.0]}, "gone": {"a": [1.0]}}
    cand = {"s": {"a": [1.0], "b": [0.0], "new": [0.0]}, "added": {"a": [1.0]}}
    result = compare_scores(base, cand)
    assert result.only_in_baseline == ("old",)
    assert result.only_in_candidate == ("new",)
    assert result.unscored == ("added", "gone")
    assert result.scorers[0].n_cases == 2
    assert "fewer than 6" in result.scorers[0].note


def test_non_finite_scores_are_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        compare_scores({"s": {"a": [float("nan")]}}, {"s": {"a": [1.0]}})


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="alpha"):
        CompareSettings(alpha=1.5)
    with pytest.raises(ValueError, match="min_effect"):
        CompareSettings(min_effect=-0.1)


def test_json_markdown_and_rich_renderings_carry_the_verdicts() -> None:
    result = compare_scores({"a|b": BASE}, {"a|b": DROPPED}, baseline_name="v1", candidate_name="v2")
    data = json.loads(result.to_json())
    assert data["regressed"] is True
    assert data["scorers"][0]["verdict"] == "worse"
    assert data["settings"]["alpha"] == 0.05
    markdown = result.markdown()
    assert "a\\|b" in markdown  # a pipe in a scorer name does not break the table
    assert "worse" in markdown
    assert "**Overall: regression.**" in markdown

    from rich.console import Console

    console = Console(record=True, width=120)
    console.print(result.rich_table())
    text = console.export_text()
    assert "worse" in text
    assert "v1 → v2" in text
