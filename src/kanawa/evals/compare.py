"""Compare two eval runs (baseline vs candidate) and say, per scorer, whether a difference is real.

The walk, per scorer:

1. each case's score is the mean over its repeats, in both runs; cases are paired by name (cases in
   only one run are listed, never guessed);
2. the paired differences get a sign-flip test and a bootstrap interval (`kanawa.evals.stats`);
   a case a scorer could not judge in either run (a judge whose provider failed:
   ``CaseResult.scorer_errors``) is *errored*: left out of that scorer's test and listed apart,
   so a flaky judge is never read as a regression;
3. p-values are Holm-adjusted across the scorers compared, so a report with ten scorers raises a
   false alarm no more often than one with a single scorer;
4. the verdict: **worse** only when the adjusted p-value is below ``alpha``, the whole interval lies on
   the worse side of zero and the mean change is past ``min_effect``; **improved** symmetrically;
   otherwise **no-real-change**.

With the defaults (alpha 0.05, two-sided) a candidate that is truly no different is called worse in
at most 2.5 % of comparisons; `tests/evals/test_compare_simulation.py` measures it over thousands of
simulated comparisons. `kanawa eval compare` exits non-zero only on a *worse* verdict, so CI does not
flap on noise.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from kanawa.evals.stats import holm_adjust, paired_analysis

if TYPE_CHECKING:
    from rich.table import Table

    from kanawa.evals.report import EvalReport

__all__ = ["CompareSettings", "Comparison", "ScorerComparison", "Verdict", "compare", "compare_scores"]

#: Per scorer, per case name, the scores of that case's repeats (assertions as 1.0 / 0.0).
CaseScores = Mapping[str, Mapping[str, Sequence[float]]]


class Verdict(StrEnum):
    """What the comparison concluded for one scorer."""

    IMPROVED = "improved"
    WORSE = "worse"
    NO_REAL_CHANGE = "no-real-change"


@dataclass(frozen=True, kw_only=True)
class CompareSettings:
    """How strict the comparison is. The defaults are the ones the simulation test holds to ≤ 5 %.

    ``alpha`` is the two-sided level of the paired test and sets the interval's confidence
    (``1 - alpha``); ``min_effect`` is the smallest mean change (in score units) worth a verdict;
    ``lower_is_better`` names scorers where a fall is the improvement (cost, latency).
    """

    alpha: float = 0.05
    min_effect: float = 0.0
    permutations: int = 4000
    resamples: int = 2000
    seed: int = 0
    adjust: bool = True
    lower_is_better: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be between 0 and 1, got {self.alpha}")
        if self.min_effect < 0.0:
            raise ValueError(f"min_effect must be 0 or more, got {self.min_effect}")
        if self.permutations < 100 or self.resamples < 100:
            raise ValueError("permutations and resamples must each be at least 100")


@dataclass(frozen=True, kw_only=True)
class ScorerComparison:
    """One scorer's comparison: means, the paired change with its interval, p-values and the verdict."""

    scorer: str
    n_cases: int
    baseline_mean: float
    candidate_mean: float
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    method: str
    verdict: Verdict
    note: str = ""
    errored_cases: tuple[str, ...] = ()
    """Cases left out of this scorer's test because it gave no verdict on them in one run or both."""


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """The result of `compare`: one `ScorerComparison` per scorer both runs have."""

    baseline: str
    candidate: str
    scorers: tuple[ScorerComparison, ...]
    settings: CompareSettings
    only_in_baseline: tuple[str, ...] = ()
    only_in_candidate: tuple[str, ...] = ()
    unscored: tuple[str, ...] = ()

    @property
    def regressed(self) -> bool:
        """True when any scorer got really worse: the one condition `kanawa eval compare` fails on."""
        return any(s.verdict is Verdict.WORSE for s in self.scorers)

    @property
    def improved(self) -> bool:
        """True when some scorer really improved and none got worse."""
        return not self.regressed and any(s.verdict is Verdict.IMPROVED for s in self.scorers)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (verdicts as their string values)."""
        settings = asdict(self.settings)
        settings["lower_is_better"] = sorted(self.settings.lower_is_better)
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "regressed": self.regressed,
            "settings": settings,
            "scorers": [
                {**asdict(s), "verdict": s.verdict.value, "errored_cases": list(s.errored_cases)}
                for s in self.scorers
            ],
            "only_in_baseline": list(self.only_in_baseline),
            "only_in_candidate": list(self.only_in_candidate),
            "unscored": list(self.unscored),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The comparison as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def markdown(self) -> str:
        """A Markdown table with one row per scorer, then notes on unpaired cases and scorers."""
        level = f"{100 * (1 - self.settings.alpha):g}%"
        lines = [
            f"## {_md(self.baseline)} → {_md(self.candidate)}",
            "",
            f"| Scorer | Cases | Baseline | Candidate | Δ | {level} CI | p (adj.) | Verdict |",
            "|---|---:|---:|---:|---:|---|---:|---|",
        ]
        for s in self.scorers:
            lines.append(
                f"| {_md(s.scorer)} | {s.n_cases} | {s.baseline_mean:.3f} | {s.candidate_mean:.3f} | "
                f"{s.mean_diff:+.3f} | [{s.ci_low:+.3f}, {s.ci_high:+.3f}] | {s.p_adjusted:.3g} | "
                f"{_VERDICT_MARK[s.verdict]} {s.verdict.value} |"
            )
        lines.append("")
        lines.append(f"**Overall: {'regression' if self.regressed else 'no regression'}.**")
        for label, names in (
            ("Only in baseline", self.only_in_baseline),
            ("Only in candidate", self.only_in_candidate),
            ("Scorers in one run only", self.unscored),
        ):
            if names:
                lines.append(f"\n{label}: {', '.join(_md(n) for n in names)}")
        for s in self.scorers:
            if s.note:
                lines.append(f"\n{_md(s.scorer)}: {_md(s.note)}")
        lines += [f"\n{_md(line)}" for line in self.errored_lines()]
        return "\n".join(lines) + "\n"

    def errored_lines(self) -> list[str]:
        """One sentence per scorer with errored cases (no verdict in a run), naming them."""
        return [
            f"{s.scorer}: {len(s.errored_cases)} errored case(s) left out of the paired test "
            f"(no verdict in a run): {', '.join(s.errored_cases)}"
            for s in self.scorers
            if s.errored_cases
        ]

    def rich_table(self) -> Table:
        """A rich table for the terminal, coloured by verdict."""
        from rich.table import Table
        from rich.text import Text

        errored = self.errored_lines()
        table = Table(title=f"{self.baseline} → {self.candidate}", caption="\n".join(errored) or None)
        for column in ("Scorer", "Cases", "Baseline", "Candidate", "Δ", "CI", "p (adj.)", "Verdict"):
            table.add_column(column, justify="left" if column in ("Scorer", "CI", "Verdict") else "right")
        for s in self.scorers:
            style = {Verdict.WORSE: "bold red", Verdict.IMPROVED: "green", Verdict.NO_REAL_CHANGE: "dim"}
            table.add_row(
                Text(s.scorer),
                str(s.n_cases),
                f"{s.baseline_mean:.3f}",
                f"{s.candidate_mean:.3f}",
                f"{s.mean_diff:+.3f}",
                f"[{s.ci_low:+.3f}, {s.ci_high:+.3f}]",
                f"{s.p_adjusted:.3g}",
                Text(s.verdict.value, style=style[s.verdict]),
            )
        return table


_VERDICT_MARK = {Verdict.IMPROVED: "▲", Verdict.WORSE: "▼", Verdict.NO_REAL_CHANGE: "="}


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell (pipes and newlines would break the row)."""
    return text.replace("|", "\\|").replace("\n", " ")


