"""Grading a Generator answer with a dataset's scorers, and the sealed examiner of the held-out split.

:class:`Grader` runs one case: the Generator answers the case's inputs (as a query string), the
answer becomes a :class:`~kanawa.evals.ScoreContext`, and every scorer of the dataset and of the case
gives its outcomes. A case *passes* when every assertion passes and every score reaches
``pass_threshold``; its *score* is the mean of its outcomes (an assertion counts 1 or 0). The
reasons of the outcomes that failed are the case's *feedback* — what the Reflector reads.

:class:`HeldOutExaminer` is the only code that reads held-out labels. It grades each held-out case
the same way and returns a :class:`~kanawa.apps.ace.learning.report.SplitScore` stripped of
feedback: numbers and the model's own answers. Nothing it returns can carry an expected output or a
scorer's reason back into the Reflector, the Curator or the playbook.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from kanawa.apps.ace.learning.metering import MeteredModel, Spend
from kanawa.apps.ace.learning.report import CaseScore, SplitScore
from kanawa.apps.ace.trajectory import Trajectory
from kanawa.evals.cases import Case, Dataset, ScorerSpec
from kanawa.evals.report import CaseResult, EvalReport
from kanawa.evals.scoring import Assertion, Outcome, ScoreContext, Scorer, as_outcomes, outcome_value
from kanawa.loop.options import RunOptions
from kanawa.trace.memory import InMemoryTraceSink
from kanawa.types import JsonValue

PASSED = "every scorer passed"
"""The feedback of a case that passed (what the Reflector reads with ``learn_from_passes``)."""

Generate = Callable[[str, RunOptions], Awaitable[Trajectory]]
"""The Generator on one task; the options carry the case's trace sink."""
QueryOf = Callable[[Case[Any, Any]], str]

_QUERY_KEYS = ("question", "query", "task", "input", "prompt")


def default_query(case: Case[Any, Any]) -> str:
    """The task text of a case: its inputs when they are a string, else a ``question`` / ``query`` /
    ``task`` / ``input`` / ``prompt`` field, else the inputs as JSON."""
    inputs = case.inputs
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, BaseModel):
        inputs = inputs.model_dump(mode="json")
    if isinstance(inputs, dict):
        for key in _QUERY_KEYS:
            value = inputs.get(key)
            if isinstance(value, str):
                return value
    return json.dumps(inputs, ensure_ascii=False, default=str)


def coerce_output(answer: str, expected: Any) -> Any:
    """The Generator answers in text; a case whose expected output is not text (a number, a list)
    is scored against the answer read as JSON when it reads, else against the text."""
    if expected is None or isinstance(expected, str):
        return answer
    try:
        return json.loads(answer)
    except ValueError:
        return answer


