"""The comparison's decision rule, checked by simulation: how often it cries "worse" when nothing
changed (must be ≤ 5 % at the default settings) and how often it catches a real drop (its power).

Synthetic evals are drawn with a known truth: each case has its own pass probability (cases differ
a lot in difficulty, as real ones do), each run repeats each case, and the candidate's probabilities
are the baseline's shifted by the true effect. Everything is seeded, so the numbers are the same on
every run; `-s` prints them.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from kanawa.evals.compare import CompareSettings, Verdict, compare_scores

CASES = 30
REPEATS = 3
NULL_COMPARISONS = 1000
#: The effect size the power is stated for: the candidate passes 20 points less often on every case.
STATED_EFFECT = -0.20


def _pass_fail_run(probs: list[float], rng: random.Random) -> dict[str, list[float]]:
    """One run of a pass/fail scorer: REPEATS Bernoulli draws per case."""
    return {f"case-{i}": [float(rng.random() < p) for _ in range(REPEATS)] for i, p in enumerate(probs)}


def _continuous_run(means: list[float], rng: random.Random) -> dict[str, list[float]]:
    """One run of a 0–1 judge-like score: noisy around each case's mean, clipped to [0, 1]."""
    return {
        f"case-{i}": [min(1.0, max(0.0, rng.gauss(m, 0.15))) for _ in range(REPEATS)]
        for i, m in enumerate(means)
    }


def _simulate(
    effect: float,
    comparisons: int,
    seed: int,
    run: Callable[[list[float], random.Random], dict[str, list[float]]] = _pass_fail_run,
    scorers: int = 1,
) -> dict[Verdict, int]:
    """Count verdicts over `comparisons` simulated baseline/candidate pairs with a true `effect`.

    With several scorers the comparison counts as "worse" when any scorer is (what fails CI).
    """
    rng = random.Random(seed)
    counts = dict.fromkeys(Verdict, 0)
    for _ in range(comparisons):
        baseline: dict[str, dict[str, list[float]]] = {}
        candidate: dict[str, dict[str, list[float]]] = {}
        for k in range(scorers):
            truth = [rng.uniform(0.25, 0.9) for _ in range(CASES)]
            shifted = [min(1.0, max(0.0, p + effect)) for p in truth]
            baseline[f"s{k}"] = run(truth, rng)
            candidate[f"s{k}"] = run(shifted, rng)
        result = compare_scores(baseline, candidate, settings=CompareSettings())
        if result.regressed:
            counts[Verdict.WORSE] += 1
        elif result.improved:
            counts[Verdict.IMPROVED] += 1
        else:
            counts[Verdict.NO_REAL_CHANGE] += 1
    return counts


def test_false_regression_rate_at_the_default_is_at_most_5_percent() -> None:
    counts = _simulate(0.0, NULL_COMPARISONS, seed=20261129)
    rate = counts[Verdict.WORSE] / NULL_COMPARISONS
    false_improvement = counts[Verdict.IMPROVED] / NULL_COMPARISONS
    print(f"\nno true change, {NULL_COMPARISONS} comparisons of {CASES} cases x {REPEATS} repeats:")
    print(f"  false-regression rate {rate:.3%}, false-improvement rate {false_improvement:.3%}")
    assert rate <= 0.05
    # and not a rule that never says anything: the two-sided test spends about alpha/2 on each side
    assert counts[Verdict.WORSE] > 0


def test_false_regression_rate_with_three_scorers_stays_at_most_5_percent() -> None:
    """Holm's adjustment: a report with three unchanged scorers fails CI no more often than one."""
    comparisons = 400
    counts = _simulate(0.0, comparisons, seed=7, scorers=3)
    rate = counts[Verdict.WORSE] / comparisons
    print(f"\nno true change, three scorers: false-regression rate {rate:.3%}")
    assert rate <= 0.05


def test_false_regression_rate_for_continuous_scores_monte_carlo_path() -> None:
    """Judge-like continuous scores take the Monte Carlo path; its level holds too."""
    comparisons = 100
    counts = _simulate(0.0, comparisons, seed=11, run=_continuous_run)
    rate = counts[Verdict.WORSE] / comparisons
    print(f"\ncontinuous scores, no true change, {comparisons} comparisons: false-regression rate {rate:.3%}")
    assert rate <= 0.05


def test_power_at_stated_effect_sizes() -> None:
    """Power rises with the true drop; at the stated effect (−0.20 pass rate) most drops are caught."""
    powers: dict[float, float] = {}
    for effect in (-0.05, -0.10, -0.15, STATED_EFFECT, -0.25):
        comparisons = 200
        counts = _simulate(effect, comparisons, seed=int(-effect * 1000))
        powers[effect] = counts[Verdict.WORSE] / comparisons
        # a real drop is never called an improvement
        assert counts[Verdict.IMPROVED] == 0
    print(f"\npower (share of true drops called worse), {CASES} cases x {REPEATS} repeats:")
    for effect, power in powers.items():
        print(f"  true effect {effect:+.2f}: power {power:.1%}")
    assert powers[-0.05] <= powers[-0.10] <= powers[-0.15] <= powers[STATED_EFFECT] <= powers[-0.25]
    assert powers[STATED_EFFECT] >= 0.7  # 79 % with this seed: about four real drops in five are caught
