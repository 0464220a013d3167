"""The paired statistics against brute force: every sign pattern, every bootstrap resample."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from kanawa.evals.stats import bootstrap_interval, holm_adjust, paired_analysis, sign_flip_p_value


def _brute_sign_flip(diffs: list[float]) -> float:
    observed = abs(sum(diffs))
    hits = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(diffs))
        if abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-12
    )
    return hits / 2 ** len(diffs)


def _brute_bootstrap(diffs: list[float], confidence: float) -> tuple[float, float]:
    """Percentile interval over all n**n equally likely resamples (the ideal bootstrap)."""
    n = len(diffs)
    means = sorted(
        Fraction(sum(Fraction(d).limit_denominator(1000) for d in pick)) / n
        for pick in itertools.product(diffs, repeat=n)
    )
    alpha = Fraction(1.0 - confidence)
    lo = next(m for i, m in enumerate(means) if (i + 1) >= alpha / 2 * len(means))
    hi = next(m for i, m in enumerate(means) if (i + 1) >= (1 - alpha / 2) * len(means))
    return float(lo), float(hi)


@pytest.mark.parametrize(
    "diffs",
    [
        [0.5, -0.25, 1.0, 0.75, 0.0, 0.25, -0.5, 1.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1 / 3, -2 / 3, 1.0, 1 / 3, 1 / 3, 2 / 3, 0.0, -1 / 3, 1.0, 2 / 3],
        [0.1, 0.2, -0.3, 0.7, 0.4, 0.0, 0.9],
    ],
)
def test_exact_sign_flip_p_value_equals_enumerating_every_sign_pattern(diffs: list[float]) -> None:
    p, method = sign_flip_p_value(diffs)
    assert method == "exact"
    assert p == pytest.approx(_brute_sign_flip(diffs), abs=1e-12)


def test_monte_carlo_sign_flip_agrees_with_enumeration_on_unrounded_scores() -> None:
    rng = random.Random(3)
    diffs = [rng.gauss(0.1, 0.3) for _ in range(12)]
    p, method = sign_flip_p_value(diffs, resamples=20000, seed=1)
    assert method == "monte-carlo"
    assert p == pytest.approx(_brute_sign_flip(diffs), abs=0.006)


@pytest.mark.parametrize(
    "diffs", [[0.5, -0.25, 1.0, 0.75, 0.0], [1 / 3, 0.0, -1 / 3, 1.0, 2 / 3], [0.0, 1.0, 1.0, 0.0, 1.0, 1.0]]
)
def test_exact_bootstrap_interval_equals_enumerating_every_resample(diffs: list[float]) -> None:
    low, high, method = bootstrap_interval(diffs, confidence=0.9)
    assert method == "exact"
    assert (low, high) == pytest.approx(_brute_bootstrap(diffs, 0.9), abs=1e-9)


def test_monte_carlo_bootstrap_is_seeded_and_close_to_the_exact_interval() -> None:
    rng = random.Random(5)
    base = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0]) - 0.25 for _ in range(25)]
    exact_low, exact_high, method = bootstrap_interval(base)
    assert method == "exact"
    jittered = [d + rng.uniform(-1e-6, 1e-6) for d in base]  # off the grid: resampled
    low, high, method = bootstrap_interval(jittered, resamples=4000, seed=9)
    assert method == "monte-carlo"
    assert (low, high) == bootstrap_interval(jittered, resamples=4000, seed=9)[:2]
    assert low == pytest.approx(exact_low, abs=0.03)
    assert high == pytest.approx(exact_high, abs=0.03)


def test_no_differences_means_no_evidence() -> None:
    result = paired_analysis([0.0] * 20)
    assert result.p_value == 1.0
    assert (result.ci_low, result.ci_high, result.mean_diff) == (0.0, 0.0, 0.0)


def test_holm_adjustment_matches_the_step_down_rule() -> None:
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjust([0.5]) == [0.5]
    assert holm_adjust([0.2, 0.9]) == pytest.approx([0.4, 0.9])
