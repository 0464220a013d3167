"""Properties of the comparison that must hold for any scores: swapping the runs mirrors the verdict,
relabelling cases changes nothing, and a run compared with itself never changes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kanawa.evals.compare import Verdict, compare_scores
from kanawa.evals.stats import bootstrap_interval, sign_flip_p_value

# scores on the grids evals produce (pass/fail over 1-3 repeats, tenths), so the exact path runs
GRID = st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 2 / 3, 0.75, 0.9, 1.0])
RUNS = st.lists(st.tuples(GRID, GRID), min_size=1, max_size=25)
MIRROR = {
    Verdict.WORSE: Verdict.IMPROVED,
    Verdict.IMPROVED: Verdict.WORSE,
    Verdict.NO_REAL_CHANGE: Verdict.NO_REAL_CHANGE,
}


def _runs(
    pairs: list[tuple[float, float]],
) -> tuple[dict[str, dict[str, list[float]]], dict[str, dict[str, list[float]]]]:
    base = {"s": {f"c{i}": [a] for i, (a, _) in enumerate(pairs)}}
    cand = {"s": {f"c{i}": [b] for i, (_, b) in enumerate(pairs)}}
    return base, cand


@settings(max_examples=150, deadline=None)
@given(RUNS)
def test_swapping_baseline_and_candidate_mirrors_the_verdict(pairs: list[tuple[float, float]]) -> None:
    base, cand = _runs(pairs)
    forward = compare_scores(base, cand).scorers[0]
    backward = compare_scores(cand, base).scorers[0]
    assert backward.verdict is MIRROR[forward.verdict]
    assert backward.p_value == forward.p_value
    assert abs(backward.mean_diff + forward.mean_diff) < 1e-12
    assert abs(backward.ci_low + forward.ci_high) < 1e-9
    assert abs(backward.ci_high + forward.ci_low) < 1e-9


@settings(max_examples=100, deadline=None)
@given(RUNS, st.randoms(use_true_random=False))
def test_case_order_and_names_do_not_matter(pairs: list[tuple[float, float]], rnd: object) -> None:
    base, cand = _runs(pairs)
    shuffled = list(pairs)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    base2, cand2 = _runs(shuffled)
    a, b = compare_scores(base, cand).scorers[0], compare_scores(base2, cand2).scorers[0]
    assert (a.verdict, a.p_value, a.ci_low, a.ci_high) == (b.verdict, b.p_value, b.ci_low, b.ci_high)


@settings(max_examples=100, deadline=None)
@given(st.lists(GRID, min_size=1, max_size=25))
def test_a_run_compared_with_itself_is_no_change(scores: list[float]) -> None:
    run = {"s": {f"c{i}": [v] for i, v in enumerate(scores)}}
    row = compare_scores(run, run).scorers[0]
    assert row.verdict is Verdict.NO_REAL_CHANGE
    assert row.p_value == 1.0


@settings(max_examples=150, deadline=None)
@given(st.lists(GRID.map(lambda v: v - 0.5), min_size=1, max_size=30))
def test_the_interval_holds_the_mean_and_the_p_value_is_a_probability(diffs: list[float]) -> None:
    low, high, _ = bootstrap_interval(diffs)
    mean = sum(diffs) / len(diffs)
    assert min(diffs) - 1e-9 <= low <= mean + 1e-9
    assert mean - 1e-9 <= high <= max(diffs) + 1e-9
    p, _ = sign_flip_p_value(diffs)
    assert 0.0 < p <= 1.0
