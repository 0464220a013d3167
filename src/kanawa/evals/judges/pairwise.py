"""``PairwiseJudge``: is this answer better than a reference answer? Asked twice, in both orders.

Models favour a position (often the first answer shown). The judge therefore asks once with the
answer as A and the reference as B, once swapped, and counts a win only when both orders agree:

- both orders prefer the answer → score 1.0; one prefers it and the other calls a tie → 0.75;
- a tie both times, or the orders disagree (position bias: the reason says so) → 0.5;
- symmetric below 0.5 for the reference.

The outcomes are an :class:`~kanawa.evals.scoring.Assertion` named ``name`` ("not worse than the
reference": score ≥ 0.5) and a :class:`~kanawa.evals.scoring.Score` ``name.score``. The reference is
the case's expected output, a baseline :class:`~kanawa.evals.report.EvalReport`'s answer to the same
case, a mapping of case name to text, or a function of the score context.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from kanawa.evals.judges.core import JudgeBase, JudgeCache, JudgeRunner
from kanawa.evals.judges.guard import fence, guard_rules
from kanawa.evals.judges.llm_judge import _as_text, answer_text
from kanawa.evals.scoring import Assertion, Outcome, Score, ScoreContext, register_scorer
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.retry import RetryPolicy
from kanawa.llm.settings import ModelSettings

if TYPE_CHECKING:
    from kanawa.evals.report import EvalReport

__all__ = ["PairwiseChoice", "PairwiseJudge"]


class PairwiseChoice(BaseModel):
    """The judge's answer for one order: which answer meets the criteria better, and why."""

    reason: str = Field(description="Why, citing the criteria.")
    winner: Literal["A", "B", "tie"] = Field(description="The better answer, or tie when neither is.")


_INSTRUCTIONS = (
    "You compare two answers to the same task and say which one better meets the criteria below. "
    "The order in which they are shown means nothing. Reply with JSON: reason, then winner "
    '("A", "B" or "tie").\n\nCriteria:\n{criteria}'
)

Reference = Literal["expected"] | Mapping[str, str] | Callable[[ScoreContext], "str | None"]


def _vote(choice: PairwiseChoice, answer_is: Literal["A", "B"]) -> int:
    """+1 when the answer won this order, -1 when the reference did, 0 for a tie."""
    if choice.winner == "tie":
        return 0
    return 1 if choice.winner == answer_is else -1


@register_scorer("pairwise_judge")
class PairwiseJudge(JudgeBase):
    """Compares each answer with a reference answer in both orders (see the module docstring)."""

    def __init__(
        self,
        criteria: str,
        *,
        model: str | LLMAdapter,
        name: str = "pairwise",
        reference: Reference | EvalReport = "expected",
        retry_policy: RetryPolicy | None = None,
        settings: ModelSettings | None = None,
        max_cost_usd: float | None = None,
        max_tokens: int | None = None,
        max_requests: int | None = None,
        cache: JudgeCache | None = None,
        cache_path: str | os.PathLike[str] | None = None,
    ) -> None:
        if not criteria.strip():
            raise ValueError("PairwiseJudge needs criteria")
        self._name = name
        self._reference = _reference_function(reference)
        self.runner = JudgeRunner(
            name=name,
            instructions=_INSTRUCTIONS.format(criteria=criteria),
            verdict_type=PairwiseChoice,
            model=model,
            retry_policy=retry_policy,
            settings=settings,
            max_cost_usd=max_cost_usd,
            max_tokens=max_tokens,
            max_requests=max_requests,
            cache=cache if cache is not None else JudgeCache(path=cache_path),
        )

    def prompt(self, task: str, first: str, second: str) -> tuple[str, str]:
        """The user message with the task and answers A and B fenced, and the fencing rules."""
        fences = (fence("INPUT", task), fence("A", first), fence("B", second))
        body = "\n\n".join(f"{f.label}:\n{f.block}" for f in fences)
        return f"{body}\n\nWhich answer, A or B, better meets the criteria?", guard_rules(fences)

    async def ascore(self, ctx: ScoreContext) -> list[Outcome]:
        if ctx.error is not None:
            reason = f"not judged: the run failed ({ctx.error})"
            return [Assertion(self._name, False, reason), Score(f"{self._name}.score", 0.0, reason)]
        reference = self._reference(ctx)
        if reference is None:
            return []  # nothing to compare with: no outcome rather than an invented one
        task = _as_text(ctx.case.inputs)
        answer = answer_text(ctx)
        prompt, rules = self.prompt(task, answer, reference)
        first = await self.runner.ajudge(prompt, extra_instructions=rules)
        prompt, rules = self.prompt(task, reference, answer)
        second = await self.runner.ajudge(prompt, extra_instructions=rules)
        votes = (_vote(first, "A"), _vote(second, "B"))
        total = sum(votes)
        score = (total + 2) / 4
        said = {1: "answer", -1: "reference", 0: "tie"}
        reason = (
            f"answer shown first: {said[votes[0]]} ({first.reason}); "
            f"answer shown second: {said[votes[1]]} ({second.reason})."
        )
        if votes in ((1, -1), (-1, 1)):
            reason += " Position bias: the two orders disagree, so neither wins."
        return [
            Assertion(self._name, score >= 0.5, reason),
            Score(f"{self._name}.score", score, reason),
        ]


def _reference_function(reference: Reference | EvalReport) -> Callable[[ScoreContext], str | None]:
    """One way to find the reference answer for a case, whatever form it was given in."""
    if reference == "expected":
        return lambda ctx: None if ctx.case.expected_output is None else _as_text(ctx.case.expected_output)
    if callable(reference):
        return reference
    if isinstance(reference, Mapping):
        table = dict(reference)
        return lambda ctx: table.get(ctx.case.name)
    texts: dict[str, str] = {}
    for result in sorted(reference.results, key=lambda r: r.repeat):
        if result.error is None:
            texts.setdefault(result.case, result.text or _as_text(result.output))
    return lambda ctx: texts.get(ctx.case.name)
