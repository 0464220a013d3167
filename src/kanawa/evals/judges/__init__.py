"""LLM judges for evals: a rubric judge, a position-swapped pairwise judge and SmartAO's essay rubric.

Each is a scorer (``name`` + ``ascore``) whose model runs as a kanawa Agent with retries, an optional
budget, a verdict cache and a cost ledger (:mod:`.core`), and whose judged text is fenced so it
cannot instruct the judge (:mod:`.guard`).
"""

from __future__ import annotations

from kanawa.evals.judges.core import (
    JudgeBudgetExceededError,
    JudgeCache,
    JudgeError,
    JudgeLedger,
    judge_cost_usd,
)
from kanawa.evals.judges.llm_judge import JudgeVerdict, LLMJudge
from kanawa.evals.judges.pairwise import PairwiseChoice, PairwiseJudge
from kanawa.evals.judges.smartao import SmartAOJudge

__all__ = [
    "JudgeBudgetExceededError",
    "JudgeCache",
    "JudgeError",
    "JudgeLedger",
    "JudgeVerdict",
    "LLMJudge",
    "PairwiseChoice",
    "PairwiseJudge",
    "SmartAOJudge",
    "judge_cost_usd",
]