def _case_means(scores: Mapping[str, Sequence[float]], scorer: str) -> dict[str, float]:
    """Each case's mean over its repeats; non-finite scores are refused rather than averaged."""
    means: dict[str, float] = {}
    for case, values in scores.items():
        if not values:
            continue
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"scorer {scorer!r}, case {case!r}: scores must be finite numbers")
        means[case] = math.fsum(values) / len(values)
    return means


def _verdict(diff: float, low: float, high: float, p: float, better_up: bool, s: CompareSettings) -> Verdict:
    """The decision rule: a verdict needs the test, the whole interval and the minimum effect to agree."""
    if p >= s.alpha:
        return Verdict.NO_REAL_CHANGE
    if high < 0.0 and diff < -s.min_effect:
        return Verdict.WORSE if better_up else Verdict.IMPROVED
    if low > 0.0 and diff > s.min_effect:
        return Verdict.IMPROVED if better_up else Verdict.WORSE
    return Verdict.NO_REAL_CHANGE


def compare_scores(
    baseline: CaseScores,
    candidate: CaseScores,
    *,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
    settings: CompareSettings | None = None,
    errored: Mapping[str, Collection[str]] | None = None,
) -> Comparison:
    """Compare per-scorer, per-case repeat scores of two runs (`EvalReport.per_case_scores`'s shape).

    ``errored`` maps a scorer to the cases it could not judge in one run or both: they are left out
    of its test (from both runs) and listed in its row's ``errored_cases``."""
    s = settings or CompareSettings()
    errored = errored or {}
    shared = [name for name in baseline if name in candidate]
    unscored = tuple(sorted(set(baseline) ^ set(candidate)))
    only_base: set[str] = set()
    only_cand: set[str] = set()
    rows: list[tuple[str, int, float, float, Any, str, tuple[str, ...]]] = []
    for index, scorer in enumerate(shared):
        left_out = frozenset(errored.get(scorer, ()))
        base = _case_means({c: v for c, v in baseline[scorer].items() if c not in left_out}, scorer)
        cand = _case_means({c: v for c, v in candidate[scorer].items() if c not in left_out}, scorer)
        only_base |= base.keys() - cand.keys()
        only_cand |= cand.keys() - base.keys()
        cases = sorted(base.keys() & cand.keys())
        diffs = [cand[c] - base[c] for c in cases]
        result = paired_analysis(
            diffs,
            confidence=1.0 - s.alpha,
            permutations=s.permutations,
            resamples=s.resamples,
            seed=s.seed + index,
        )
        base_mean = math.fsum(base[c] for c in cases) / len(cases) if cases else 0.0
        cand_mean = math.fsum(cand[c] for c in cases) / len(cases) if cases else 0.0
        note = _power_note(len(diffs), s.alpha)
        rows.append((scorer, len(cases), base_mean, cand_mean, result, note, tuple(sorted(left_out))))
    adjusted = holm_adjust([row[4].p_value for row in rows]) if s.adjust else [row[4].p_value for row in rows]
    scorers = []
    for (scorer, n, base_mean, cand_mean, result, note, left), p_adj in zip(rows, adjusted, strict=True):
        verdict = _verdict(
            result.mean_diff, result.ci_low, result.ci_high, p_adj, scorer not in s.lower_is_better, s
        )
        scorers.append(
            ScorerComparison(
                scorer=scorer,
                n_cases=n,
                baseline_mean=base_mean,
                candidate_mean=cand_mean,
                mean_diff=result.mean_diff,
                ci_low=result.ci_low,
                ci_high=result.ci_high,
                p_value=result.p_value,
                p_adjusted=p_adj,
                method=result.method,
                verdict=verdict,
                note=note,
                errored_cases=left,
            )
        )
    return Comparison(
        baseline=baseline_name,
        candidate=candidate_name,
        scorers=tuple(scorers),
        settings=s,
        only_in_baseline=tuple(sorted(only_base)),
        only_in_candidate=tuple(sorted(only_cand)),
        unscored=unscored,
    )


