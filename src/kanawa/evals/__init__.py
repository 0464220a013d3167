"""Evals: datasets of cases, scorers, a runner where every case is a kanawa run, and reports.

``Dataset``/``Case`` hold what to run (YAML/JSON files with a JSON Schema, Python, recorded traces or
a served agent's history); scorers say how each run did (assertions and scores kept apart, each with
a reason); ``Eval`` runs a dataset against an agent in-process or over HTTP with a concurrency limit,
repeats, timeouts and a budget; ``EvalReport`` is the result as JSON, Markdown, HTML or a rich table.

Names load on first use, so ``import kanawa.evals`` costs nothing until one is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Case": "kanawa.evals.cases",
    "Dataset": "kanawa.evals.cases",
    "DatasetFileError": "kanawa.evals.cases",
    "ScorerSpec": "kanawa.evals.cases",
    "CompareSettings": "kanawa.evals.compare",
    "Comparison": "kanawa.evals.compare",
    "ScorerComparison": "kanawa.evals.compare",
    "Verdict": "kanawa.evals.compare",
    "compare": "kanawa.evals.compare",
    "Assertion": "kanawa.evals.scoring",
    "NoVerdictError": "kanawa.evals.scoring",
    "Outcome": "kanawa.evals.scoring",
    "Score": "kanawa.evals.scoring",
    "ScoreContext": "kanawa.evals.scoring",
    "Scorer": "kanawa.evals.scoring",
    "register_scorer": "kanawa.evals.scoring",
    "CaseResult": "kanawa.evals.report",
    "EvalReport": "kanawa.evals.report",
    "ReportFileError": "kanawa.evals.report",
    "Contains": "kanawa.evals.scorers",
    "Equals": "kanawa.evals.scorers",
    "EqualsExpected": "kanawa.evals.scorers",
    "FunctionScorer": "kanawa.evals.scorers",
    "MatchesSchema": "kanawa.evals.scorers",
    "MaxCost": "kanawa.evals.scorers",
    "MaxLatency": "kanawa.evals.scorers",
    "MaxTokens": "kanawa.evals.scorers",
    "NoError": "kanawa.evals.scorers",
    "NotContains": "kanawa.evals.scorers",
    "NumericTolerance": "kanawa.evals.scorers",
    "Regex": "kanawa.evals.scorers",
    "ToolTrajectory": "kanawa.evals.scorers",
    "scorer": "kanawa.evals.scorers",
    "Eval": "kanawa.evals.runner",
    "run_eval": "kanawa.evals.runner",
    "arun_eval": "kanawa.evals.runner",
    "AgentTarget": "kanawa.evals.targets",
    "FunctionTarget": "kanawa.evals.targets",
    "ServedTarget": "kanawa.evals.targets",
    "RunOutput": "kanawa.evals.targets",
    "rich_report": "kanawa.evals.render",
    "to_html": "kanawa.evals.render",
    "to_markdown": "kanawa.evals.render",
    "write_report": "kanawa.evals.render",
}

if TYPE_CHECKING:
    from kanawa.evals.cases import Case, Dataset, DatasetFileError, ScorerSpec
    from kanawa.evals.compare import CompareSettings, Comparison, ScorerComparison, Verdict, compare
    from kanawa.evals.render import rich_report, to_html, to_markdown, write_report
    from kanawa.evals.report import CaseResult, EvalReport, ReportFileError
    from kanawa.evals.runner import Eval, arun_eval, run_eval
    from kanawa.evals.scorers import (
        Contains,
        Equals,
        EqualsExpected,
        FunctionScorer,
        MatchesSchema,
        MaxCost,
        MaxLatency,
        MaxTokens,
        NoError,
        NotContains,
        NumericTolerance,
        Regex,
        ToolTrajectory,
        scorer,
    )
    from kanawa.evals.scoring import (
        Assertion,
        NoVerdictError,
        Outcome,
        Score,
        ScoreContext,
        Scorer,
        register_scorer,
    )
    from kanawa.evals.targets import AgentTarget, FunctionTarget, RunOutput, ServedTarget

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "AgentTarget",
    "Assertion",
    "Case",
    "CaseResult",
    "CompareSettings",
    "Comparison",
    "Contains",
    "Dataset",
    "DatasetFileError",
    "Equals",
    "EqualsExpected",
    "Eval",
    "EvalReport",
    "FunctionScorer",
    "FunctionTarget",
    "MatchesSchema",
    "MaxCost",
    "MaxLatency",
    "MaxTokens",
    "NoError",
    "NoVerdictError",
    "NotContains",
    "NumericTolerance",
    "Outcome",
    "Regex",
    "ReportFileError",
    "RunOutput",
    "Score",
    "ScoreContext",
    "Scorer",
    "ScorerComparison",
    "ScorerSpec",
    "ServedTarget",
    "ToolTrajectory",
    "Verdict",
    "arun_eval",
    "compare",
    "register_scorer",
    "rich_report",
    "run_eval",
    "scorer",
    "to_html",
    "to_markdown",
    "write_report",
]
