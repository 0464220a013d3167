"""SmartAO: essay coaching for Japanese AO (総合型選抜) admissions — seed 002 §1 (Rubric 評価・大量パッチ・
コスト制御), §4 and App. A–C; issue 12.

The story of one coaching run: a student's 志望理由書 or 小論文 and the target faculty's admission policy
go to :class:`Coordinator`, which routes them (``RuleRouter`` / ``LLMRouter``) to :class:`GuardAgent`
(plagiarism: 0.28–0.4 warn, > 0.4 block), :class:`StyleAgent` (textlint in a warm Node sidecar, Sudachi
rules without Node), :class:`DraftAgent` (deepening that keeps every heading) and :class:`RefAgent`
(references from long-term memory), merges Style's and Draft's patches into one :class:`PatchJSON`
(``merge_patches``), and hands off to :class:`EvalAgent` for the seven-axis rubric (cached; lessons
from ``apply_reflexion``). Without a model every agent runs the offline demo model, whose prose is
labelled as demo output while the findings are the tools' own.

Everything is loaded on first use: ``import kanawa.apps.smartao`` imports nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ChangeOp": "kanawa.apps.smartao.patch",
    "Change": "kanawa.apps.smartao.patch",
    "PatchJSON": "kanawa.apps.smartao.patch",
    "merge_patches": "kanawa.apps.smartao.patch",
    "patch_from_issues": "kanawa.apps.smartao.issues",
    "StyleIssue": "kanawa.apps.smartao.issues",
    "Coordinator": "kanawa.apps.smartao.coordinator",
    "CoachingReport": "kanawa.apps.smartao.coordinator",
    "DraftAgent": "kanawa.apps.smartao.agents",
    "StyleAgent": "kanawa.apps.smartao.agents",
    "RefAgent": "kanawa.apps.smartao.agents",
    "GuardAgent": "kanawa.apps.smartao.agents",
    "EvalAgent": "kanawa.apps.smartao.agents",
    "PlagiarismIndex": "kanawa.apps.smartao.plagiarism",
    "SourceDocument": "kanawa.apps.smartao.plagiarism",
    "Rubric": "kanawa.apps.smartao.rubric",
    "EssayRequest": "kanawa.apps.smartao.session",
    "SmartAOResources": "kanawa.apps.smartao.session",
    "sample_resources": "kanawa.apps.smartao.session",
    "sample_text": "kanawa.apps.smartao.session",
    "TextlintSidecar": "kanawa.apps.smartao.textlint",
    "EvalStore": "kanawa.apps.smartao.reflexion",
    "apply_reflexion": "kanawa.apps.smartao.reflexion",
}

if TYPE_CHECKING:
    from kanawa.apps.smartao.agents import DraftAgent, EvalAgent, GuardAgent, RefAgent, StyleAgent
    from kanawa.apps.smartao.coordinator import CoachingReport, Coordinator
    from kanawa.apps.smartao.issues import StyleIssue, patch_from_issues
    from kanawa.apps.smartao.patch import Change, ChangeOp, PatchJSON, merge_patches
    from kanawa.apps.smartao.plagiarism import PlagiarismIndex, SourceDocument
    from kanawa.apps.smartao.reflexion import EvalStore, apply_reflexion
    from kanawa.apps.smartao.rubric import Rubric
    from kanawa.apps.smartao.session import EssayRequest, SmartAOResources, sample_resources, sample_text
    from kanawa.apps.smartao.textlint import TextlintSidecar

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "Change",
    "ChangeOp",
    "CoachingReport",
    "Coordinator",
    "DraftAgent",
    "EssayRequest",
    "EvalAgent",
    "EvalStore",
    "GuardAgent",
    "PatchJSON",
    "PlagiarismIndex",
    "RefAgent",
    "Rubric",
    "SmartAOResources",
    "SourceDocument",
    "StyleAgent",
    "StyleIssue",
    "TextlintSidecar",
    "apply_reflexion",
    "merge_patches",
    "patch_from_issues",
    "sample_resources",
    "sample_text",
]