def label_text(expected: Any) -> str | None:
    """A training case's expected output as the Reflector's ground truth."""
    if expected is None:
        return None
    if isinstance(expected, str):
        return expected
    if isinstance(expected, BaseModel):
        return expected.model_dump_json()
    return json.dumps(expected, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Graded:
    """One case graded with full detail (training cases only leave the examiner like this)."""

    case: Case[Any, Any]
    trajectory: Trajectory
    outcomes: tuple[Outcome, ...]
    score: float
    passed: bool
    spend: Spend
    duration_ms: float
    trace: list[dict[str, JsonValue]] | None = None
    """The Generator's run as trace records (the evals HTML drill-down shows its timeline)."""

    @property
    def feedback(self) -> str:
        """The failed outcomes' reasons, one per line (``name: reason``); :data:`PASSED` for a pass."""
        if self.passed:
            return PASSED
        lines = [f"{o.name}: {o.reason}" for o in self.outcomes if not _passes(o, 1.0)]
        if self.trajectory.status == "failure":
            lines.append(f"the attempt failed: {self.trajectory.error_message}")
        return "\n".join(lines)

    def as_case_result(self) -> CaseResult:
        """This grading as a :class:`kanawa.evals.CaseResult` (for an :class:`~kanawa.evals.EvalReport`)."""
        trajectory = self.trajectory
        return CaseResult(
            case=self.case.name,
            repeat=0,
            output=coerce_output(trajectory.generated_answer, self.case.expected_output),
            text=trajectory.generated_answer,
            outcomes=list(self.outcomes),
            usage=self.spend.usage,
            cost_usd=self.spend.cost_usd,
            duration_ms=self.duration_ms,
            error=trajectory.error_message if trajectory.status == "failure" else None,
            run_id=_run_id(self.trace),
            trace=self.trace,
        )

    def as_score(self, *, with_feedback: bool) -> CaseScore:
        return CaseScore(
            name=self.case.name,
            score=self.score,
            passed=self.passed,
            output=self.trajectory.generated_answer,
            error=self.trajectory.error_message,
            feedback=self.feedback if with_feedback and not self.passed else None,
            used_bullet_ids=list(self.trajectory.used_bullet_ids),
            by_scorer=self.by_scorer,
        )

    @property
    def by_scorer(self) -> dict[str, float]:
        """Each scorer's mean value on this case (a scorer may give several outcomes)."""
        values: dict[str, list[float]] = {}
        for outcome in self.outcomes:
            values.setdefault(outcome.name, []).append(outcome_value(outcome))
        return {name: sum(v) / len(v) for name, v in values.items()}


def _run_id(trace: list[dict[str, JsonValue]] | None) -> str | None:
    for record in trace or ():
        value = record.get("run_id")
        if isinstance(value, str):
            return value
    return None


def _passes(outcome: Outcome, threshold: float) -> bool:
    if isinstance(outcome, Assertion):
        return outcome.passed
    return outcome.value >= threshold


class Grader:
    """Answers and scores one case (see the module docstring).

    Args:
        dataset: whose dataset-level scorers apply to every case.
        pass_threshold: the least value a :class:`~kanawa.evals.Score` needs for its case to pass.
        query_of: the task text of a case (default :func:`default_query`).
    """

    def __init__(
        self,
        dataset: Dataset[Any, Any],
        *,
        pass_threshold: float = 1.0,
        query_of: QueryOf | None = None,
    ) -> None:
        if not 0.0 <= pass_threshold <= 1.0:
            raise ValueError("pass_threshold must be between 0 and 1")
        self.dataset_scorers: list[Scorer] = resolve_scorers(dataset.scorers)
        self.pass_threshold = pass_threshold
        self.query_of = query_of or default_query
        if not self.dataset_scorers and not any(case.scorers for case in dataset.cases):
            raise ValueError(f"dataset {dataset.name!r} has no scorers: nothing can tell a failure")

    async def agrade(self, case: Case[Any, Any], generate: Generate) -> Graded:
        started = time.perf_counter()
        sink = InMemoryTraceSink()
        with MeteredModel.case() as spend:
            trajectory = await generate(self.query_of(case), RunOptions(trace_sinks=(sink,)))
        duration_ms = (time.perf_counter() - started) * 1000.0
        answer = trajectory.generated_answer
        error = trajectory.error_message if trajectory.status == "failure" else None
        context = ScoreContext(
            case=case,
            output=coerce_output(answer, case.expected_output),
            text=answer,
            events=(),
            usage=spend.usage,
            cost_usd=spend.cost_usd,
            duration_ms=duration_ms,
            run_id=None,
            error=error,
        )
        outcomes: list[Outcome] = []
        for scorer in [*self.dataset_scorers, *resolve_scorers(case.scorers)]:
            outcomes.extend(await _run_scorer(scorer, context))
        if error is not None:
            outcomes.append(Assertion(name="generator", passed=False, reason=error))
        score = sum(outcome_value(o) for o in outcomes) / len(outcomes) if outcomes else 0.0
        passed = bool(outcomes) and all(_passes(o, self.pass_threshold) for o in outcomes)
        return Graded(
            case, trajectory, tuple(outcomes), score, passed, spend.copy(), duration_ms, sink.records()
        )


async def _run_scorer(scorer: Scorer, context: ScoreContext) -> list[Outcome]:
    """A scorer's outcomes; a scorer that raises is a failed assertion naming the error (one bad
    scorer must not end a learning run, and a crash is not a pass)."""
    name = str(getattr(scorer, "name", type(scorer).__name__))
    try:
        return as_outcomes(await scorer.ascore(context))
    except Exception as exc:
        return [Assertion(name=name, passed=False, reason=f"scorer error: {type(exc).__name__}: {exc}")]


def resolve_scorers(specs: Sequence[ScorerSpec | Scorer]) -> list[Scorer]:
    """Scorer objects from a dataset's or case's scorer list (specs are built, objects kept)."""
    return [spec.build() if isinstance(spec, ScorerSpec) else spec for spec in specs]


def summarise(
    name: Literal["train", "held_out"], scores: Sequence[CaseScore], graded: Sequence[Graded]
) -> SplitScore:
    """A split's numbers from its cases (per-scorer means over the outcomes that scorer gave)."""
    by_scorer: dict[str, list[float]] = {}
    for item in graded:
        for outcome in item.outcomes:
            by_scorer.setdefault(outcome.name, []).append(outcome_value(outcome))
    count = len(scores)
    return SplitScore(
        split=name,
        cases=list(scores),
        mean=sum(s.score for s in scores) / count if count else 0.0,
        pass_rate=sum(1 for s in scores if s.passed) / count if count else 0.0,
        by_scorer={key: sum(values) / len(values) for key, values in sorted(by_scorer.items())},
    )


async def grade_all(
    grader: Grader,
    cases: Sequence[Case[Any, Any]],
    generate: Generate,
    *,
    concurrency: int,
    on_done: Callable[[], None] | None = None,
) -> list[Graded]:
    """Grade ``cases`` at most ``concurrency`` at a time (the playbook is only read meanwhile);
    ``on_done`` is told (nothing more) each time a case is finished, for progress bars."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: Case[Any, Any]) -> Graded:
        async with gate:
            graded = await grader.agrade(case, generate)
        if on_done is not None:
            on_done()
        return graded

    return list(await asyncio.gather(*(one(case) for case in cases)))


def eval_report(name: str, graded: Sequence[Graded], *, started: datetime) -> EvalReport:
    """A split's gradings as an :class:`~kanawa.evals.EvalReport` (``kanawa eval compare`` reads two
    of these: the held-out split before and after learning)."""
    return EvalReport(
        name=name,
        target="ACE Generator with the playbook",
        started_at=started,
        results=[g.as_case_result() for g in graded],
        finished_at=datetime.now(UTC),
    )


def save_report(report: EvalReport, path: Path) -> None:
    """``path`` (JSON, for ``kanawa eval compare``) and the evals HTML page beside it (per-case
    outcomes and reasons, no script)."""
    from kanawa.evals.render import to_html

    path.parent.mkdir(parents=True, exist_ok=True)
    report.save(path)
    path.with_suffix(".html").write_text(to_html(report), encoding="utf-8")


class HeldOutExaminer:
    """Scores the held-out split and answers with numbers only (see the module docstring)."""

    __slots__ = ("_cases", "_concurrency", "_grader", "_reports_dir")

    def __init__(
        self,
        cases: Sequence[Case[Any, Any]],
        dataset: Dataset[Any, Any],
        *,
        grader: Grader,
        concurrency: int = 4,
        reports_dir: Path | None = None,
    ) -> None:
        del dataset  # the grader already holds the dataset's scorers
        self._cases = tuple(cases)
        self._grader = grader
        self._concurrency = concurrency
        self._reports_dir = reports_dir

    async def aexamine(
        self, generate: Generate, *, epoch: int, on_done: Callable[[], None] | None = None
    ) -> SplitScore:
        """Score every held-out case. With ``reports_dir``, the full results (outcomes and their
        reasons) go straight to ``held-out-epoch-<epoch>.json`` there, for people and ``kanawa eval
        compare`` — never back to the caller."""
        started = datetime.now(UTC)
        graded = await grade_all(
            self._grader, self._cases, generate, concurrency=self._concurrency, on_done=on_done
        )
        if self._reports_dir is not None:
            report = eval_report(f"held-out, epoch {epoch}", graded, started=started)
            save_report(report, self._reports_dir / f"held-out-epoch-{epoch}.json")
        return summarise("held_out", [g.as_score(with_feedback=False) for g in graded], graded)


__all__ = [
    "PASSED",
    "Graded",
    "Grader",
    "HeldOutExaminer",
    "coerce_output",
    "default_query",
    "eval_report",
    "grade_all",
    "label_text",
    "resolve_scorers",
    "summarise",
]