def _power_note(n: int, alpha: float) -> str:
    """Say so when there are too few paired cases for any result to reach significance."""
    if n == 0:
        return "no case is scored in both runs"
    if 2.0 / 2**n >= alpha:
        smallest = next(k for k in range(1, 64) if 2.0 / 2**k < alpha)
        return f"only {n} paired cases: no change can be called real with fewer than {smallest}"
    return ""


def compare(
    baseline: EvalReport,
    candidate: EvalReport,
    *,
    settings: CompareSettings | None = None,
    lower_is_better: Collection[str] = (),
) -> Comparison:
    """Compare two eval reports, per scorer, over the cases they share. See the module docstring."""
    s = settings or CompareSettings()
    if lower_is_better:
        s = replace(s, lower_is_better=s.lower_is_better | frozenset(lower_is_better))
    base_scores, cand_scores = baseline.per_case_scores(), candidate.per_case_scores()
    return compare_scores(
        base_scores,
        cand_scores,
        baseline_name=_label(baseline),
        candidate_name=_label(candidate),
        settings=s,
        errored=_errored(baseline, candidate, {*base_scores, *cand_scores}),
    )


def _errored(baseline: EvalReport, candidate: EvalReport, names: Collection[str]) -> dict[str, set[str]]:
    """Outcome name → the cases its scorer could not judge in either report. A scorer's outcomes
    are named after it (``judge``, ``judge.score``, ``judge.<axis>``), so an errored scorer takes
    the cases out of each of them."""
    unjudged: dict[str, set[str]] = {}
    for report in (baseline, candidate):
        for scorer, cases in report.unjudged().items():
            unjudged.setdefault(scorer, set()).update(cases)
    out: dict[str, set[str]] = {}
    for name in names:
        for scorer, cases in unjudged.items():
            if name == scorer or name.startswith(scorer + "."):
                out.setdefault(name, set()).update(cases)
    return out


def _label(report: EvalReport) -> str:
    """A report's name for the table title: its eval name and target."""
    target = getattr(report, "target", "")
    return f"{report.name} ({target})" if target else report.name
